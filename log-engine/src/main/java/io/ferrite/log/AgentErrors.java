package io.ferrite.log;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.errors.DistinctErrorLog;
import org.agrona.concurrent.errors.ErrorConsumer;
import org.agrona.concurrent.errors.ErrorLogReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;

/**
 * The {@link ErrorHandler} of one background agent of the log engine, given to its
 * {@code AgentRunner} (or a test's {@code AgentInvoker}) and used by the agent's own catches. Every
 * error is counted; each distinct one (Agrona's {@link DistinctErrorLog}: same class, message and
 * stack, causes included) is kept with its observation count and timestamps, and logged once with its
 * stack trace: a disk that fails every fsync or every unmap would otherwise bury its first stack trace
 * under one copy per cycle.
 *
 * <p>Thread-safe: the agent reports from its thread, and a deferred close that must happen at once
 * (the scheduler stopped) reports from the caller's. Errors are rare, so a monitor is enough.
 */
final class AgentErrors implements ErrorHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(AgentErrors.class);
    /**
     * Room for the distinct errors: an encoded stack trace is 2–5 KiB, so some 15–30 of them; one that
     * finds no room is still counted and logged once as such.
     */
    static final int ERROR_LOG_BYTES = 64 * 1024;
    private static final ErrorConsumer IGNORE = (count, first, last, encoded) -> { };

    private final String role;
    private final AtomicBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(ERROR_LOG_BYTES));
    private final DistinctErrorLog distinctLog = new DistinctErrorLog(buffer, SystemEpochClock.INSTANCE);
    private volatile long count;
    private volatile int distinct;
    private boolean fullLogged;

    AgentErrors(final String role)
    {
        this.role = role;
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
    synchronized void onError(final Object subject, final Throwable error)
    {
        if (error instanceof AgentTerminationException)
        {
            return; // how an agent asks to end: not an error
        }
        count++;
        final Object what = subject == null ? "" : subject + ": ";
        if (!distinctLog.record(error))
        {
            if (!fullLogged)
            {
                fullLogged = true;
                LOG.error("{}: {}{} (the distinct-error log is full: later new errors are only counted)", role, what, error, error);
            }
            return;
        }
        final int now = ErrorLogReader.read(buffer, IGNORE);
        if (now > distinct)
        {
            distinct = now;
            LOG.error("{}: {}{} (the agent carries on; later errors of this kind are only counted)", role, what, error, error);
        }
    }

    /** Errors reported since the agent started. */
    long count()
    {
        return count;
    }

    /** Distinct errors kept (each logged once). */
    int distinct()
    {
        return distinct;
    }

    /** The distinct-error log's buffer, for {@link ErrorLogReader} (a tool or a test). */
    AtomicBuffer buffer()
    {
        return buffer;
    }
}
