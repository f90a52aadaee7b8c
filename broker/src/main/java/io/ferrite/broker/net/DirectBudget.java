package io.ferrite.broker.net;

import com.sun.management.HotSpotDiagnosticMXBean;

import java.lang.management.ManagementFactory;

/**
 * The direct memory one network thread's connections may hold in the buffers made for them at accept and for their
 * TLS, checked before each is made (tls review 1, M1): a buffer the budget has no room for is refused at once
 * ({@link DirectMemoryShortage}: that connection is refused at accept, or closed), without calling
 * {@code ByteBuffer.allocateDirect}. The JDK's refusal costs the calling thread about half a second and a full
 * collection before it throws ({@code java.nio.Bits.reserveMemory}: {@code System.gc()}, then up to nine sleeps of 1 to
 * 256 ms; five refusals measured 530-661 ms with a "Pause Full" each), and the caller here is the network thread: every
 * connection on it waited that long per refused connection, and the whole broker stopped for each full collection.
 *
 * <p>Counted: each connection's first input and output ({@link #FIRST_BUFFERS}, given back when the connection is
 * closed, though the JDK frees them only when a collection finds them: see below) and its TLS buffers (exactly, as they
 * are made and freed by {@link DirectBuffers}). Not counted: the input and output growing past their first sizes for a
 * request or response, which come out of the {@link #RESERVE_DIVISOR reserve} (and, should that run out, still meet the
 * JDK's refusal: it then costs that connection only, and its wait).
 *
 * <p>The limit: {@code -XX:MaxDirectMemorySize} (the JVM's default is the maximum heap) less a quarter kept for
 * everything else (the growth above, the log threads' and coordinators' buffers, closed connections' first buffers not
 * yet collected), shared equally by the network threads. Network thread only: plain fields.
 */
final class DirectBudget
{
    /** A connection's input and output as made at accept ({@link Connection}: 256 B and 1 KiB). */
    static final int FIRST_BUFFERS = Connection.SMALL_READ + Connection.INITIAL_OUTPUT;
    /** One part in this many of the JVM's direct memory is left out of the network threads' budgets. */
    static final int RESERVE_DIVISOR = 4;

    private final long limit;
    private long used;

    DirectBudget(final long limit)
    {
        this.limit = limit;
    }

    /** Each of {@code networkThreads} threads' budget in this JVM: see the class comment. */
    static long perThread(final int networkThreads)
    {
        final long max = maxDirectMemory();
        return (max - max / RESERVE_DIVISOR) / Math.max(1, networkThreads);
    }

    /** {@code -XX:MaxDirectMemorySize}, or the maximum heap when it is not set (0), as the JDK takes it. */
    static long maxDirectMemory()
    {
        final String value = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class).getVMOption("MaxDirectMemorySize").getValue();
        final long set = Long.parseLong(value);
        return set > 0 ? set : Runtime.getRuntime().maxMemory();
    }

    /** Takes {@code bytes} of the budget: false, and nothing taken, when they would pass its limit. */
    boolean take(final int bytes)
    {
        if (used + bytes > limit)
        {
            return false;
        }
        used += bytes;
        return true;
    }

    void giveBack(final int bytes)
    {
        used -= bytes;
    }

    long used()
    {
        return used;
    }

    long limit()
    {
        return limit;
    }

    /** The refusal of {@code bytes} more, for its connection's one log line. */
    DirectMemoryShortage refusal(final int bytes)
    {
        return DirectMemoryShortage.budget(bytes, used, limit);
    }
}
