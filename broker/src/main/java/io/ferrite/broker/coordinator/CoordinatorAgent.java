package io.ferrite.broker.coordinator;

import io.ferrite.log.GoingOnAfterInterrupt;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The coordinators' thread, as an Agrona {@link Agent}: the only thread that touches what the
 * coordinators own (the groups), their {@link CoordinatorLog} and its sender slot on the log threads'
 * queues. One {@link #doWork} pass first runs what must not wait in the queue ({@link CoordinatorDuties#beforeCalls}:
 * a change of leadership), then the requests the network threads queued ({@link CoordinatorCall}s,
 * at most {@value #CALL_LIMIT}, each after applying what the log threads answered to the coordinators'
 * writes to their internal topics), applies those answers, and every {@value #TICK_MS} ms runs the
 * coordinators' timed work ({@link CoordinatorDuties#tick}: for the groups member-id expiry, join deadlines,
 * session expiry, offset retention). After a pass that changed anything it asks each call still
 * waiting (a JoinGroup for its rebalance, a commit for its write) whether its answer is final, and
 * publishes those that are: their network threads are woken then, and never poll the coordinator;
 * then it runs what the pass's writes left that no answer waits for ({@link CoordinatorDuties#afterAnswers}).
 * What a pass meets that throws — an {@link Error} too — goes to {@link CoordinatorErrors} and the agent
 * carries on; a call whose work threw closes its connection. Except after a {@link
 * VirtualMachineError} (the JVM is failing; the groups may be half changed): the agent then runs
 * nothing more, refuses new calls and stops at the end of that pass, answering what is queued or
 * waiting COORDINATOR_NOT_AVAILABLE ({@link #onClose}). Nothing else leaves {@link #doWork} but a
 * throw from waking a network thread (its call's outcome published already); should the agent's
 * thread end anyway, new calls are refused, those queued or waiting are answered
 * COORDINATOR_NOT_AVAILABLE all the same, and the call it had in hand is ended so, or if it was ended,
 * its network thread woken again ({@link #runToEnd}). A waiting call whose connection closed
 * ({@link CoordinatorCall#cancel}) is dropped at the next settling.
 *
 * <p>In production {@link #start} runs it on an {@link AgentRunner} of its own that parks while idle
 * (at most until the next tick) and is unparked by a call queued, by a log thread answering the
 * coordinator, by another node answering a question a waiting call asked ({@link #wake}: the pass it wakes
 * settles the waiting calls) and by {@link #close}; a test may step it with an {@link org.agrona.concurrent.AgentInvoker}
 * instead (never both).
 */
public final class CoordinatorAgent implements Agent, AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(CoordinatorAgent.class);
    private static final long CLOSE_WAIT_MS = 10_000;
    /**
     * Requests queued at most. A connection has at most one coordinator request at the agent (it
     * reads nothing more until that one is answered), so this is 4096 connections sending coordinator
     * requests at the same moment; one more is answered COORDINATOR_NOT_AVAILABLE, and retried.
     */
    public static final int QUEUE_CAPACITY = 4096;
    /** Calls run per pass: bounds how late a tick or a log thread's answer is seen behind a burst. */
    public static final int CALL_LIMIT = 64;
    /**
     * The period of the timed work ({@link CoordinatorDuties#tick}): the granularity of session and rebalance
     * timeouts (Kafka's own timer wheel ticks every millisecond, but a session timeout is 45 s by
     * default and at least 6 s with group.min.session.timeout.ms; 50 ms late is 1% of the smallest).
     */
    public static final long TICK_MS = 50;

    private final CoordinatorDuties duties;
    /** Read once per pass: deadlines by its monotonic reading, timestamps by its wall reading. */
    private final CoordinatorClock clock;
    private final CoordinatorErrors errors = new CoordinatorErrors();
    private final ManyToOneConcurrentArrayQueue<CoordinatorCall<?, ?>> calls = new ManyToOneConcurrentArrayQueue<>(QUEUE_CAPACITY);
    /** Calls run whose answer is not final yet (agent only). */
    private final WaitingCalls waiting = new WaitingCalls();
    /**
     * Set by {@link #close}, and when the agent's thread ended: later calls are refused (the network
     * threads stopped before, in the broker's close).
     */
    private volatile boolean closed;
    /** Set as the agent's thread ends, however it ends: nothing queued will be run any more. */
    private volatile boolean stopped;
    /** Set by {@link #close} on a running agent: its next pass ends the run (then {@link #onClose}). */
    private volatile boolean closeRequested;
    /** The thread that runs the agent (its runner's, or the one stepping it), recorded at start: the groups' only thread. */
    private volatile Thread owner;
    /**
     * Raised by each {@link #wake}, lowered by the pass that reads it, which then settles the waiting calls even when it
     * found nothing else to do: an answer from another node (a remote AddPartitionsToTxn's, for a TxnOffsetCommit
     * waiting on it) changes no state of the agent's, only a waiting call's outcome, and without this it was settled at
     * the next tick, up to {@value #TICK_MS} ms later.
     */
    private final java.util.concurrent.atomic.AtomicBoolean woken = new java.util.concurrent.atomic.AtomicBoolean();
    /** The agent's thread while it runs (null once closed): whom {@link #wake} unparks. */
    private volatile Thread thread;
    private AgentRunner runner;
    private long nextTickMs;
    /** Set on the agent by a fault it cannot survive ({@link CoordinatorErrors#survive}): it stops at the end of the pass. */
    private boolean failed;
    /**
     * The call taken from the queue whose pass has not yet seen it to its end (agent only): in neither
     * the queue nor {@link #waiting}, so only this reaches it if a throw leaves the pass meanwhile —
     * the next pass, or the thread's end, sees it ended or its network thread woken again.
     */
    private CoordinatorCall<?, ?> inHand;
    /** Calls run so far (single writer, the agent; volatile so tests read it from their thread). */
    private volatile long callsRun;

    public CoordinatorAgent(final CoordinatorDuties duties, final CoordinatorClock clock)
    {
        this.duties = duties;
        this.clock = clock;
    }

    @Override
    public String roleName()
    {
        return "ferrite-coordinator";
    }

    /** Runs this agent on a daemon thread of its own. */
    public void start()
    {
        // a few spins after work (a commit's answer often follows its write within microseconds), then
        // parks growing to one tick: an idle coordinator wakes 20 times a second (a tick is not work, so
        // it does not restart the backoff) and a tick is at most one park late. No yields: Linux's EEVDF
        // scheduler (6.18 here) sends a task that yields to the end of its slice, and woken a moment later
        // on busy shared cores it waited behind the other runnable threads. With the 10 yields this had,
        // the two hand-offs of an EndTxn that wake the agent had a p99 of 2.7 and 2.0 ms; without them
        // 0.55 and 0.08 ms, the broker's EndTxn p99 4.4 -> 2.8 ms; the price, p50 99 -> 114 us at the
        // broker and +40 us at the client (medians of 4 interleaved runs of EndTxnLoopTest, transaction
        // version 1, with -Dferrite.txn.endTxnTiming, at load 16-19 on 2 shared cores). On a quiet machine
        // a yield costs little (an empty run queue); no quiet-machine A/B yet (jmh-results/profiles.md,
        // "EndTxn tail")
        start(new BackoffIdleStrategy(10, 0, TimeUnit.MICROSECONDS.toNanos(100),
            TimeUnit.MILLISECONDS.toNanos(TICK_MS)));
    }

    /** For tests: {@link #start} with the runner's idle strategy given (one that fails as asked). */
    public void start(final IdleStrategy idle)
    {
        // a stray interrupt cleared and reported: Agrona's runner would end its run on it, and every coordinator
        // request would then meet a stopped coordinator (it costs at most a wait for __consumer_offsets it cut)
        runner = new AgentRunner(new GoingOnAfterInterrupt(idle, () -> errors.onError(
            new IllegalStateException("the coordinators' thread was interrupted; it goes on"))), errors, null, this);
        AgentRunner.startOnThread(runner, r ->
        {
            final Thread t = new Thread(() -> runToEnd(r));
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * The agent's thread: its runner's loop, and however that ends {@link #stopped}. Agrona's
     * AgentRunner rethrows an {@link Error} that escapes its duty cycle and then skips {@link
     * #onClose}: without this, calls would be taken for an agent nobody runs, and those queued or
     * waiting never answered (their answers have no deadline: {@link CoordinatorCall#deadlineMs}).
     */
    private void runToEnd(final Runnable loop)
    {
        try
        {
            loop.run();
        }
        finally
        {
            stopped();
        }
    }

    /**
     * The agent's thread ends (after {@link #onClose}, or without it): new calls are refused, and what
     * is still queued or waiting is answered COORDINATOR_NOT_AVAILABLE, on this thread, the queue's
     * only consumer.
     */
    private void stopped()
    {
        closed = true;
        stopped = true;
        thread = null;
        final CoordinatorCall<?, ?> left = inHand;
        if (left != null)
        {
            // taken, and its pass ended by an Error before it was seen to its end: ended here, or at
            // least its network thread woken (its own end's wake may be what threw)
            inHand = null;
            endQuietly(left, true);
        }
        abandonAll();
    }

    /** Ends {@code call} as abandoned (or, {@code atLast}, as {@link CoordinatorCall#endAtLast}); a wake that throws costs only its own call. */
    private void endQuietly(final CoordinatorCall<?, ?> call, final boolean atLast)
    {
        try
        {
            if (atLast)
            {
                call.endAtLast();
            }
            else
            {
                call.abandon();
            }
        }
        catch (final Throwable fault)
        {
            errors.onError(fault); // throws nothing
        }
    }

    /** From a network thread: queues {@code call} and wakes the agent; false when the queue is full or the agent stopped. */
    public boolean offer(final CoordinatorCall<?, ?> call)
    {
        if (closed || !calls.offer(call))
        {
            return false;
        }
        if (stopped)
        {
            // the agent's thread ended since the check above, and its last drain may have missed this
            // call: refused (if the drain saw it after all, it abandoned it too, which answers the same)
            return false;
        }
        wake();
        return true;
    }

    /**
     * For tests (never a network thread): runs {@code work} on the agent, in turn with the group
     * requests; the future completes with its result, or exceptionally with what it threw.
     */
    public <C, R> CompletableFuture<R> call(final C coordinator, final CoordinatorCall.Work<C, R> work)
    {
        final CompletableFuture<R> future = new CompletableFuture<>();
        if (!offer(CoordinatorCall.task(coordinator, work, future)))
        {
            future.completeExceptionally(new IllegalStateException("the coordinators' queue is full or it stopped"));
        }
        return future;
    }

    /**
     * For tests: runs {@code task} on the agent, between calls (a task that blocks holds the agent
     * still); false when it was refused (the queue full, or the agent stopped).
     */
    public boolean execute(final Runnable task)
    {
        return !call(null, (none, nowMs) ->
        {
            task.run();
            return null;
        }).isCompletedExceptionally();
    }

    /** Calls that wait for their answer on the agent (for tests: read on the agent, or once it is held still). */
    public int waiting()
    {
        return waiting.size();
    }

    /** For tests: calls queued and not taken yet (approximate from another thread). */
    public int queued()
    {
        return calls.size();
    }

    /** For tests: calls the agent took and ran so far (each counted once its work returned or threw). */
    public long callsRun()
    {
        return callsRun;
    }

    /** From any thread: makes the agent look at its sources now (a call queued, a log thread answered the coordinator). */
    public void wake()
    {
        woken.set(true); // before the unpark: the pass it wakes sees it, and what the waker published before it
        final Thread t = thread;
        if (t != null)
        {
            LockSupport.unpark(t); // remembered by a park that has not begun yet: no wake-up is lost
        }
    }

    /** Errors the agent met (each logged once per kind; it carried on after all but a VirtualMachineError). */
    public long errors()
    {
        return errors.count();
    }

    @Override
    public void onStart()
    {
        owner = Thread.currentThread();
        thread = owner;
        try
        {
            duties.onStart();
        }
        catch (final Throwable fault)
        {
            report(fault);
        }
    }

    /** Whether the calling thread is the agent's (for asserts: the coordinator's state is the agent's alone). */
    public boolean isOwner()
    {
        return owner == Thread.currentThread();
    }

    @Override
    public int doWork()
    {
        if (closeRequested)
        {
            throw new AgentTerminationException(true); // expected: the runner ends its run and calls onClose
        }
        final long nowMs = clock.update();
        final boolean answered = woken.get() && woken.getAndSet(false); // a plain read first: most passes find it low
        if (inHand != null)
        {
            // the last pass was left by a throw while this call was in hand, and the agent carried on
            final CoordinatorCall<?, ?> left = inHand;
            inHand = null;
            endQuietly(left, true);
        }
        int work = applyAnsweredWrites() + duty(true);
        CoordinatorCall<?, ?> call;
        for (int n = 0; n < CALL_LIMIT && !failed && (call = calls.poll()) != null; n++)
        {
            work++;
            inHand = call;
            applyAnsweredWrites(); // a request sees every answer that came back before it was run, as under the lock before
            if (failed)
            {
                call.abandon();
                inHand = null;
                break;
            }
            boolean kept = false;
            try
            {
                if (!call.run(nowMs))
                {
                    waiting.add(call);
                }
                kept = true; // answered, or waiting
            }
            catch (final Throwable fault)
            {
                report(fault);
            }
            finally
            {
                if (!kept)
                {
                    call.failed(); // its connection closes; no call is left unended, whatever was thrown
                }
                callsRun = callsRun + 1;
            }
            inHand = null;
        }
        final boolean tick = !failed && nowMs >= nextTickMs;
        if (tick)
        {
            nextTickMs = nowMs + TICK_MS;
            try
            {
                duties.tick(nowMs);
            }
            catch (final Throwable fault)
            {
                report(fault);
            }
        }
        // a tick may have completed a join or timed a write out; a wake may bring a remote answer a call waits for
        if (!failed && (work > 0 || tick || answered) && !waiting.isEmpty())
        {
            waiting.settle(nowMs, this::report, () -> failed);
        }
        if (!failed)
        {
            work += duty(false);
        }
        if (failed)
        {
            // the one way out of a pass, Agrona's: its runner (or invoker) then calls onClose, which
            // answers what is queued or waiting; reported already
            throw new AgentTerminationException("the coordinators' agent met a fault it cannot survive", true);
        }
        return work;
    }

    /** Reports {@code fault} (throwing nothing); one the agent cannot survive stops it: no call is taken from now on. */
    private void report(final Throwable fault)
    {
        if (!errors.survive(fault))
        {
            failed = true;
            closed = true;
        }
    }

    /** {@link CoordinatorDuties#applyAnsweredWrites}: a throw is reported, and counts as work. */
    private int applyAnsweredWrites()
    {
        try
        {
            return duties.applyAnsweredWrites();
        }
        catch (final Throwable fault)
        {
            report(fault);
            return 1;
        }
    }

    /**
     * {@link CoordinatorDuties#beforeCalls} ({@code before}) or {@link CoordinatorDuties#afterAnswers}: a throw is reported,
     * and counts as work (the next pass runs it again).
     */
    private int duty(final boolean before)
    {
        try
        {
            return before ? duties.beforeCalls() : duties.afterAnswers();
        }
        catch (final Throwable fault)
        {
            report(fault);
            return 1;
        }
    }

    /** After the last pass: what is queued or waiting is answered COORDINATOR_NOT_AVAILABLE (the broker is closing). */
    @Override
    public void onClose()
    {
        thread = null;
        closed = true;
        abandonAll();
    }

    private void abandonAll()
    {
        // until the queue is empty, not until a poll finds nothing: a call whose offer has just moved
        // the queue's tail may not be visible yet, and offer only re-checks stopped after that move
        while (!calls.isEmpty())
        {
            final CoordinatorCall<?, ?> call = calls.poll();
            if (call == null)
            {
                Thread.onSpinWait();
                continue;
            }
            endQuietly(call, false);
        }
        waiting.abandonAll(w -> endQuietly(w, false));
    }

    /** Stops the agent's thread (after the network threads: their answers under way may wait for it). */
    @Override
    public void close()
    {
        closed = true;
        if (runner == null)
        {
            onClose();
            return;
        }
        // the agent is woken to see it: Agrona's runner.close() only clears its running flag, which a parked agent
        // saw at the end of its park (up to one tick, 50 ms; a park that never timed out, never: the runner then
        // interrupted the thread after CLOSE_WAIT_MS)
        closeRequested = true;
        wake();
        runner.close((int)CLOSE_WAIT_MS, ignored -> LOG.warn("the coordinators' agent did not stop in {} ms", CLOSE_WAIT_MS));
    }
}
