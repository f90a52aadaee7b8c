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
    DurabilityListener durabilityListener)
{
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
            SystemNanoClock.INSTANCE, 300_000L, 60_000L, 1_000L, DurabilityListener.NONE);
    }

    public LogManagerConfig withWriteStrategy(final WriteStrategy strategy)
    {
        return new LogManagerConfig(logDirs, defaultLogConfig, strategy, clock, nanoClock, retentionCheckIntervalMs, checkpointIntervalMs,
            flushCheckIntervalMs, durabilityListener);
    }

    /** For tests: one clock stepped by hand for both the wall time and the due times. */
    public LogManagerConfig withClock(final EpochClock newClock)
    {
        return withClocks(newClock, () -> newClock.time() * 1_000_000L);
    }

    public LogManagerConfig withClocks(final EpochClock newClock, final NanoClock newNanoClock)
    {
        return new LogManagerConfig(logDirs, defaultLogConfig, writeStrategy, newClock, newNanoClock, retentionCheckIntervalMs,
            checkpointIntervalMs, flushCheckIntervalMs, durabilityListener);
    }

    public LogManagerConfig withDurabilityListener(final DurabilityListener listener)
    {
        return new LogManagerConfig(logDirs, defaultLogConfig, writeStrategy, clock, nanoClock, retentionCheckIntervalMs,
            checkpointIntervalMs, flushCheckIntervalMs, listener);
    }

    public LogManagerConfig withFlushCheckIntervalMs(final long intervalMs)
    {
        return new LogManagerConfig(logDirs, defaultLogConfig, writeStrategy, clock, nanoClock, retentionCheckIntervalMs,
            checkpointIntervalMs, intervalMs, durabilityListener);
    }

    public LogManagerConfig withRetentionCheckIntervalMs(final long intervalMs)
    {
        return new LogManagerConfig(logDirs, defaultLogConfig, writeStrategy, clock, nanoClock, intervalMs, checkpointIntervalMs,
            flushCheckIntervalMs, durabilityListener);
    }
}
