package io.ferrite.perf.soak;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * What the network does now to each directed link between the nodes of a soak's cluster: a link {@code from -> to}
 * is every TCP connection node {@code from} opens to one of node {@code to}'s listeners (broker and controller), and
 * carries the requests of {@code from} and their answers. Node 0 stands for the soak's own clients (producers,
 * consumers, the admin); their links always pass. Written by the nemesis, read by every {@link LinkProxy} pump on
 * each chunk it forwards.
 */
final class Links
{
    /** What a link does to the bytes of its connections. */
    enum Mode
    {
        /** forwards every byte. */
        PASS,
        /**
         * forwards each chunk read (up to 64 KiB) {@link Link#delayMs} late, one after another on the connection's pump:
         * a latency for a small request or answer, a throughput cap of 64 KiB per delay for a large one.
         */
        DELAY,
        /** closes the link's connections and every new one at once (the peer sees a reset/EOF). */
        DROP,
        /** accepts connections, reads and discards their bytes, forwards nothing (the peer sees silence). */
        BLACKHOLE
    }

    record Link(Mode mode, int delayMs)
    {
        static final Link PASS = new Link(Mode.PASS, 0);
    }

    /** Told when a link changes, so that a proxy can close the connections the change breaks. */
    interface Listener
    {
        void changed(int from, int to, Link before, Link after);
    }

    private final int nodes;
    private final AtomicReferenceArray<Link> links;
    private final java.util.List<Listener> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final java.util.concurrent.atomic.AtomicLongArray accepted;
    private final java.util.concurrent.atomic.AtomicLong acceptFailures = new java.util.concurrent.atomic.AtomicLong();

    Links(final int nodes)
    {
        this.nodes = nodes;
        this.links = new AtomicReferenceArray<>((nodes + 1) * (nodes + 1));
        this.accepted = new java.util.concurrent.atomic.AtomicLongArray((nodes + 1) * (nodes + 1));
        for (int i = 0; i < links.length(); i++)
        {
            links.set(i, Link.PASS);
        }
    }

    void listen(final Listener listener)
    {
        listeners.add(listener);
    }

    Link get(final int from, final int to)
    {
        return from == 0 ? Link.PASS : links.get(from * (nodes + 1) + to);
    }

    void set(final int from, final int to, final Link link)
    {
        final Link before = links.getAndSet(from * (nodes + 1) + to, link);
        for (final Listener l : listeners)
        {
            l.changed(from, to, before, link);
        }
    }

    /** Counts a connection a proxy of node {@code to} accepted from {@code from} (0: a client). */
    void accepted(final int from, final int to)
    {
        accepted.incrementAndGet(from * (nodes + 1) + to);
    }

    /** Counts a connection a proxy accepted and then closed on an unexpected failure (its acceptor goes on). */
    void acceptFailed()
    {
        acceptFailures.incrementAndGet();
    }

    long acceptFailures()
    {
        return acceptFailures.get();
    }

    /** The connections accepted per link so far, as "from->to" (0: the soak's clients): which peers the proxies told apart. */
    java.util.Map<String, Long> acceptedCounts()
    {
        final java.util.Map<String, Long> out = new java.util.TreeMap<>();
        for (int from = 0; from <= nodes; from++)
        {
            for (int to = 1; to <= nodes; to++)
            {
                final long n = accepted.get(from * (nodes + 1) + to);
                if (n > 0)
                {
                    out.put(from + "->" + to, n);
                }
            }
        }
        return out;
    }

    /** Every link between two nodes back to {@link Link#PASS}. */
    void healAll()
    {
        for (int from = 1; from <= nodes; from++)
        {
            for (int to = 1; to <= nodes; to++)
            {
                if (from != to && get(from, to).mode() != Mode.PASS)
                {
                    set(from, to, Link.PASS);
                }
            }
        }
    }
}
