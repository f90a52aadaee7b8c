package io.ferrite.perf.wire;

import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import io.ferrite.wire.record.RecordReader;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * Iterating the records of an uncompressed batch of 16 x 1 KiB records in place (what the log
 * engine's validation and a consumer do), and building such a batch.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class RecordBatchBenchmark
{
    private final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(32 * 1024);
    private final ExpandableDirectByteBuffer out = new ExpandableDirectByteBuffer(32 * 1024);
    private final UnsafeBuffer key = new UnsafeBuffer(new byte[16]);
    private final UnsafeBuffer value = new UnsafeBuffer(new byte[1024]);
    private final RecordBatchBuilder builder = new RecordBatchBuilder();
    private final RecordBatch batch = new RecordBatch();
    private final RecordReader reader = new RecordReader();

    @Setup
    public void setUp()
    {
        build(buffer);
    }

    private int build(final ExpandableDirectByteBuffer into)
    {
        builder.wrap(into, 0).producer(7L, (short)0, 0);
        for (int i = 0; i < 16; i++)
        {
            builder.appendRecord(1_700_000_000_000L + i, key, 0, key.capacity(), value, 0, value.capacity());
        }
        return builder.build();
    }

    @Benchmark
    public long iterate()
    {
        reader.reset(batch.wrap(buffer, 0));
        long sum = 0;
        while (reader.hasNext())
        {
            final Record r = reader.next();
            sum += r.offset() + r.timestamp() + r.keyOffset() + r.valueLength();
        }
        return sum;
    }

    @Benchmark
    public int build()
    {
        return build(out);
    }
}
