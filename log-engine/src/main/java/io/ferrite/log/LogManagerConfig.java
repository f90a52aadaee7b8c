package io.ferrite.log;

import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.SystemEpochClock;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * How a {@link LogManager} runs: its directories, the default topic configuration, the write
 * strategy and the intervals of its background work (Kafka's broker-level names in comments).
 */
public record LogManagerConfig(
    List<Path> logDirs,
    LogConfig defaultLogConfig,
    WriteStrategy writeStrategy,
    EpochClock clock,
    /* due times of the background work: monotonic, unlike clock */ NanoClock nanoClock,
    /* log.retention.check.interval.ms */ long retentionCheckIntervalMs,
    /* log.flush.offset.checkpoint.interval.ms */ long checkpointIntervalMs,
    /* how often flush.ms deadlines are checked */ long flushCheckIntervalMs,
    DurabilityListener durabilityListener,
    /* producer.id.expiration.ms */ long producerIdExpirationMs,
    /* producer.id.expiration.check.interval.ms */ long producerIdExpirationCheckIntervalMs,
    /* how the scheduler has a log's writer run the expiry; NONE: the writer calls it itself */ WriterTasks writerTasks,
    /* log.cleaner.* */ CleanerConfig cleaner)
{
    /** Kafka's {@code producer.id.expiration.ms} default: a day. */
    public static final long DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000L;
    /** Kafka's {@code producer.id.expiration.check.interval.ms} default: ten minutes. */
    public static final long DEFAULT_PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS = 600_000L;

    /** The write strategy the append-latency benchmark chose (see the module README). */
    public static final WriteStrategy DEFAULT_WRITE_STRATEGY = WriteStrategy.MAPPED;

    public static LogManagerConfig of(final Path logDir)
    {
        return of(List.of(logDir), Map.of());
    }

    /** Defaults (Kafka's intervals), with topic config defaults overridden by {@code logConfigDefaults}. */
    public static LogManagerConfig of(final List<Path> logDirs, final Map<String, String> logConfigDefaults)
    {
        return new LogManagerConfig(logDirs, LogConfig.of(logConfigDefaults), DEFAULT_WRITE_STRATEGY, SystemEpochClock.INSTANCE,
            SystemNanoClock.INSTANCE, 300_000L, 60_000L, 1_000L, DurabilityListener.NONE, DEFAULT_PRODUCER_ID_EXPIRATION_MS,
            DEFAULT_PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS, WriterTasks.NONE, CleanerConfig.defaults());
    }

    public LogManagerConfig withWriteStrategy(final WriteStrategy strategy)
    {
        return new LogManagerConfig(logDirs, defaultLogConfig, strategy, clock, nanoClock, retentionCheckIntervalMs, checkpointIntervalMs,
            flushCheckIntervalMs, durabilityListener, producerIdExpirationMs,
            producerIdExpirationCheckIntervalMs, writerTasks, cleaner);
    }

    /** For tests: one clock stepped by hand for both the wall time and the due times. */
    public LogManagerConfig withClock(final EpochClock newClock)
    {
        return withClocks(newClock, () -> newClock.time() * 1_000_000L);
    }

    public LogManagerConfig withClocks(final EpochClock newClock, final NanoClock newNanoClock)
    {
        return new LogManagerConfig(logDirs, defaultLogConfig, writeStrategy, newClock, newNanoClock, retentionCheckIntervalMs,
            checkpointIntervalMs, flushCheckIntervalMs, durabilityListener, producerIdExpirationMs,
            producerIdExpirationCheckIntervalMs, writerTasks, cleaner);
    }

    public LogManagerConfig withDurabilityListener(final DurabilityListener listener)
    {
        return new LogManagerConfig(logDirs, defaultLogConfig, writeStrategy, clock, nanoClock, retentionCheckIntervalMs,
            checkpointIntervalMs, flushCheckIntervalMs, listener, producerIdExpirationMs,
            producerIdExpirationCheckIntervalMs, writerTasks, cleaner);
    }

    public LogManagerConfig withFlushCheckIntervalMs(final long intervalMs)
    {
        return new LogManagerConfig(logDirs, defaultLogConfig, writeStrategy, clock, nanoClock, retentionCheckIntervalMs,
            checkpointIntervalMs, intervalMs, durabilityListener, producerIdExpirationMs,
            producerIdExpirationCheckIntervalMs, writerTasks, cleaner);
    }

    public LogManagerConfig withRetentionCheckIntervalMs(final long intervalMs)
    {
        return new LogManagerConfig(logDirs, defaultLogConfig, writeStrategy, clock, nanoClock, intervalMs, checkpointIntervalMs,
            flushCheckIntervalMs, durabilityListener, producerIdExpirationMs,
            producerIdExpirationCheckIntervalMs, writerTasks, cleaner);
    }

    /**
     * Producer-id expiry (Kafka's {@code producer.id.expiration.ms} and {@code producer.id.expiration.check.interval.ms}):
     * every check interval each log's writer forgets the producers idle that long with no transaction open
     * ({@link LogTransactions#removeExpiredProducers}), told through {@code tasks} that it is due.
     */
    public LogManagerConfig withProducerIdExpiration(final long expirationMs, final long checkIntervalMs, final WriterTasks tasks)
    {
        return new LogManagerConfig(logDirs, defaultLogConfig, writeStrategy, clock, nanoClock, retentionCheckIntervalMs,
            checkpointIntervalMs, flushCheckIntervalMs, durabilityListener, expirationMs, checkIntervalMs, tasks, cleaner);
    }

    /** The log cleaner's settings and its compaction ({@link CleanerConfig}). */
    public LogManagerConfig withCleaner(final CleanerConfig newCleaner)
    {
        return new LogManagerConfig(logDirs, defaultLogConfig, writeStrategy, clock, nanoClock, retentionCheckIntervalMs,
            checkpointIntervalMs, flushCheckIntervalMs, durabilityListener, producerIdExpirationMs,
            producerIdExpirationCheckIntervalMs, writerTasks, newCleaner);
    }
}
