package io.ferrite.perf.log;

import io.ferrite.log.clean.BatchFilter;
import io.ferrite.log.clean.CleanedTransactions;
import io.ferrite.log.clean.CleanerRetention;
import io.ferrite.log.clean.OffsetMap;
import io.ferrite.log.clean.OffsetMapLoader;
import io.ferrite.wire.compress.Codecs;
import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import io.ferrite.wire.record.RecordReader;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.AuxCounters;
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

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The cleaner's work on one dirty log held in memory (no file, no I/O): load the offset map from every batch,
 * then filter every batch into a cleaned copy ({@code io.ferrite.log.clean}). The log is {@code mebibytes} MiB of
 * batches of 10 records of 100 B values, updates to 10 000 keys in random order with 1 in 20 a tombstone, so most
 * batches are rebuilt or dropped. One operation cleans the whole log: MB/s of dirty log cleaned is
 * {@code ops/s x mebibytes x 1.048576}. {@code -prof gc} shows what a clean allocates (nothing, once warm).
 *
 * <p>{@code mapBytes}: the offset map's block. 393 216 (16 384 slots) is just large enough for the keys; 134 217 728 is
 * Kafka's default {@code log.cleaner.dedupe.buffer.size} for one cleaner thread, as the broker makes it (a sparse
 * file's private mapping, here in {@code java.io.tmpdir}): the map the broker's cleaner probes, whose pages stay
 * resident after the first clean (so this shows its cache and TLB misses, not the first clean's page faults).
 *
 * <p>{@link CpuTime}: the benchmark thread's CPU time ({@code ThreadMXBean}) over the measured cleans, and their
 * count, as secondary metrics ({@code cpuNanos}, {@code cleans}, and their ratio {@code cpuMicrosPerClean}, per
 * iteration in the JSON's raw data). On this shared 2-core machine the wall-clock score measures the
 * scheduler as much as the clean (a run's iterations spread 2-3x at load 15-30); the thread's CPU does not wait for a
 * core, so it is the figure to compare between builds there (cache sharing with the other tenants still moves it).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-Xmx1g"})
public class CleanBenchmark
{
    private static final int KEYS = 10_000;

    /** The dirty log's size. */
    @Param("16")
    public int mebibytes;

    /** The batches' codec (rebuilt batches are compressed again with it). */
    @Param({"NONE", "LZ4"})
    public CompressionType compression;

    /** The offset map's bytes: just enough for the keys, or the broker's default for one cleaner thread. */
    @Param({"393216", "134217728"})
    public int mapBytes;

    private UnsafeBuffer log;
    private int logLength;
    private long endOffset;
    private OffsetMap map;
    private OffsetMapLoader loader;
    private CleanerRetention retention;
    private BatchFilter filter;
    private final RecordBatch batch = new RecordBatch();
    private final ExpandableDirectByteBuffer out = new ExpandableDirectByteBuffer(1 << 20);

    @Setup(Level.Trial)
    public void setUp()
    {
        log = new UnsafeBuffer(ByteBuffer.allocateDirect(mebibytes << 20));
        final RecordBatchBuilder builder = new RecordBatchBuilder();
        final UnsafeBuffer key = new UnsafeBuffer(new byte[8]);
        final UnsafeBuffer value = new UnsafeBuffer(new byte[100]);
        final SplittableRandom random = new SplittableRandom(42);
        final ExpandableDirectByteBuffer scratch = new ExpandableDirectByteBuffer(4096);
        long offset = 0;
        while (true)
        {
            builder.wrap(scratch, 0).compression(compression).baseOffset(offset);
            for (int i = 0; i < 10; i++)
            {
                key.putLong(0, random.nextInt(KEYS));
                random.nextBytes(value.byteArray());
                builder.appendRecord(1_700_000_000_000L + offset, key, 0, 8, value, 0, random.nextInt(20) == 0 ? -1 : 100);
                offset++;
            }
            final int length = builder.build();
            if (logLength + length > log.capacity())
            {
                break;
            }
            log.putBytes(logLength, scratch, 0, length);
            logLength += length;
            endOffset = offset;
        }
        // the broker's map is a sparse file's mapping in its first log directory (this JVM's temporary directory here)
        map = new OffsetMap(mapBytes, OffsetMap.DEFAULT_LOAD_FACTOR, Path.of(System.getProperty("java.io.tmpdir")));
        final Codecs loaderCodecs = new Codecs();
        loader = new OffsetMapLoader(map, new CleanedTransactions(new RecordReader(loaderCodecs, 1 << 20)),
            new RecordReader(loaderCodecs, 1 << 20));
        final Codecs codecs = new Codecs();
        retention = new CleanerRetention(loader, new CleanedTransactions(new RecordReader(codecs, 1 << 20)));
        filter = new BatchFilter(codecs, 1 << 20);
    }

    @TearDown(Level.Trial)
    public void tearDown()
    {
        map.close();
    }

    /** The thread's CPU time over each iteration's cleans. */
    @AuxCounters(AuxCounters.Type.EVENTS)
    @State(Scope.Thread)
    public static class CpuTime
    {
        private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

        /** CPU nanoseconds of the benchmark thread in {@link #loadAndClean}. */
        public long cpuNanos;
        /** Cleans measured. */
        public long cleans;

        /** The CPU microseconds per clean of the iteration (JMH reports public accessors as metrics too). */
        public double cpuMicrosPerClean()
        {
            return cleans == 0 ? 0 : cpuNanos / 1e3 / cleans;
        }

        @Setup(Level.Iteration)
        public void reset()
        {
            cpuNanos = 0;
            cleans = 0;
        }

        long now()
        {
            return THREADS.getCurrentThreadCpuTime();
        }
    }

    /** @return the cleaned log's size */
    @Benchmark
    public int loadAndClean(final CpuTime cpu)
    {
        final long start = cpu.now();
        final int written = clean();
        cpu.cpuNanos += cpu.now() - start;
        cpu.cleans++;
        return written;
    }

    private int clean()
    {
        map.clear();
        loader.transactions().clear();
        for (int p = 0; p < logLength; p += batch.sizeInBytes())
        {
            loader.load(batch.wrap(log, p), 0);
        }
        map.updateLatestOffset(endOffset - 1);
        retention.reset(1_800_000_000_000L, 86_400_000L, endOffset);
        int written = 0;
        for (int p = 0; p < logLength; p += batch.sizeInBytes())
        {
            final int n = filter.filter(batch.wrap(log, p), retention);
            out.putBytes(written, filter.output(), 0, n);
            written += n;
        }
        return written;
    }
}
