package io.ferrite.broker.coordinator;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.PendingResponse;
import io.ferrite.broker.net.RequestHandler;
import org.agrona.MutableDirectBuffer;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One coordinator request (a group's, a transaction's) handed by its network thread to the coordinators' agent ({@link CoordinatorAgent}),
 * and that request's deferred answer. The handler decodes the request into plain values (the work
 * below captures them: nothing of the connection's buffers), {@link #submit}s the call and defers
 * its response to it; the connection reads nothing more meanwhile, which keeps pipelined answers in
 * order. The agent runs the {@link Work} — the only thread that touches the groups — and publishes
 * the result once it is {@link Outcome#complete complete} (a JoinGroup once the rebalance completes,
 * a commit once its write is answered or timed out), then wakes the network thread, which writes
 * the response from it.
 *
 * <p>Its life: QUEUED, then DONE (the result is final), FAILED (the work threw: the connection
 * closes, as for a handler that threw on the network thread) or ABANDONED (the agent stopped before
 * answering: COORDINATOR_NOT_AVAILABLE, as for a full queue); a call whose connection closes while it
 * waits is {@link #cancel cancelled}, and dropped unanswered by the agent. The result is a plain field written on
 * the agent and published by the release store of the state; the network thread reads it after an
 * acquire load.
 */
public final class CoordinatorCall<C, R> implements PendingResponse
{
    /** The request's work, on the agent, with its coordinator: returns its result (an {@link Outcome} when it may wait). */
    @FunctionalInterface
    public interface Work<C, R>
    {
        R run(C coordinator, long nowMs);
    }

    /** Writes the response body from the result, on the network thread; returns where it ends. */
    @FunctionalInterface
    public interface Writer<R>
    {
        int write(MutableDirectBuffer out, int outOffset, R result);
    }

    /** Writes the response body of a request the coordinator did not take (its queue full, or it stopped). */
    @FunctionalInterface
    public interface Refusal
    {
        int write(MutableDirectBuffer out, int outOffset, short error);
    }

    /**
     * On the agent, before the work: NONE to run it, else the error the call is refused with (its {@link Refusal}
     * writes the answer), e.g. NOT_COORDINATOR for a group this node does not coordinate.
     */
    @FunctionalInterface
    public interface Gate
    {
        short error();
    }

    /** A result that may not be final when its work returns: the agent asks again after each change and each tick. */
    public interface Outcome
    {
        /** On the agent: whether the result is final (may settle it, e.g. as timed out). */
        boolean complete(long nowMs);
    }

    private static final int QUEUED = 0;
    private static final int DONE = 1;
    private static final int FAILED = 2;
    private static final int ABANDONED = 3;
    private static final int REFUSED = 4;
    private static final VarHandle STATE;

    static
    {
        try
        {
            STATE = MethodHandles.lookup().findVarHandle(CoordinatorCall.class, "state", int.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** The coordinator the work runs on (what it may touch, on the agent). */
    private final C coordinator;
    private final Work<C, R> work;
    private final Writer<R> writer;
    private final Refusal refusal;
    /** Wakes the network thread that waits for the answer. */
    private final Runnable waker;
    /** Written on the agent before the release store of {@link #state}. */
    private R result;
    @SuppressWarnings("unused") // through STATE
    private volatile int state;
    /** Asked on the agent before the work (null: none). */
    private Gate gate;
    /** The gate's error, written before the release store of {@link #state} (REFUSED). */
    private short refusedWith;
    /** Set by the network thread when the connection closed while the call waited; read by the agent. */
    private volatile boolean cancelled;

    /** The call of {@link #submit}; tests make one with no connection behind it and offer it to the agent themselves. */
    public CoordinatorCall(final C coordinator, final Work<C, R> work, final Writer<R> writer, final Refusal refusal,
        final Runnable waker)
    {
        this.coordinator = coordinator;
        this.work = work;
        this.writer = writer;
        this.refusal = refusal;
        this.waker = waker;
    }

    /**
     * On the network thread: hands the work to the coordinator's agent and defers the response to
     * it; when the agent's queue is full, answers at once with {@code refusal} (COORDINATOR_NOT_AVAILABLE:
     * the client retries).
     */
    public static <C, R> int submit(final CoordinatorAgent agent, final C coordinator, final Connection connection,
        final Runnable waker, final MutableDirectBuffer out, final int outOffset, final Work<C, R> work, final Writer<R> writer,
        final Refusal refusal)
    {
        return submit(agent, coordinator, connection, waker, out, outOffset, null, work, writer, refusal);
    }

    /** {@link #submit} with a {@code gate} the agent asks first: its error, when not NONE, is answered by {@code refusal}. */
    public static <C, R> int submit(final CoordinatorAgent agent, final C coordinator, final Connection connection,
        final Runnable waker, final MutableDirectBuffer out, final int outOffset, final Gate gate, final Work<C, R> work,
        final Writer<R> writer, final Refusal refusal)
    {
        final CoordinatorCall<C, R> call = new CoordinatorCall<>(coordinator, work, writer, refusal, waker).gated(gate);
        if (!agent.offer(call))
        {
            return refusal.write(out, outOffset, Errors.COORDINATOR_NOT_AVAILABLE);
        }
        connection.defer(call);
        return RequestHandler.DEFERRED;
    }

    /** Before it is offered: the agent asks {@code gate} before the work (null: none); returns this call. */
    public CoordinatorCall<C, R> gated(final Gate gate)
    {
        this.gate = gate;
        return this;
    }

    /** Whether the agent refused it by its gate ({@link #gated}); its refusal answers with {@link #refusedWith}. */
    public boolean refused()
    {
        return (int)STATE.getAcquire(this) == REFUSED;
    }

    /** The gate's error, once {@link #refused}. */
    public short refusedWith()
    {
        return refusedWith;
    }

    /**
     * A task for {@link CoordinatorAgent#call}: its result (as its work returned it, even a waiter not done
     * yet) or failure completes {@code future} on the agent; abandoned, it completes exceptionally.
     */
    static <C, R> CoordinatorCall<C, R> task(final C coordinator, final Work<C, R> work,
        final java.util.concurrent.CompletableFuture<R> future)
    {
        return new CoordinatorCall<>(coordinator, (c, nowMs) ->
        {
            try
            {
                final R result = work.run(c, nowMs);
                future.complete(result);
                return result;
            }
            catch (final RuntimeException | Error ex)
            {
                future.completeExceptionally(ex);
                throw ex;
            }
        }, (out, outOffset, result) -> outOffset, (out, outOffset, error) -> outOffset, () ->
        {
            if (!future.isDone())
            {
                future.completeExceptionally(new IllegalStateException("not run: the coordinators' agent stopped"));
            }
        });
    }

    /** On the agent: runs the work; true when the answer is published, false when it waits ({@link #settle} later). */
    boolean run(final long nowMs)
    {
        final short refused = gate == null ? Errors.NONE : gate.error();
        if (refused != Errors.NONE)
        {
            refusedWith = refused;
            end(REFUSED);
            return true;
        }
        result = work.run(coordinator, nowMs);
        return settle(nowMs);
    }

    /** On the agent: publishes the result and wakes the network thread if it is final. */
    boolean settle(final long nowMs)
    {
        if (result instanceof Outcome && !((Outcome)result).complete(nowMs))
        {
            return false;
        }
        end(DONE);
        return true;
    }

    /** On the agent: the work threw (reported by the agent); the connection closes. */
    void failed()
    {
        end(FAILED);
    }

    /** On the agent as it stops: the call will not be answered by the coordinator. */
    void abandon()
    {
        end(ABANDONED);
    }

    /**
     * On the agent's thread as it ends, for the call it had taken and not seen to its end (an Error
     * left the pass between the two): abandoned if it was never ended, and its network thread woken
     * either way — an end publishes the outcome before the wake, so it is the wake that may have failed.
     */
    void endAtLast()
    {
        STATE.compareAndSet(this, QUEUED, ABANDONED);
        waker.run();
    }

    private void end(final int outcome)
    {
        STATE.setRelease(this, outcome);
        waker.run();
    }

    /** Whether the agent ended the call (answered, failed or abandoned); any thread. */
    public boolean answered()
    {
        return (int)STATE.getAcquire(this) != QUEUED;
    }

    /** Whether the agent stopped before answering it: its connection gets COORDINATOR_NOT_AVAILABLE (any thread). */
    public boolean abandoned()
    {
        return (int)STATE.getAcquire(this) == ABANDONED;
    }

    /** The result, once {@link #answered} (read after that acquire). */
    public R result()
    {
        return result;
    }

    @Override
    public int poll(final Connection connection, final int outOffset, final long nowMs)
    {
        switch ((int)STATE.getAcquire(this))
        {
            case DONE:
                return writer.write(connection.out, outOffset, result);
            case FAILED:
                return RequestHandler.CLOSE;
            case ABANDONED:
                return refusal.write(connection.out, outOffset, Errors.COORDINATOR_NOT_AVAILABLE);
            case REFUSED:
                return refusal.write(connection.out, outOffset, refusedWith);
            default:
                return NOT_READY;
        }
    }

    /**
     * On the network thread, when the connection closed while the call waits: the agent drops it from
     * its waiting calls the next time it settles them, without touching the group (a SyncGroup's
     * waiter stays the member's until the group answers or replaces it; nobody reads it then).
     */
    @Override
    public void cancel()
    {
        cancelled = true;
    }

    /** On the agent: whether its connection closed ({@link #cancel}); such a call is no longer answered. */
    public boolean cancelled()
    {
        return cancelled;
    }

    @Override
    public long deadlineMs()
    {
        return Long.MAX_VALUE; // the agent always ends a call (answered, timed out inside, failed, or abandoned) and wakes us
    }
}
