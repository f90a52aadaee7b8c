package io.ferrite.perf.log;

import io.ferrite.log.AppendResult;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.log.PartitionLog;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Recovery speed: opening a log of 128 MiB of unflushed 1 KiB batches after an unclean stop (no
 * clean-shutdown marker, no recovery point), which scans and checks every batch and rebuilds the
 * indexes. One operation is one recovery of {@code mebibytes}; MB/s = mebibytes / (seconds per operation).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2)
@Measurement(iterations = 5)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx1g"})
public class RecoveryBenchmark
{
    /** Unflushed data to recover (MiB of 1 KiB batches). */
    @org.openjdk.jmh.annotations.Param("128")
    public int mebibytes;

    private Path dir;

    @Setup(Level.Trial)
    public void write() throws IOException
    {
        dir = Files.createTempDirectory("ferrite-recovery-bench");
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("bench", 0, Map.of("message.timestamp.before.max.ms",
                Long.toString(Long.MAX_VALUE)));
            final ExpandableDirectByteBuffer batch = new ExpandableDirectByteBuffer(2048);
            final RecordBatchBuilder builder = new RecordBatchBuilder();
            final UnsafeBuffer value = new UnsafeBuffer(new byte[950]);
            final AppendResult result = new AppendResult();
            for (int i = 0; i < mebibytes * 1024; i++)
            {
                final int length = builder.wrap(batch, 0).appendRecord(System.currentTimeMillis(), null, 0, -1, value, 0, 950).build();
                log.append(batch, 0, length, result);
            }
        }
    }

    @Setup(Level.Invocation)
    public void makeItUnclean() throws IOException
    {
        Files.deleteIfExists(dir.resolve(".kafka_cleanshutdown"));
        Files.deleteIfExists(dir.resolve("recovery-point-offset-checkpoint"));
    }

    @Benchmark
    public long recover() throws IOException
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            return manager.log("bench", 0).logEndOffset();
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException
    {
        try (var files = Files.walk(dir))
        {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
