package io.ferrite.perf.wire;

import io.ferrite.wire.message.ProduceRequestDecoder;
import io.ferrite.wire.message.ProduceRequestEncoder;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
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

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * Decode and encode of a Produce request (v11) carrying one batch of 16 x 1 KiB records, the
 * network thread's share of the produce path. Decode walks the whole request (as the broker
 * must before acting on it), wraps the batch and reads the header fields the log needs; encode
 * writes the request around an already-built batch.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class ProduceRequestBenchmark
{
    private static final short VERSION = 11;

    private final ExpandableDirectByteBuffer request = new ExpandableDirectByteBuffer(32 * 1024);
    private final ExpandableDirectByteBuffer records = new ExpandableDirectByteBuffer(32 * 1024);
    private final ExpandableDirectByteBuffer out = new ExpandableDirectByteBuffer(32 * 1024);
    private final UnsafeBuffer topic = new UnsafeBuffer("orders".getBytes(StandardCharsets.US_ASCII));
    private final ProduceRequestEncoder encoder = new ProduceRequestEncoder();
    private final ProduceRequestDecoder decoder = new ProduceRequestDecoder();
    private final RecordBatch batch = new RecordBatch();
    private int requestLength;
    private int batchLength;

    @Setup
    public void setUp()
    {
        final UnsafeBuffer value = new UnsafeBuffer(new byte[1024]);
        final RecordBatchBuilder builder = new RecordBatchBuilder().wrap(records, 0).producer(7L, (short)0, 0);
        for (int i = 0; i < 16; i++)
        {
            builder.appendRecord(1_700_000_000_000L + i, null, 0, -1, value, 0, value.capacity());
        }
        batchLength = builder.build();
        requestLength = encode(request);
    }

    private int encode(final ExpandableDirectByteBuffer into)
    {
        encoder.wrap(into, 0, VERSION).transactionalId((CharSequence)null).acks((short)-1).timeoutMs(30_000);
        encoder.topicData(1).next().name(topic, 0, topic.capacity())
            .partitionData(1).next().index(0).records(records, 0, batchLength);
        return encoder.finish();
    }

    @Benchmark
    public long decode()
    {
        decoder.wrap(request, 0, requestLength, VERSION);
        long sum = decoder.acks();
        for (final ProduceRequestDecoder.TopicProduceData t = decoder.topicData(); t.hasNext(); )
        {
            t.next();
            sum += t.nameLength();
            for (final ProduceRequestDecoder.PartitionProduceData p = t.partitionData(); p.hasNext(); )
            {
                p.next();
                batch.wrap(request, p.recordsOffset());
                sum += p.index() + batch.recordCount() + batch.producerId() + batch.baseSequence() + batch.lastOffsetDelta();
            }
        }
        return sum;
    }

    @Benchmark
    public int encode()
    {
        return encode(out);
    }
}
