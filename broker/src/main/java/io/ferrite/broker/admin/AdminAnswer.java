package io.ferrite.broker.admin;

import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.PendingResponse;
import io.ferrite.broker.net.RequestHandler;
import org.agrona.MutableDirectBuffer;

/**
 * The answer to a request whose work the {@link AdminAgent} does: polled by the request's network
 * thread (woken by the agent when the command is done or expired, and at the command's deadline),
 * it writes the response once the agent ran the command — or, when the deadline passed before the
 * agent took it, the response of a request that timed out (nothing of it was done).
 */
public final class AdminAnswer implements PendingResponse
{
    /** Writes the response body from the command's outcome; {@code timedOut}: it never ran. */
    @FunctionalInterface
    public interface Writer
    {
        int write(MutableDirectBuffer out, int outOffset, boolean timedOut);
    }

    private final AdminCommand command;
    private final Writer writer;
    /** The command's deadline, until the agent is found running it: then only its wake-up is awaited. */
    private long deadlineMs;

    private AdminAnswer(final AdminCommand command, final Writer writer)
    {
        this.command = command;
        this.writer = writer;
        this.deadlineMs = command.deadlineMs();
    }

    /** Hands {@code command} to the agent; the connection waits for the answer {@code writer} writes. */
    public static int submit(final AdminAgent agent, final AdminCommand command, final Writer writer, final Connection connection)
    {
        connection.defer(new AdminAnswer(command, writer));
        agent.submit(command);
        return RequestHandler.DEFERRED;
    }

    @Override
    public int poll(final Connection connection, final int outOffset, final long nowMs)
    {
        if (command.isDone())
        {
            return writer.write(connection.out, outOffset, false);
        }
        if (command.isExpired() || nowMs >= deadlineMs && command.expire())
        {
            return writer.write(connection.out, outOffset, true);
        }
        if (nowMs >= deadlineMs)
        {
            deadlineMs = Long.MAX_VALUE; // running: it ends with its real outcome, and the agent wakes us then
        }
        return NOT_READY;
    }

    @Override
    public long deadlineMs()
    {
        return deadlineMs;
    }
}
