package io.ferrite.broker.coordinator;

import io.ferrite.broker.logthread.LogThreadFaults;
import org.agrona.ErrorHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashSet;
import java.util.Set;

/**
 * The coordinators' agent's {@link ErrorHandler}: what a command, a timer pass or the drain of
 * the log threads' answers threw. Each is counted; each distinct one (its class and where it was
 * thrown) is logged once with its stack trace, so a defect every heartbeat meets does not bury its
 * first trace. The agent carries on after any of them, an {@link Error} included, except a {@link
 * VirtualMachineError} (out of memory, stack overflow: the JVM itself is failing, and what the coordinators hold may
 * be half changed), which stops it ({@link #survive}; the same rule as the log threads', {@link
 * LogThreadFaults#survivable}): every coordinator request is then answered COORDINATOR_NOT_AVAILABLE.
 * Written by the agent only.
 */
final class CoordinatorErrors implements ErrorHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(CoordinatorErrors.class);
    /** Distinct errors remembered: a defect whose stack varies must not grow the set without end. */
    private static final int MAX_DISTINCT = 64;

    private final Set<String> logged = new HashSet<>();
    /** Single writer (the agent), so the increment of the volatile is exact; read by tests. */
    private volatile long count;

    /**
     * Counts {@code error} and logs it if its kind is new. Throws nothing: what reporting it throws (an
     * OutOfMemoryError while formatting, an error whose stack trace cannot be read) leaves it counted
     * only, since anything thrown here would leave the agent's duty cycle and stop the agent.
     */
    @Override
    public void onError(final Throwable error)
    {
        survive(error);
    }

    /**
     * Reports {@code error} (as {@link #onError}, throwing nothing) and returns whether the agent may
     * carry on after it; one it cannot survive is logged each time, as the agent stops.
     */
    boolean survive(final Throwable error)
    {
        count++;
        final boolean survivable = LogThreadFaults.survivable(error);
        try
        {
            if (!survivable)
            {
                LOG.error("coordinators: {} is not survivable (the JVM itself is failing): the coordinator stops, " +
                    "every coordinator request gets COORDINATOR_NOT_AVAILABLE until the broker restarts", error, error);
                return false;
            }
            final StackTraceElement[] at = error.getStackTrace();
            final String kind = error.getClass().getName() + (at.length > 0 ? " at " + at[0] : "");
            if (logged.size() < MAX_DISTINCT && logged.add(kind))
            {
                LOG.error("coordinators: {} (the agent carries on; later errors of this kind are only counted)", error,
                    error);
            }
        }
        catch (final Throwable reportFailed)
        {
            // counted only (see above)
        }
        return survivable;
    }

    /** Errors reported since the agent started. */
    long count()
    {
        return count;
    }
}
