package io.ferrite.perf.log;

import io.ferrite.index.OffsetIndex;
import io.ferrite.log.AppendResult;
import io.ferrite.log.FileRegion;
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
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The read side: an offset-index lookup, and finding the file region of a fetch — for a tailing
 * consumer (the last batches) and for one catching up at a random offset — in a log of 256 MiB of
 * 1 KiB batches over four segments.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx1g"})
public class ReadBenchmark
{
    /** Size of the log read from (MiB of 1 KiB batches). */
    @org.openjdk.jmh.annotations.Param("256")
    public int logMiB;

    private Path dir;
    private LogManager manager;
    private PartitionLog log;
    private OffsetIndex index;
    private final FileRegion region = new FileRegion();
    private final SplittableRandom random = new SplittableRandom(42);
    private long end;

    @Setup(Level.Trial)
    public void setUp() throws IOException
    {
        dir = Files.createTempDirectory("ferrite-read-bench");
        manager = LogManager.open(LogManagerConfig.of(dir));
        log = manager.createLog("bench", 0, Map.of("segment.bytes", Integer.toString(64 << 20),
            "message.timestamp.before.max.ms", Long.toString(Long.MAX_VALUE)));
        final ExpandableDirectByteBuffer batch = new ExpandableDirectByteBuffer(2048);
        final RecordBatchBuilder builder = new RecordBatchBuilder();
        final UnsafeBuffer value = new UnsafeBuffer(new byte[950]);
        final AppendResult result = new AppendResult();
        for (int i = 0; i < logMiB * 1024; i++)
        {
            final int length = builder.wrap(batch, 0).appendRecord(System.currentTimeMillis(), null, 0, -1, value, 0, 950).build();
            log.append(batch, 0, length, result);
        }
        end = log.logEndOffset();
        index = new OffsetIndex(dir.resolve("bench-0").resolve("00000000000000000000.index"), 0, 0, false);
    }

    @Benchmark
    public int indexLookup()
    {
        return index.lookup(random.nextLong(index.lastOffset() + 1));
    }

    @Benchmark
    public long readRegionTail()
    {
        log.read(end - 1 - random.nextInt(16), 1 << 20, end, true, region);
        return region.position + region.length;
    }

    @Benchmark
    public long readRegionRandom()
    {
        log.read(random.nextLong(end), 1 << 20, end, true, region);
        return region.position + region.length;
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException
    {
        index.close();
        manager.close();
        try (var files = Files.walk(dir))
        {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
