package io.ferrite.perf.wire;

import io.ferrite.wire.Varints;
import org.agrona.ExpandableDirectByteBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Zig-zag varint decode, per varint, over 1024 values whose sizes are mixed the way record fields
 * mix them (mostly 1-2 bytes: deltas and small lengths; some 3-5 bytes).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class VarintBenchmark
{
    private static final int COUNT = 1024;

    private final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(COUNT * 5);
    private int length;

    @Setup
    public void setUp()
    {
        final Random random = new Random(42);
        int p = 0;
        for (int i = 0; i < COUNT; i++)
        {
            final int bound = random.nextInt(10) < 7 ? 64 : random.nextInt(10) < 7 ? 8192 : Integer.MAX_VALUE;
            p += Varints.putVarint(buffer, p, random.nextInt(bound) - bound / 2);
        }
        length = p;
    }

    @Benchmark
    @OperationsPerInvocation(COUNT)
    public long decode()
    {
        long sum = 0;
        int p = 0;
        for (int i = 0; i < COUNT; i++)
        {
            final long v = Varints.readVarint(buffer, p, length, "v");
            sum += Varints.value(v);
            p += Varints.size(v);
        }
        return sum;
    }
}
