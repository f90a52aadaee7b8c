package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.admin.AdminAnswer;
import io.ferrite.broker.admin.AdminCommand;
import io.ferrite.broker.net.Connection;
import io.ferrite.wire.message.ArrayDecoder;
import org.agrona.MutableDirectBuffer;

import java.util.HashSet;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * One entry of an admin request (a topic to grow, to delete) and its answer: NONE with no message
 * until a check on the network thread or the admin agent says otherwise; {@code planned} while the
 * agent is to do its work.
 */
abstract class AdminItem
{
    /** None: Kafka 4.4's controller answers REQUEST_TIMED_OUT with a null message (CreateTopics, DeleteTopics, CreatePartitions). */
    static final String TIMED_OUT_MESSAGE = null;

    short error = Errors.NONE;
    String message;
    boolean planned;

    final void answer(final short error, final String message)
    {
        this.error = error;
        this.message = message;
    }

    /**
     * The error to answer: when the agent never took the request, REQUEST_TIMED_OUT for every item,
     * as Kafka answers a request whose controller future failed (its getErrorResponse).
     */
    final short error(final boolean timedOut)
    {
        return timedOut ? Errors.REQUEST_TIMED_OUT : error;
    }

    final String message(final boolean timedOut)
    {
        return timedOut ? TIMED_OUT_MESSAGE : message;
    }

    /**
     * Answers at once when no item is planned (every one failed a check, or validateOnly); else hands
     * {@code work} on the planned items to the agent, with the request's {@code timeoutMs} as its
     * deadline, and the connection waits for {@code writer}'s answer.
     */
    static <T extends AdminItem> int answer(final AdminAgent admin, final Runnable waker, final T[] items, final int timeoutMs,
        final Consumer<T> work, final AdminAnswer.Writer writer, final Connection connection, final MutableDirectBuffer out,
        final int outOffset)
    {
        boolean planned = false;
        for (final T item : items)
        {
            planned |= item.planned;
        }
        if (!planned)
        {
            return writer.write(out, outOffset, false);
        }
        final long deadlineMs = System.currentTimeMillis() + Math.max(0, timeoutMs);
        return AdminAnswer.submit(admin, new Command<>(deadlineMs, waker, items, work), writer, connection);
    }

    /**
     * The keys that stand more than once among a request's {@code elements} ({@code key} reads an
     * element's): Kafka answers every item with such a key INVALID_REQUEST, the first one too.
     */
    static <T extends ArrayDecoder<T>> Set<String> repeated(final T elements, final Function<T, String> key)
    {
        final Set<String> seen = new HashSet<>();
        final Set<String> repeated = new HashSet<>();
        while (elements.hasNext())
        {
            final String k = key.apply(elements.next());
            if (!seen.add(k))
            {
                repeated.add(k);
            }
        }
        return repeated;
    }

    /** The agent's work threw: every planned item not answered otherwise gets UNKNOWN_SERVER_ERROR. */
    static void failed(final AdminItem[] items, final Throwable cause)
    {
        for (final AdminItem item : items)
        {
            if (item.planned && item.error == Errors.NONE)
            {
                item.answer(Errors.UNKNOWN_SERVER_ERROR, cause.toString());
            }
        }
    }

    /** The admin agent's work for a request's items: {@code work} runs on each planned one, in request order. */
    static final class Command<T extends AdminItem> extends AdminCommand
    {
        private final T[] items;
        private final Consumer<T> work;

        Command(final long deadlineMs, final Runnable waker, final T[] items, final Consumer<T> work)
        {
            super(deadlineMs, waker);
            this.items = items;
            this.work = work;
        }

        @Override
        protected void run()
        {
            for (final T item : items)
            {
                if (item.planned)
                {
                    work.accept(item);
                }
            }
        }

        @Override
        protected void failed(final Throwable cause)
        {
            AdminItem.failed(items, cause);
        }
    }
}
