package io.ferrite.perf.log;

import io.ferrite.log.AppendResult;
import io.ferrite.log.WriteStrategy;
import io.ferrite.wire.record.RecordBatchDescriptor;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * {@link AppendBenchmark}'s saturation run for a follower: the same batch, as a leader wrote it (base
 * offset and partition leader epoch set), appended through {@code PartitionLog.appendAsFollower} — a CRC
 * check and the copy, no offset assignment, no record walk. With {@code -prof gc} it shows the path
 * allocates nothing. Each op is one batch (a fetch of one batch); the base offset, outside the CRC, is
 * set to the log end before each.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx1g"})
public class FollowerAppendBenchmark
{
    @Param({"MAPPED"})
    public WriteStrategy strategy;

    /** As {@link AppendBenchmark#batchBytes}. */
    @Param({"100", "1024", "16384"})
    public int batchBytes;

    private final AppendBenchmark leader = new AppendBenchmark();

    @Setup(Level.Trial)
    public void setUp() throws IOException
    {
        leader.open(strategy, batchBytes);
        leader.batch.putInt(RecordBatchDescriptor.PARTITION_LEADER_EPOCH_OFFSET, 1, BIG_ENDIAN);
    }

    @Benchmark
    public long appendAsFollower()
    {
        final AppendResult result = leader.result;
        leader.batch.putLong(RecordBatchDescriptor.BASE_OFFSET_OFFSET, leader.log.logEndOffset(), BIG_ENDIAN);
        leader.log.appendAsFollower(leader.batch, 0, leader.length, 1, result);
        if (result.status != AppendResult.OK)
        {
            throw new IllegalStateException(result.toString());
        }
        return result.lastOffset;
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException
    {
        leader.close();
    }
}
