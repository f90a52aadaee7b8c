package io.ferrite.log;

import io.ferrite.log.clean.CleanStats;
import io.ferrite.log.clean.CleanerThrottle;
import io.ferrite.log.clean.LogCompaction;
import io.ferrite.log.clean.OffsetMap;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.NanoClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One log cleaner thread (Kafka's {@code CleanerThread}): each duty cycle cleans the dirtiest compacted
 * log the {@link CleanerManager} hands it, then runs the retention of the compacted logs (Kafka's
 * {@code deletableLogs}, so that it never runs beside a clean of the same log), or, when none needs
 * cleaning, waits {@code log.cleaner.backoff.ms} on the monotonic clock (cycles that do nothing until
 * then). Its {@link OffsetMap} ({@code dedupe.buffer.size / threads}) is its own, reserved when it is
 * made, at the log manager's start, as Kafka's. Made as a sparse file's private mapping in the first log
 * directory, its address space is all the start reserves: a map whose address space cannot be had fails the
 * start, but its memory comes page by page as cleans touch it, unaccounted by {@code MaxDirectMemorySize}, so
 * in a memory-limited container a too large {@code log.cleaner.dedupe.buffer.size} meets the OOM killer
 * mid-clean, not a failed start (the price of an idle map costing nothing). Where no such file can be had
 * (the directory on {@code tmpfs}, not writable) the map is direct memory, resident whole at the start.
 * A clean checks, at each throttle call (every 64 KiB of batches) and while its throttle sleeps,
 * whether its log's deletion aborted it or the cleaner is stopping, and ends there. A clean that throws
 * marks its log uncleanable (reported to the agent's error handler) and the others go on; one that was
 * abandoned or aborted records nothing. Runs on its own thread, never on a produce, fetch or log
 * thread; one clean at a time.
 */
final class CleanerAgent implements Agent
{
    private static final Logger LOG = LoggerFactory.getLogger(CleanerAgent.class);

    private final String role;
    private final CleanerManager manager;
    private final CleanerConfig config;
    private final CleanerThrottle throttle;
    private final EpochClock clock;
    private final NanoClock nanoClock;
    private final ErrorHandler errors;
    private final BooleanSupplier stopping;
    private final CleanStats stats = new CleanStats();
    private final BooleanSupplier stop = this::stopRequested;
    private final OffsetMap map;
    private final LogCompaction compaction;
    private CleanerManager.LogToClean cleaning;
    private boolean backingOff;
    private long backoffUntilNs;

    /**
     * @param stopping true once the cleaner is being stopped (a clean in hand ends at its next check)
     * @param mapDir   the disk-backed directory of the offset map's sparse file (the first log directory), or null
     * @throws IllegalStateException when the offset map or the compaction cannot be made (a bad
     *     {@code log.cleaner.dedupe.buffer.size} or {@code log.cleaner.io.buffer.load.factor}, a block that cannot be
     *     reserved)
     */
    CleanerAgent(final int id, final CleanerManager manager, final CleanerConfig config, final CleanerThrottle throttle,
        final EpochClock clock, final NanoClock nanoClock, final ErrorHandler errors, final BooleanSupplier stopping,
        final java.nio.file.Path mapDir)
    {
        this.role = "ferrite-log-cleaner-" + id;
        this.manager = manager;
        this.config = config;
        this.throttle = throttle;
        this.clock = clock;
        this.nanoClock = nanoClock;
        this.errors = errors;
        this.stopping = stopping;
        OffsetMap m = null;
        try
        {
            m = new OffsetMap(OffsetMap.memoryPerThread(config.dedupeBufferSize(), Math.max(config.threads(), 1)),
                config.dedupeBufferLoadFactor(), mapDir);
            this.compaction = config.compaction().create(m, this::checkedThrottle);
        }
        catch (final RuntimeException | OutOfMemoryError ex)
        {
            if (m != null)
            {
                m.close();
            }
            throw new IllegalStateException(role + " cannot start: " + ex.getMessage() + " (log.cleaner.dedupe.buffer.size=" +
                config.dedupeBufferSize() + ", log.cleaner.threads=" + config.threads() + ", log.cleaner.io.buffer.load.factor=" +
                config.dedupeBufferLoadFactor() + ")", ex);
        }
        this.map = m;
    }

    /** The throttle the compaction calls: the shared budget, and where a clean learns it must stop. */
    private void checkedThrottle(final long bytes) throws InterruptedException
    {
        if (stopRequested())
        {
            throw new InterruptedException("the clean of " + cleaning.log() + " is aborted or the cleaner stops");
        }
        if (throttle instanceof CleanerThrottler shared)
        {
            shared.maybeThrottle(bytes, stop);
        }
        else
        {
            throttle.maybeThrottle(bytes);
        }
    }

    private boolean stopRequested()
    {
        return stopping.getAsBoolean() || (cleaning != null && cleaning.aborted().get());
    }

    @Override
    public int doWork()
    {
        final long nowNs = nanoClock.nanoTime();
        if (backingOff && nowNs - backoffUntilNs < 0)
        {
            return 0;
        }
        backingOff = false;
        CleanerTiming.begin();
        final long nowMs = clock.time();
        final boolean cleaned = cleanFilthiest(nowMs);
        deleteOldSegments(nowMs);
        manager.maintainUncleanable();
        if (!cleaned)
        {
            backingOff = true;
            backoffUntilNs = nowNs + TimeUnit.MILLISECONDS.toNanos(config.backoffMs());
        }
        return cleaned ? 1 : 0;
    }

    /** The retention of the compacted logs no other thread is cleaning (Kafka's {@code deletableLogs} / {@code doneDeleting}). */
    private void deleteOldSegments(final long nowMs)
    {
        final List<PartitionLog> deletable = manager.grabDeletable();
        try
        {
            for (final PartitionLog log : deletable)
            {
                try
                {
                    log.deleteOldSegments(nowMs);
                }
                catch (final IOException | RuntimeException | InternalError ex)
                {
                    errors.onError(new IOException("retention of " + log + " failed", ex));
                }
            }
        }
        finally
        {
            manager.doneDeleting(deletable);
        }
    }

    /** Kafka's {@code cleanFilthiestLog}: whether a log was cleaned (false: none to clean, or its clean failed). */
    private boolean cleanFilthiest(final long nowMs)
    {
        final CleanerManager.LogToClean ltc = manager.grabFilthiest(nowMs);
        CleanerTiming.mark(CleanerTiming.Stage.CHOICE);
        if (ltc == null)
        {
            CleanerTiming.end(null);
            return false;
        }
        // Kafka's "Beginning cleaning of log": where an operator's (and CleanerSideBySideRun's) clock of a clean starts
        LOG.info("{} beginning the clean of {} from offset {}", role, ltc.log(), ltc.firstDirtyOffset());
        long next = ltc.firstDirtyOffset();
        boolean failed = false;
        cleaning = ltc;
        try
        {
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
            CleanerTiming.mark(CleanerTiming.Stage.OTHER);
        }
        catch (final InterruptedException ex)
        {
            if (!stopRequested())
            {
                Thread.currentThread().interrupt(); // an interrupt from elsewhere: kept for the runner
            }
            // aborted by a deletion or stopped: the log is left as the replacement left it, nothing recorded
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
            cleaning = null;
            try
            {
                manager.doneCleaning(ltc, next);
            }
            catch (final IOException ex)
            {
                errors.onError(ex);
            }
            CleanerTiming.mark(CleanerTiming.Stage.CHECKPOINT);
            CleanerTiming.end(ltc.log());
        }
        return !failed;
    }

    @Override
    public void onClose()
    {
        CleanerTiming.close();
        map.close();
    }

    @Override
    public String roleName()
    {
        return role;
    }
}
