package io.ferrite.broker.net;

import org.agrona.ErrorHandler;

import java.io.IOException;
import java.util.ArrayList;

/**
 * The connections of one network thread whose request is answered later (a produce on its way
 * through the log threads, a fetch waiting for data, a group answer waiting for an fsync). Each
 * pass polls them all: when log threads returned commands, when a partition a parked fetch reads
 * moved its high watermark, and by the nearest deadline, which bounds how long the thread may block
 * in select. Network thread only; the list is reused, and removal swaps in the last entry (no order
 * is kept or needed: each connection has at most one pending response).
 */
final class DeferredResponses
{
    private final ArrayList<Connection> waiting = new ArrayList<>();
    private final Connections connections;
    private final ErrorHandler errors;

    DeferredResponses(final Connections connections, final ErrorHandler errors)
    {
        this.connections = connections;
        this.errors = errors;
    }

    void add(final Connection connection)
    {
        waiting.add(connection);
    }

    boolean isEmpty()
    {
        return waiting.isEmpty();
    }

    /** Milliseconds to the nearest deadline of a pending response (at most {@code maxMs}; 0 or less: due now). */
    long timeoutMs(final long maxMs)
    {
        if (waiting.isEmpty())
        {
            return maxMs;
        }
        long deadline = Long.MAX_VALUE;
        for (int i = 0; i < waiting.size(); i++)
        {
            deadline = Math.min(deadline, waiting.get(i).pending.deadlineMs());
        }
        return Math.min(maxMs, deadline - System.currentTimeMillis());
    }

    /** Polls every pending response; those done are written through {@code dispatcher}. Returns how many ended. */
    int poll(final long nowMs, final RequestDispatcher dispatcher)
    {
        int ended = 0;
        for (int i = 0; i < waiting.size(); )
        {
            final Connection connection = waiting.get(i);
            final int end = pollOne(connection, nowMs);
            if (end == PendingResponse.NOT_READY)
            {
                i++;
                continue;
            }
            final int last = waiting.size() - 1;
            waiting.set(i, waiting.get(last));
            waiting.remove(last);
            ended++;
            try
            {
                dispatcher.resume(connection, end);
            }
            catch (final IOException ex)
            {
                connections.closeAfter(connection, ex); // as in NetworkThread.onKey
            }
            catch (final RuntimeException ex)
            {
                dispatcher.failed(connection, ex);
            }
            catch (final InternalError ex)
            {
                // a read error of a mapped page (SIGBUS) in the next request's read: as in NetworkThread.onKey
                errors.onError(ex);
                connections.close(connection, "I/O error reading a mapped segment: " + ex.getMessage(), false);
            }
            catch (final Error ex)
            {
                dispatcher.failed(connection, ex); // as in NetworkThread.onKey: a stack overflow, an assertion, direct memory refused
            }
        }
        return ended;
    }

    private int pollOne(final Connection connection, final long nowMs)
    {
        try
        {
            if (connection.closed)
            {
                cancel(connection);
                return RequestHandler.CLOSE;
            }
            return connection.pending.poll(connection, connection.pendingBodyStart, nowMs);
        }
        catch (final RuntimeException | InternalError ex) // InternalError: a read error of a mapped page (SIGBUS)
        {
            errors.onError(ex);
            cancel(connection);
            return RequestHandler.CLOSE;
        }
        catch (final Error ex)
        {
            if (DirectMemoryShortage.isRefusal(ex))
            {
                // the response grew the output past what direct memory had: this connection only, closed with its WARN line
                connections.closeAfter(connection, DirectMemoryShortage.of((OutOfMemoryError)ex));
            }
            else
            {
                RequestDispatcher.rethrowIfFatal(ex); // a stack overflow, an assertion: this connection only
                errors.onError(ex);
            }
            cancel(connection);
            return RequestHandler.CLOSE;
        }
    }

    /** Gives back what a pending response holds elsewhere (a fetch's registrations on its partitions). */
    private void cancel(final Connection connection)
    {
        try
        {
            connection.pending.cancel();
        }
        catch (final RuntimeException ex)
        {
            errors.onError(ex);
        }
    }
}
