package io.ferrite.broker.net;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentTerminationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashSet;
import java.util.Set;

/**
 * The error handler of one network thread, given to its {@link org.agrona.concurrent.AgentRunner}
 * and used by the thread's own catches. An error here is a defect (a handler that threw, a failed
 * select), not bad input: bad input closes its connection with a warning and never comes here. Each
 * error is counted; each distinct one is logged once with its stack trace, because a defect that
 * every connection meets would otherwise bury its first stack trace under thousands of copies.
 *
 * <p>Distinct means the same class thrown from the same place (first stack frame), not the same
 * message: messages often carry a size or an offset that differs per request of the same defect.
 * Single-threaded: only the network thread reports to it (its runner calls it on that thread too).
 */
public final class NetworkErrors implements ErrorHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(NetworkErrors.class);
    /** Distinct errors remembered: a defect whose stack varies must not grow the set without end. */
    static final int MAX_DISTINCT = 64;

    private final int thread;
    private final Set<String> seen = new HashSet<>();
    /** Written by the network thread only, so the increment of the volatile is exact. */
    private volatile long count;
    private volatile int distinct;

    NetworkErrors(final int thread)
    {
        this.thread = thread;
    }

    @Override
    public void onError(final Throwable error)
    {
        if (error instanceof AgentTerminationException)
        {
            return; // how the thread ends once its requests under way are answered: not an error
        }
        count++;
        if (seen.size() < MAX_DISTINCT && seen.add(key(error)))
        {
            distinct = seen.size();
            LOG.error("network thread {}: {} (the thread carries on; later errors of this kind are only counted)", thread,
                error, error);
            if (seen.size() == MAX_DISTINCT)
            {
                LOG.error("network thread {}: {} distinct errors logged, later new ones are only counted", thread, MAX_DISTINCT);
            }
        }
    }

    private static String key(final Throwable error)
    {
        final StackTraceElement[] frames = error.getStackTrace();
        return frames.length > 0 ? error.getClass().getName() + " at " + frames[0] : error.getClass().getName() + ": " + error.getMessage();
    }

    /** Errors reported since the thread started. */
    public long count()
    {
        return count;
    }

    /** How many distinct errors were logged. */
    public int distinct()
    {
        return distinct;
    }
}
