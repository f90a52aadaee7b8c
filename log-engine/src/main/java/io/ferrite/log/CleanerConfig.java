package io.ferrite.log;

import io.ferrite.log.clean.CleanerThrottle;
import io.ferrite.log.clean.LogCompaction;
import io.ferrite.log.clean.OffsetMap;

/**
 * How the log cleaner runs (Kafka's {@code CleanerConfig}, broker properties in comments; defaults
 * Kafka 4.4's). The topic side ({@code cleanup.policy}, {@code min.cleanable.dirty.ratio},
 * {@code min/max.compaction.lag.ms}, {@code delete.retention.ms}) is in {@link LogConfig}.
 *
 * @param enable log.cleaner.enable: false starts no cleaner thread
 * @param threads log.cleaner.threads (0: none, as Kafka, which warns)
 * @param dedupeBufferSize log.cleaner.dedupe.buffer.size: the offset maps of all threads together
 * @param dedupeBufferLoadFactor log.cleaner.io.buffer.load.factor: how full an offset map may get
 * @param ioBufferSize log.cleaner.io.buffer.size (Ferrite reads and writes mapped segments: accepted, not used)
 * @param maxIoBytesPerSecond log.cleaner.io.max.bytes.per.second: the threads' shared I/O budget
 * @param backoffMs log.cleaner.backoff.ms: a thread's wait when no log needs cleaning
 * @param compaction makes one thread's {@link LogCompaction}; null: no implementation, no cleaner thread
 */
public record CleanerConfig(boolean enable, int threads, long dedupeBufferSize, double dedupeBufferLoadFactor, int ioBufferSize,
    double maxIoBytesPerSecond, long backoffMs, CompactionFactory compaction)
{
    public static final boolean DEFAULT_ENABLE = true;
    public static final int DEFAULT_THREADS = 1;
    public static final int DEFAULT_IO_BUFFER_SIZE = 512 * 1024;
    public static final double DEFAULT_MAX_IO_BYTES_PER_SECOND = Double.MAX_VALUE;
    public static final long DEFAULT_BACKOFF_MS = 15_000L;

    /** Makes a cleaner thread's clean, over the thread's own offset map and the threads' shared throttle. */
    @FunctionalInterface
    public interface CompactionFactory
    {
        LogCompaction create(OffsetMap map, CleanerThrottle throttle);
    }

    /**
     * The log engine's {@link LogCompaction}, which every default config runs (the broker's and the embedded
     * API's): {@link io.ferrite.log.clean.LogCompactor}, reading batches up to the default
     * {@code max.decompressed.message.bytes} when it decompresses them.
     */
    private static final CompactionFactory IMPLEMENTATION =
        (map, throttle) -> new io.ferrite.log.clean.LogCompactor(map, throttle, LogConfig.defaults().maxDecompressedMessageBytes);

    /** Kafka's defaults, with the log engine's compaction. */
    public static CleanerConfig defaults()
    {
        return new CleanerConfig(DEFAULT_ENABLE, DEFAULT_THREADS, OffsetMap.DEFAULT_DEDUPE_BUFFER_SIZE, OffsetMap.DEFAULT_LOAD_FACTOR,
            DEFAULT_IO_BUFFER_SIZE, DEFAULT_MAX_IO_BYTES_PER_SECOND, DEFAULT_BACKOFF_MS, IMPLEMENTATION);
    }

    /** This config's compaction with other settings. */
    public CleanerConfig with(final boolean newEnable, final int newThreads, final long newDedupeBufferSize, final double newLoadFactor,
        final int newIoBufferSize, final double newMaxIoBytesPerSecond, final long newBackoffMs)
    {
        return new CleanerConfig(newEnable, newThreads, newDedupeBufferSize, newLoadFactor, newIoBufferSize, newMaxIoBytesPerSecond,
            newBackoffMs, compaction);
    }

    /** This config with cleaner threads on or off ({@code log.cleaner.enable}). */
    public CleanerConfig withEnable(final boolean newEnable)
    {
        return new CleanerConfig(newEnable, threads, dedupeBufferSize, dedupeBufferLoadFactor, ioBufferSize, maxIoBytesPerSecond, backoffMs,
            compaction);
    }

    public CleanerConfig withCompaction(final CompactionFactory factory)
    {
        return new CleanerConfig(enable, threads, dedupeBufferSize, dedupeBufferLoadFactor, ioBufferSize, maxIoBytesPerSecond, backoffMs,
            factory);
    }

    /** Whether cleaner threads start: enabled, at least one thread, and a compaction to run. */
    boolean runs()
    {
        return enable && threads > 0 && compaction != null;
    }
}
