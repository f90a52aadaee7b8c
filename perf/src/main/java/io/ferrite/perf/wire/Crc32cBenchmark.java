package io.ferrite.perf.wire;

import io.ferrite.wire.record.Crc32c;
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

import java.util.Random;
import java.util.concurrent.TimeUnit;

/** CRC32C over 64 KiB, on the heap and off it (the batch check on every produce). */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class Crc32cBenchmark
{
    private static final int SIZE = 64 * 1024;

    private final Crc32c crc = new Crc32c();
    private final UnsafeBuffer heap = new UnsafeBuffer(new byte[SIZE]);
    private final ExpandableDirectByteBuffer direct = new ExpandableDirectByteBuffer(SIZE);

    @Setup
    public void setUp()
    {
        final byte[] data = new byte[SIZE];
        new Random(42).nextBytes(data);
        heap.putBytes(0, data);
        direct.putBytes(0, data);
    }

    @Benchmark
    public int offHeap64KiB()
    {
        return crc.compute(direct, 0, SIZE);
    }

    @Benchmark
    public int heap64KiB()
    {
        return crc.compute(heap, 0, SIZE);
    }
}
