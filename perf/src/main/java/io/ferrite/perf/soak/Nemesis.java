package io.ferrite.perf.soak;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The soak's fault injector: one fault at a time on a schedule drawn from a seed (the same seed and fault set give
 * the same faults, nodes, modes and durations in the same order, so a run can be replayed; the moments the nodes
 * react differ): a quiet gap of {@code minGap..maxGap}, a fault held for {@code minHold..maxHold}, healed, and again
 * until the time is up. The faults:
 * <ul>
 * <li>{@code kill}: SIGKILL to a node, started again on its files when the hold ends;</li>
 * <li>{@code pause}: SIGSTOP to a node's process, SIGCONT when the hold ends (a GC pause or a frozen VM: its
 *     sockets stay open and nothing answers);</li>
 * <li>{@code partition}: one node cut off from both others (every link to and from it dropped or blackholed), or
 *     the two links between one pair cut, or one directed link alone blackholed;</li>
 * <li>{@code delay}: every link to and from one node delayed by 50-400 ms per chunk each way (each chunk read, up
 *     to 64 KiB, held back that long on the connection's pump: a latency for small requests and answers, a
 *     throughput cap of 64 KiB per delay for large fetch answers).</li>
 * </ul>
 * Every fault is printed when it starts and recorded ({@link Event}).
 */
final class Nemesis implements Runnable
{
    static final List<String> ALL = List.of("kill", "pause", "partition", "delay");

    /** One fault: what, on which nodes, when it started and was healed (ms since the soak began), and what failed. */
    record Event(int index, String fault, String detail, long startMs, long holdMs, long healedMs, String error)
    {
    }

    private final SoakCluster cluster;
    private final Random random;
    private final List<String> faults;
    private final long endNanos;
    private final long zeroNanos;
    private final long[] gapMs;
    private final long[] holdMs;
    private final List<Event> events = Collections.synchronizedList(new ArrayList<>());
    private volatile boolean stopping;

    Nemesis(final SoakCluster cluster, final long seed, final Set<String> faults, final long zeroNanos, final long endNanos,
        final long[] gapMs, final long[] holdMs)
    {
        this.cluster = cluster;
        this.random = new Random(seed);
        this.faults = known(faults);
        this.zeroNanos = zeroNanos;
        this.endNanos = endNanos;
        this.gapMs = gapMs;
        this.holdMs = holdMs;
    }

    /** The faults named, in {@link #ALL}'s order; a name not in it refused (not dropped), and so is none. */
    static List<String> known(final Set<String> faults)
    {
        for (final String f : faults)
        {
            if (!ALL.contains(f))
            {
                throw new IllegalArgumentException("unknown fault " + f + " (known: " + ALL + ")");
            }
        }
        if (faults.isEmpty())
        {
            throw new IllegalArgumentException("no fault (known: " + ALL + ")");
        }
        return ALL.stream().filter(faults::contains).toList();
    }

    List<Event> events()
    {
        synchronized (events)
        {
            return List.copyOf(events);
        }
    }

    void stop()
    {
        stopping = true;
    }

    @Override
    public void run()
    {
        int index = 0;
        while (!stopping)
        {
            final long gap = between(gapMs);
            final String fault = faults.get(random.nextInt(faults.size()));
            final int node = 1 + random.nextInt(SoakCluster.NODES);
            final int other = 1 + (node + random.nextInt(SoakCluster.NODES - 1)) % SoakCluster.NODES;
            final int shape = random.nextInt(3);
            final Links.Mode mode = random.nextBoolean() ? Links.Mode.DROP : Links.Mode.BLACKHOLE;
            final int delay = 50 + random.nextInt(351);
            final long hold = between(holdMs);
            if (!sleepUntil(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(gap))
                || System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(hold) > endNanos)
            {
                return;
            }
            index++;
            final long start = ms();
            String detail = "";
            String error = "";
            try
            {
                detail = inject(fault, node, other, shape, mode, delay);
                System.out.printf(Locale.ROOT, "nemesis %d at %d ms: %s %s for %d ms%n", index, start, fault, detail, hold);
                sleepUntil(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(hold));
            }
            catch (final Exception ex)
            {
                error = "inject: " + ex;
            }
            try
            {
                heal(fault, node);
            }
            catch (final Exception ex)
            {
                error += (error.isEmpty() ? "" : "; ") + "heal: " + ex;
            }
            events.add(new Event(index, fault, detail, start, hold, ms(), error));
        }
    }

    private String inject(final String fault, final int node, final int other, final int shape, final Links.Mode mode,
        final int delay) throws Exception
    {
        switch (fault)
        {
            case "kill" ->
            {
                cluster.kill(node);
                return "node " + node;
            }
            case "pause" ->
            {
                cluster.pause(node);
                return "node " + node;
            }
            case "delay" ->
            {
                isolate(node, new Links.Link(Links.Mode.DELAY, delay));
                return "node " + node + " " + delay + " ms";
            }
            default ->
            {
                final String how = mode.name().toLowerCase(Locale.ROOT);
                if (shape == 0)
                {
                    isolate(node, new Links.Link(mode, 0));
                    return "node " + node + " from both others, " + how;
                }
                if (shape == 1)
                {
                    cluster.links.set(node, other, new Links.Link(mode, 0));
                    cluster.links.set(other, node, new Links.Link(mode, 0));
                    return "nodes " + node + " <-> " + other + ", " + how;
                }
                cluster.links.set(node, other, new Links.Link(Links.Mode.BLACKHOLE, 0));
                return "one way: connections node " + node + " opens to node " + other + ", blackhole";
            }
        }
    }

    private void isolate(final int node, final Links.Link link)
    {
        for (int peer = 1; peer <= SoakCluster.NODES; peer++)
        {
            if (peer != node)
            {
                cluster.links.set(node, peer, link);
                cluster.links.set(peer, node, link);
            }
        }
    }

    private void heal(final String fault, final int node) throws Exception
    {
        switch (fault)
        {
            case "kill" -> cluster.restart(node);
            case "pause" -> cluster.resume(node);
            default -> cluster.links.healAll();
        }
    }

    private long between(final long[] range)
    {
        return range[0] + (range[1] > range[0] ? (long) (random.nextDouble() * (range[1] - range[0])) : 0);
    }

    private long ms()
    {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - zeroNanos);
    }

    /** Sleeps until {@code nanos} or {@link #stop}; false when stopped. */
    private boolean sleepUntil(final long nanos)
    {
        while (!stopping)
        {
            final long wait = nanos - System.nanoTime();
            if (wait <= 0)
            {
                return true;
            }
            try
            {
                TimeUnit.NANOSECONDS.sleep(Math.min(wait, TimeUnit.MILLISECONDS.toNanos(100)));
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return false;
    }
}
