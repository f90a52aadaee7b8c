package io.ferrite.log;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.errors.DistinctErrorLog;
import org.agrona.concurrent.errors.ErrorLogReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;

/**
 * The {@link ErrorHandler} of one agent, given to its {@code AgentRunner} (or a test's {@code
 * AgentInvoker}) and used by the agent's own catches: the log engine's background agents, and the
 * broker's network and log threads and acceptor (public for them: the one distinct-error log of the
 * project). Every error is counted; each kind — its class and the frame that threw it, not its
 * message, which often carries a size, an offset or a partition that differs each time — is logged
 * once with its stack trace and kept in Agrona's {@link DistinctErrorLog} (its first instance, with
 * observation count and timestamps): a disk that fails every fsync or every unmap, or a defect every
 * connection meets, would otherwise bury its first stack trace under one copy per cycle, and copies
 * differing only in a number would fill the log and silence every later new kind. Reporting
 * throws nothing: what the logging throws (an OutOfMemoryError while formatting) leaves the error
 * counted only, since a throw here would leave the agent's duty cycle.
 *
 * <p>Thread-safe: the agent reports from its thread, and a deferred close that must happen at once
 * (the scheduler stopped) reports from the caller's. Errors are rare, so a monitor is enough.
 */
public final class AgentErrors implements ErrorHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(AgentErrors.class);
    /**
     * Room for the distinct errors: an encoded stack trace is 2–5 KiB, so some 15–30 of them; one that
     * finds no room is still counted and logged once as such.
     */
    static final int ERROR_LOG_BYTES = 64 * 1024;
    /** How many kinds are told apart; past it a new kind is counted only (said once). */
    static final int MAX_KINDS = 1024;

    private final String role;
    /** What happens after an error the agent survives, for the line logged (e.g. "the agent carries on"). */
    private final String carriesOn;
    private final AtomicBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(ERROR_LOG_BYTES));
    private final DistinctErrorLog distinctLog = new DistinctErrorLog(buffer, SystemEpochClock.INSTANCE);
    private volatile long count;
    private volatile int distinct;
    /** Each kind seen, with its first error: what the distinct-error log keeps and counts for it. */
    private final java.util.Map<String, Throwable> kinds = new java.util.HashMap<>();
    private boolean fullLogged;

    /** For the agent named {@code role}, which carries on after the errors it reports here. */
    public AgentErrors(final String role)
    {
        this(role, "the agent carries on");
    }

    /** {@code carriesOn}: what the line logged for a new error says happens after it. */
    public AgentErrors(final String role, final String carriesOn)
    {
        this.role = role;
        this.carriesOn = carriesOn;
    }

    @Override
    public void onError(final Throwable error)
    {
        onError(null, error);
    }

    /**
     * {@link #onError(Throwable)} naming what failed ({@code subject}: a log, a segment), for the one
     * line logged when the error is new.
     */
    public synchronized void onError(final Object subject, final Throwable error)
    {
        if (error instanceof AgentTerminationException)
        {
            return; // how an agent asks to end: not an error
        }
        count++;
        try
        {
            final Object what = subject == null ? "" : subject + ": ";
            final String kind = kind(error);
            final Throwable first = kinds.get(kind);
            if (first != null)
            {
                distinctLog.record(first); // one more observation of its kind (the first's copy, so no new entry)
                return;
            }
            if (kinds.size() >= MAX_KINDS)
            {
                if (!fullLogged)
                {
                    fullLogged = true;
                    LOG.error("{}: {}{} ({} kinds of error seen: later new kinds are only counted)", role, what, error,
                        MAX_KINDS, error);
                }
                return;
            }
            kinds.put(kind, error);
            distinct = kinds.size();
            distinctLog.record(error); // the first of its kind, when there is room (the line below is logged either way)
            LOG.error("{}: {}{} ({}; later errors of this kind are only counted)", role, what, error, carriesOn, error);
        }
        catch (final Throwable reportFailed)
        {
            // counted only (see the class comment)
        }
    }

    /** An error's kind: its class and the frame that threw it. */
    private static String kind(final Throwable error)
    {
        final StackTraceElement[] stack = error.getStackTrace();
        return stack.length == 0 ? error.getClass().getName() : error.getClass().getName() + " at " + stack[0];
    }

    /**
     * An error the agent does not survive: counted, kept in the distinct-error log, and logged each
     * time (it happens once per agent) with {@code consequence}, what its stop means. Throws nothing.
     */
    public synchronized void onFatal(final Object subject, final Throwable error, final String consequence)
    {
        count++;
        try
        {
            if (kinds.size() < MAX_KINDS && kinds.putIfAbsent(kind(error), error) == null)
            {
                distinct = kinds.size();
                distinctLog.record(error);
            }
            LOG.error("{}: {}{} (not survivable: {})", role, subject == null ? "" : subject + ": ", error, consequence, error);
        }
        catch (final Throwable reportFailed)
        {
            // counted only
        }
    }

    /** Errors reported since the agent started. */
    public long count()
    {
        return count;
    }

    /** Kinds of error seen (each logged once). */
    public int distinct()
    {
        return distinct;
    }

    /** The distinct-error log's buffer, for {@link ErrorLogReader} (a tool or a test). */
    public AtomicBuffer buffer()
    {
        return buffer;
    }
}
