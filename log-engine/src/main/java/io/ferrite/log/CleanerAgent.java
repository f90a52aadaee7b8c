package io.ferrite.log;

import io.ferrite.log.clean.CleanStats;
import io.ferrite.log.clean.CleanerThrottle;
import io.ferrite.log.clean.LogCompaction;
import io.ferrite.log.clean.OffsetMap;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.EpochClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;

/**
 * One log cleaner thread (Kafka's {@code CleanerThread}): each duty cycle cleans the dirtiest compacted
 * log the {@link CleanerManager} hands it, or, when none needs cleaning, waits {@code log.cleaner.backoff.ms}
 * (cycles that do nothing until then). Its {@link OffsetMap} ({@code dedupe.buffer.size / threads}) is its
 * own, allocated at its first clean so that a node without compacted data never holds it. A clean that
 * throws marks its log uncleanable (reported to the agent's error handler) and the others go on; one
 * the log's deletion or close abandoned records nothing. Runs on its own thread, never on a produce,
 * fetch or log thread; one clean at a time.
 */
final class CleanerAgent implements Agent
{
    private static final Logger LOG = LoggerFactory.getLogger(CleanerAgent.class);

    private final String role;
    private final CleanerManager manager;
    private final CleanerConfig config;
    private final CleanerThrottle throttle;
    private final EpochClock clock;
    private final ErrorHandler errors;
    private final CleanStats stats = new CleanStats();
    private final int mapBytes;
    private OffsetMap map;
    private LogCompaction compaction;
    private long backoffUntilMs = Long.MIN_VALUE;

    CleanerAgent(final int id, final CleanerManager manager, final CleanerConfig config, final CleanerThrottle throttle,
        final EpochClock clock, final ErrorHandler errors)
    {
        this.role = "ferrite-log-cleaner-" + id;
        this.manager = manager;
        this.config = config;
        this.throttle = throttle;
        this.clock = clock;
        this.errors = errors;
        this.mapBytes = OffsetMap.memoryPerThread(config.dedupeBufferSize(), Math.max(config.threads(), 1));
    }

    @Override
    public int doWork()
    {
        final long nowMs = clock.time();
        if (nowMs < backoffUntilMs)
        {
            return 0;
        }
        final boolean cleaned = cleanFilthiest(nowMs);
        manager.maintainUncleanable();
        if (!cleaned)
        {
            backoffUntilMs = nowMs + config.backoffMs();
        }
        return cleaned ? 1 : 0;
    }

    /** Kafka's {@code cleanFilthiestLog}: whether a log was cleaned (false: none to clean, or its clean failed). */
    private boolean cleanFilthiest(final long nowMs)
    {
        final CleanerManager.LogToClean ltc = manager.grabFilthiest(nowMs);
        if (ltc == null)
        {
            return false;
        }
        long next = ltc.firstDirtyOffset();
        boolean failed = false;
        try
        {
            if (compaction == null)
            {
                map = new OffsetMap(mapBytes, config.dedupeBufferLoadFactor());
                compaction = config.compaction().create(map, throttle);
            }
            stats.reset();
            final long end = compaction.clean(ltc.log(), ltc.firstDirtyOffset(), ltc.firstUncleanableOffset(),
                ltc.log().config().deleteRetentionMs, nowMs, stats);
            if (end != LogCompaction.ABANDONED)
            {
                next = end;
                LOG.info("{} cleaned {} (dirty section [{}, {}]): {} bytes read, {} written, {} of {} records kept, {} segments replaced",
                    role, ltc.log(), ltc.firstDirtyOffset(), end, stats.bytesRead, stats.bytesWritten, stats.recordsKept,
                    stats.recordsRead, stats.segmentsReplaced);
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt(); // being stopped: the log is left as the replacement left it
        }
        catch (final IOException | RuntimeException | InternalError ex)
        {
            // Kafka marks the partition uncleanable (an IOException takes its log dir offline there; here the
            // partition only, as the log dir's other logs are not known to be damaged)
            failed = true;
            manager.markUncleanable(ltc.log());
            errors.onError(new IOException("cleaning " + ltc.log() + " failed; it is not cleaned again until it is reopened", ex));
        }
        finally
        {
            try
            {
                manager.doneCleaning(ltc, next);
            }
            catch (final IOException ex)
            {
                errors.onError(ex);
            }
        }
        return !failed;
    }

    @Override
    public void onClose()
    {
        if (map != null)
        {
            map.close();
            map = null;
        }
    }

    @Override
    public String roleName()
    {
        return role;
    }
}
