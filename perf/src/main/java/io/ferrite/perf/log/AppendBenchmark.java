package io.ferrite.perf.log;

import io.ferrite.log.AppendResult;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.log.PartitionLog;
import io.ferrite.log.WriteStrategy;
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
import org.openjdk.jmh.annotations.Param;
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
 * Appends as fast as one thread can (saturation): the throughput ceiling of the append path for
 * both write strategies and three batch sizes, where page allocation in the kernel, not our code,
 * sets the pace. Segments of 64 MiB roll during the run; retention keeps 512 MiB so the disk use
 * stays bounded, deleting on its own thread as in production. For latency at a realistic load see
 * {@link AppendLatencyBenchmark}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx1g"})
public class AppendBenchmark
{
    @Param({"MAPPED", "CHANNEL"})
    public WriteStrategy strategy;

    /** Batch size in bytes: one small record, a typical 1 KiB batch, a full 16 KiB producer batch. */
    @Param({"100", "1024", "16384"})
    public int batchBytes;

    Path dir;
    LogManager manager;
    PartitionLog log;
    final ExpandableDirectByteBuffer batch = new ExpandableDirectByteBuffer(32 * 1024);
    final AppendResult result = new AppendResult();
    int length;

    @Setup(Level.Trial)
    public void setUp() throws IOException
    {
        open(strategy, batchBytes);
    }

    void open(final WriteStrategy strategy, final int batchBytes) throws IOException
    {
        dir = Files.createTempDirectory("ferrite-append-bench");
        manager = LogManager.open(LogManagerConfig.of(java.util.List.of(dir), Map.of()).withWriteStrategy(strategy)
            .withRetentionCheckIntervalMs(500));
        log = manager.createLog("bench", 0, Map.of(
            "segment.bytes", Integer.toString(64 << 20),
            "retention.bytes", Long.toString(512L << 20),
            "message.timestamp.before.max.ms", Long.toString(Long.MAX_VALUE)));
        final int records = Math.max(1, batchBytes / 1024);
        final int valueSize = Math.max(1, (batchBytes - 61) / records - 10);
        final RecordBatchBuilder builder = new RecordBatchBuilder().wrap(batch, 0);
        final UnsafeBuffer value = new UnsafeBuffer(new byte[valueSize]);
        for (int i = 0; i < records; i++)
        {
            builder.appendRecord(System.currentTimeMillis(), null, 0, -1, value, 0, valueSize);
        }
        length = builder.build();
    }

    @Benchmark
    public long append()
    {
        log.append(batch, 0, length, result);
        if (result.status != AppendResult.OK)
        {
            throw new IllegalStateException(result.toString());
        }
        return result.lastOffset;
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException
    {
        close();
    }

    void close() throws IOException
    {
        manager.close();
        try (var files = Files.walk(dir))
        {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
