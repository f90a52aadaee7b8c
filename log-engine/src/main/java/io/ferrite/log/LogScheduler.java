package io.ferrite.log;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The log manager's timed work, by the config's clock: checkpoints every
 * {@code log.flush.offset.checkpoint.interval.ms}, retention every
 * {@code log.retention.check.interval.ms}, the {@code flush.ms} check, the producer-id expiry every
 * {@code producer.id.expiration.check.interval.ms} (a signal to the writers: {@link WriterTasks}), and the deferred close (and
 * unmapping) of deleted segments, and the removal of deleted partitions' renamed directories, once
 * their {@code file.delete.delay.ms} has passed.
 *
 * <p>An {@link Agent}: one duty cycle reads the clock once and does what is due then — the periodic
 * duties whose time came (each at most once; the next is due an interval after this cycle's time) and
 * up to {@link #CLOSES_PER_CYCLE} deferred closes. {@link LogBackgroundWork} runs it on an
 * {@code AgentRunner} whose idle strategy ({@link #idleStrategy()}) parks until the next due time, at
 * most {@link #MAX_IDLE_MS}; a test steps it with an {@code AgentInvoker} and a clock of its own.
 *
 * <p>Order kept from the executor it replaces: a duty in hand ends before the agent stops, no periodic
 * duty starts once it stops, and deleted segments still waiting out their delay when it stops are
 * closed at once ({@link #closeWaiting}), their mappings left to the GC since their readers were
 * promised the delay; a deferred close asked for after the stop is done at once the same way.
 */
final class LogScheduler implements Agent
{
    private static final Logger LOG = LoggerFactory.getLogger(LogScheduler.class);

    /** Work the scheduler runs: a checkpoint, a retention pass. */
    interface Duty
    {
        void run() throws IOException;
    }

    /**
     * The longest park: bounds how late a due time is met after the wall clock jumps forward (the park
     * is computed from the clock before it). 100 ms is ten wake-ups a second, nothing for an idle core.
     */
    static final long MAX_IDLE_MS = 100;
    /** Deferred closes per cycle: an unmap is tens of µs, so 64 keep a cycle within a few ms. */
    static final int CLOSES_PER_CYCLE = 64;
    /**
     * Deferred closes waiting to be taken by the agent. Deleting a partition queues one per segment; a
     * full queue closes at once, mappings to the GC (what a stop does). 16384 references: 64 KiB.
     */
    private static final int QUEUE_CAPACITY = 16_384;

    private final EpochClock clock;
    /** Due times (intervals, file.delete.delay.ms): monotonic, so a step of the wall clock neither ends a delay early nor stalls a duty. */
    private final org.agrona.concurrent.NanoClock nanoClock;
    private final long originNs;
    private final Supplier<PartitionLog[]> logs;
    private final Duty checkpoint;
    private final Duty retention;
    private final Consumer<PartitionLog> requestFlush;
    private final long checkpointIntervalMs;
    private final long retentionIntervalMs;
    private final long flushCheckIntervalMs;
    private final long producerExpiryIntervalMs;
    private final WriterTasks writerTasks;
    private final AgentErrors errors;
    private final ManyToOneConcurrentArrayQueue<DeferredClose> queued = new ManyToOneConcurrentArrayQueue<>(QUEUE_CAPACITY);
    /** The agent's own: deferred closes by due time. */
    private final PriorityQueue<DeferredClose> waiting = new PriorityQueue<>(Comparator.comparingLong(DeferredClose::dueMs));
    private final Consumer<DeferredClose> addWaiting = waiting::add;
    /** Guards {@link #stopped} against a close queued as the agent stops (deferred closes are rare). */
    private final Object stopLock = new Object();
    private volatile Thread agentThread;
    /** Set under {@link #stopLock} as the agent closes; read there, or on the agent's thread. */
    private boolean stopped;
    /** The agent is being stopped: its idle no longer parks, so the runner's close ends it at once. */
    private volatile boolean stopping;
    private long nextCheckpointMs;
    private long nextRetentionMs;
    /** A writer rolled for retention ({@link RetentionRoll}): the next cycle runs a retention pass. */
    private volatile boolean retentionSoon;
    private long nextFlushCheckMs;
    private long nextProducerExpiryMs;
    private long lastCycleMs;

    LogScheduler(final LogManagerConfig config, final Supplier<PartitionLog[]> logs, final Duty checkpoint, final Duty retention,
        final Consumer<PartitionLog> requestFlush, final AgentErrors errors)
    {
        this.clock = config.clock();
        this.nanoClock = config.nanoClock();
        this.originNs = nanoClock.nanoTime();
        this.logs = logs;
        this.checkpoint = checkpoint;
        this.retention = retention;
        this.requestFlush = requestFlush;
        this.checkpointIntervalMs = config.checkpointIntervalMs();
        this.retentionIntervalMs = config.retentionCheckIntervalMs();
        this.flushCheckIntervalMs = config.flushCheckIntervalMs();
        this.producerExpiryIntervalMs = config.producerIdExpirationCheckIntervalMs();
        this.writerTasks = config.writerTasks();
        this.errors = errors;
    }

    @Override
    public void onStart()
    {
        agentThread = Thread.currentThread();
        lastCycleMs = tick();
        nextCheckpointMs = after(lastCycleMs, checkpointIntervalMs);
        nextRetentionMs = after(lastCycleMs, retentionIntervalMs);
        nextFlushCheckMs = after(lastCycleMs, flushCheckIntervalMs);
        // no writer loop to signal: never due (the embedded writer calls it itself)
        nextProducerExpiryMs = writerTasks == WriterTasks.NONE ? Long.MAX_VALUE : after(lastCycleMs, producerExpiryIntervalMs);
    }

    /** What is due by the clock now. Returns how many duties and closes it ran (0: nothing was due). */
    @Override
    public int doWork()
    {
        final long now = tick();
        lastCycleMs = now;
        int work = closeDue(now);
        if (now >= nextCheckpointMs)
        {
            nextCheckpointMs = after(now, checkpointIntervalMs);
            run(checkpoint);
            work++;
        }
        if (now >= nextRetentionMs || retentionSoon)
        {
            retentionSoon = false;
            if (now >= nextRetentionMs)
            {
                nextRetentionMs = after(now, retentionIntervalMs); // a pass a roll asked for leaves the periodic one where it was
            }
            run(retention);
            work++;
        }
        if (now >= nextFlushCheckMs)
        {
            nextFlushCheckMs = after(now, flushCheckIntervalMs);
            requestDueFlushes(clock.time()); // flush.ms deadlines are the logs' wall times
            work++;
        }
        if (now >= nextProducerExpiryMs)
        {
            nextProducerExpiryMs = after(now, producerExpiryIntervalMs);
            handProducerExpiry();
            work++;
        }
        return work;
    }

    /** Monotonic ms since the scheduler was made: due times never move with the wall clock. */
    private long tick()
    {
        return (nanoClock.nanoTime() - originNs) / 1_000_000L;
    }

    /**
     * {@code now + intervalMs}, or never: Kafka's "never" is Long.MAX_VALUE (a file.delete.delay.ms or
     * an interval of it), and a sum past it would wrap to a time long gone, due at once.
     */
    static long after(final long now, final long intervalMs)
    {
        final long due = now + intervalMs;
        return due < now ? Long.MAX_VALUE : due;
    }

    private void requestDueFlushes(final long now)
    {
        for (final PartitionLog log : logs.get())
        {
            try
            {
                if (!log.isClosed() && log.flushDue(now))
                {
                    requestFlush.accept(log);
                }
            }
            catch (final RuntimeException | Error ex)
            {
                errors.onError(log, ex);
            }
        }
    }

    /**
     * Tells the writers the producer expiry is due (Kafka schedules one check per log; here one signal per
     * interval, and each writer walks its own logs a few at a time): the producer state is the writer's
     * alone, so the removal runs there, between its appends, and nothing on the produce path locks for it.
     * The writer reads the clock when it runs it.
     */
    private void handProducerExpiry()
    {
        try
        {
            writerTasks.producerExpiryDue();
        }
        catch (final RuntimeException | Error ex)
        {
            errors.onError("the producer-id expiry", ex);
        }
    }

    /**
     * A duty's failure goes to the error handler and the agent carries on, an {@code Error} included:
     * Agrona's runner would end the thread on one, and with it retention (a disk filling up) and the
     * closes that give deleted files' blocks back. A SIGBUS on a mapping comes as an InternalError.
     */
    private void run(final Duty duty)
    {
        try
        {
            duty.run();
        }
        catch (final IOException | RuntimeException | Error ex)
        {
            errors.onError(ex);
        }
    }

    private int closeDue(final long now)
    {
        queued.drain(addWaiting, QUEUE_CAPACITY);
        int closed = 0;
        DeferredClose next;
        while (closed < CLOSES_PER_CYCLE && (next = waiting.peek()) != null && next.dueMs <= now)
        {
            waiting.poll();
            if (next.segment != null)
            {
                close(next.segment, true);
            }
            else
            {
                remove(next.dir);
            }
            closed++;
        }
        return closed;
    }

    /**
     * Closes and unmaps a deleted segment once {@code delayMs} has passed by the clock; from any thread.
     * After the agent stopped (or with no room to queue it), closes it at once but leaves its mappings
     * to the GC: its readers were promised the delay.
     */
    void closeLater(final Segment segment, final long delayMs)
    {
        final DeferredClose close = new DeferredClose(segment, null, after(tick(), delayMs));
        if (!deferred(close))
        {
            close(segment, false);
        }
    }

    /**
     * Removes a deleted partition's renamed ({@code -delete}) directory once {@code delayMs} has passed,
     * as Kafka's {@code file.delete.delay.ms} does; from any thread. The order against its segments'
     * deferred closes does not matter: a deleted segment's close reaches no file by its path. One
     * still waiting when the agent stops, or asked for after, is left: the next open of the log
     * directory removes every {@code -delete} directory it finds.
     */
    void removeLater(final Path dir, final long delayMs) throws IOException
    {
        if (!deferred(new DeferredClose(null, dir, after(tick(), delayMs))) && !stopped)
        {
            // no room to queue it (a deletion of many segments filled the queue): at once, which is safe —
            // an unlinked file's mappings and open descriptors stay valid until they are closed
            PartitionDirs.deleteRecursively(dir);
        }
    }

    /** Queues a deferred close or removal for the agent; false after the stop, or with no room to queue it. */
    private boolean deferred(final DeferredClose close)
    {
        final Thread agent = agentThread;
        if (agent == Thread.currentThread() && !stopped)
        {
            waiting.add(close); // retention, on the agent: its own queue, however many segments it deletes
            return true;
        }
        final boolean queuedForLater;
        synchronized (stopLock)
        {
            queuedForLater = !stopped && queued.offer(close);
        }
        if (queuedForLater)
        {
            LockSupport.unpark(agent); // its park may run past the new due time
        }
        return queuedForLater;
    }

    /**
     * On the agent's thread as it stops (or on the stopping thread if it never ran): from now on a
     * deferred close is done at once. What still waits is closed by {@link #closeWaiting}.
     */
    @Override
    public void onClose()
    {
        synchronized (stopLock)
        {
            stopped = true;
        }
    }

    /**
     * Once the agent has ended (its runner's close returned, or a test's invoker is closed): closes the
     * deleted segments still waiting out their delay, their mappings left to the GC.
     */
    void closeWaiting()
    {
        queued.drain(addWaiting, QUEUE_CAPACITY);
        DeferredClose next;
        while ((next = waiting.poll()) != null)
        {
            if (next.segment != null)
            {
                close(next.segment, false);
            }
        }
    }

    private void remove(final Path dir)
    {
        try
        {
            PartitionDirs.deleteRecursively(dir);
        }
        catch (final IOException | java.io.UncheckedIOException ex)
        {
            // left for the next open, which removes every -delete directory it finds
            LOG.warn("removing deleted partition directory {} failed", dir, ex);
        }
        catch (final RuntimeException | Error ex)
        {
            errors.onError(dir, ex);
        }
    }

    private void close(final Segment segment, final boolean unmap)
    {
        try
        {
            if (unmap)
            {
                segment.closeAndUnmap();
            }
            else
            {
                segment.close();
            }
        }
        catch (final IOException ex)
        {
            LOG.warn("closing deleted segment {} failed", segment, ex);
        }
        catch (final RuntimeException | Error ex)
        {
            errors.onError(segment, ex);
        }
    }

    /** Any thread: a retention pass at the next cycle (a writer rolled for retention), which is woken for it. */
    void retentionSoon()
    {
        retentionSoon = true;
        LockSupport.unpark(agentThread);
    }

    /** Before the runner's close: ends the agent's park and keeps it from parking again. */
    void stopping()
    {
        stopping = true;
        LockSupport.unpark(agentThread);
    }

    /** Deferred closes and directory removals waiting (queued or due later): for tests. */
    int waitingCloses()
    {
        return waiting.size() + queued.size();
    }

    /** Parks until the next due time by the clock of the last cycle, at most {@link #MAX_IDLE_MS}; an unpark ends it. */
    IdleStrategy idleStrategy()
    {
        return new IdleStrategy()
        {
            @Override
            public void idle(final int workCount)
            {
                if (workCount <= 0)
                {
                    idle();
                }
            }

            @Override
            public void idle()
            {
                if (stopping || retentionSoon)
                {
                    return;
                }
                long due = Math.min(Math.min(nextCheckpointMs, nextProducerExpiryMs), Math.min(nextRetentionMs, nextFlushCheckMs));
                final DeferredClose close = waiting.peek();
                if (close != null)
                {
                    due = Math.min(due, close.dueMs);
                }
                final long parkMs = Math.max(1, Math.min(MAX_IDLE_MS, due - lastCycleMs));
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(parkMs));
            }

            @Override
            public void reset()
            {
            }
        };
    }

    @Override
    public String roleName()
    {
        return "ferrite-log-scheduler";
    }

    /** A deleted segment to close, or (segment null) a deleted partition's renamed directory to remove. */
    private record DeferredClose(Segment segment, Path dir, long dueMs)
    {
    }
}
