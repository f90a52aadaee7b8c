package io.ferrite.broker.txn;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * What waits for a lane of {@link NodeRequests}: the exchanges its senders queued, and those its thread took from them
 * for a batch that did not join it (carried over, first in line). Senders and the lane's thread share one lock only while
 * exchanges queued together are added or moved to the carried-over ones: pointer work, never a lookup, so a sender (the
 * coordinators' agent, a network thread) never waits on its lane's work (review M1). Only the lane's thread takes.
 */
final class LaneQueue
{
    private final LinkedBlockingQueue<NodeRequests.Exchange> queue = new LinkedBlockingQueue<>();
    private final ConcurrentLinkedDeque<NodeRequests.Exchange> carried = new ConcurrentLinkedDeque<>();
    private final Object joining = new Object();

    /** Any thread: {@code exchanges} queued together (a batch's {@link #carryQueued} finds all or none of them). */
    void addAll(final List<NodeRequests.Exchange> exchanges)
    {
        synchronized (joining)
        {
            queue.addAll(exchanges);
        }
    }

    /** Any thread: whether {@code e}, queued and not taken yet, was removed. */
    boolean remove(final NodeRequests.Exchange e)
    {
        return queue.remove(e);
    }

    /** Any thread: drops those {@code which} accepts, not taken yet. */
    void purge(final Predicate<NodeRequests.Exchange> which)
    {
        carried.removeIf(which);
        queue.removeIf(which);
    }

    /** The lane's thread: the next, carried over first, waiting up to {@code timeoutMs} for one; null if none. */
    NodeRequests.Exchange next(final long timeoutMs) throws InterruptedException
    {
        final NodeRequests.Exchange e = carried.pollFirst();
        return e != null ? e : queue.poll(timeoutMs, TimeUnit.MILLISECONDS);
    }

    /** The lane's thread: moves every queued one behind the carried-over ones, for a batch to look at. */
    void carryQueued()
    {
        synchronized (joining)
        {
            queue.drainTo(carried);
        }
    }

    /** The lane's thread: the carried-over ones in order, left in place (weakly consistent: one purged may still be seen). */
    Iterator<NodeRequests.Exchange> carried()
    {
        return carried.iterator();
    }

    /** The lane's thread: takes {@code e} from the carried-over ones (a walk from the first); false if it was purged meanwhile. */
    boolean takeCarried(final NodeRequests.Exchange e)
    {
        return carried.remove(e);
    }

    /** The lane's thread: every one it holds, in order (carried over, then queued). */
    List<NodeRequests.Exchange> takeAll()
    {
        final List<NodeRequests.Exchange> all = new ArrayList<>();
        for (NodeRequests.Exchange e; (e = carried.pollFirst()) != null; )
        {
            all.add(e);
        }
        queue.drainTo(all);
        return all;
    }
}
