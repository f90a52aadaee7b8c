package io.ferrite.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for a child JVM (a broker, a controller, a Connect worker) to bind later: chosen here, free when chosen, and
 * bound by the child some seconds after.
 *
 * <p>Why not port 0. Binding port 0 and closing the socket hands out an <em>ephemeral</em> port, from
 * {@code /proc/sys/net/ipv4/ip_local_port_range} (32768-60999 by default). That is the range every outgoing
 * connection on the machine takes its local port from: every Admin, producer and consumer of every other test JVM
 * (CI runs several at once). In the seconds until the child binds the port, one of those connections can take it,
 * and the child fails with a {@code BindException} (a three-node cluster test lost its third node that way).
 *
 * <p>What this does instead. It chooses from outside the ephemeral range ({@value #LOWEST} up to the range's low end;
 * above its high end if that leaves too few), which the kernel never gives an outgoing connection: only an explicit
 * bind can take such a port. From a random start it steps through the ports and hands out the first that a bind on
 * the wildcard address with {@code SO_REUSEADDR} off accepts: the wildcard bind fails if anything is bound to the port
 * on any local address, and with {@code SO_REUSEADDR} off it also fails while connections on it linger in
 * {@code TIME_WAIT}, so a port a child bound (with Java's default {@code SO_REUSEADDR} on) can bind again. A port is
 * handed out at most once per JVM, so two nodes of one test never share one even before either binds it.
 *
 * <p>What remains. Another JVM choosing the same port in the same gap: both must make the same random pick (one in
 * some 22,000 by default) and both bind checks must run before either child binds. A process binding that very port
 * explicitly in the gap (nothing on a test machine is expected to). A child that fails to bind anyway fails its start;
 * harnesses that can restart cheaply may choose new ports and start again.
 */
public final class LoopbackPorts
{
    /** Below this are the registered ports of services a machine may run (databases, caches, other brokers). */
    static final int LOWEST = 10_000;
    private static final int HIGHEST = 65_535;
    /** Fewer than this many ports below the ephemeral range: choose above it instead. */
    private static final int ENOUGH = 1_000;
    private static final Path RANGE_FILE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");

    private static final int[] EPHEMERAL = ephemeralRange(RANGE_FILE);
    private static final BitSet HANDED_OUT = new BitSet(HIGHEST + 1);

    private LoopbackPorts()
    {
    }

    /** One port, free now, outside the ephemeral range, never handed out before by this JVM. */
    public static int take() throws IOException
    {
        return take(1)[0];
    }

    /** {@code count} distinct ports as {@link #take()} gives them. */
    public static synchronized int[] take(final int count) throws IOException
    {
        final int[] chosenFrom = chosenFrom(EPHEMERAL);
        final int size = chosenFrom[1] - chosenFrom[0] + 1;
        if (size <= 0)
        {
            throw new IOException("no ports outside the ephemeral range " + EPHEMERAL[0] + "-" + EPHEMERAL[1]);
        }
        final int[] ports = new int[count];
        for (int i = 0; i < count; i++)
        {
            ports[i] = next(chosenFrom[0], size);
        }
        return ports;
    }

    /** The ports chosen from, {@code [low, high]}, given the ephemeral range {@code [low, high]}. */
    static int[] chosenFrom(final int[] ephemeral)
    {
        return ephemeral[0] - LOWEST >= ENOUGH ? new int[] {LOWEST, ephemeral[0] - 1} : new int[] {ephemeral[1] + 1, HIGHEST};
    }

    /** The ephemeral range as {@code [low, high]}: from {@code rangeFile}, or Linux's default if it cannot be read. */
    static int[] ephemeralRange(final Path rangeFile)
    {
        try
        {
            final String[] bounds = Files.readString(rangeFile, StandardCharsets.US_ASCII).strip().split("\\s+");
            final int low = Integer.parseInt(bounds[0]);
            final int high = Integer.parseInt(bounds[bounds.length - 1]);
            if (bounds.length == 2 && 0 < low && low <= high && high <= HIGHEST)
            {
                return new int[] {low, high};
            }
        }
        catch (final IOException | RuntimeException unreadable)
        {
            // not Linux, or no /proc: the default below
        }
        return new int[] {32_768, 60_999};
    }

    static int[] ephemeralRange()
    {
        return EPHEMERAL.clone();
    }

    static synchronized boolean handedOut(final int port)
    {
        return HANDED_OUT.get(port);
    }

    /** The first port from a random one in {@code [low, low + size)} on, wrapping, not handed out and bindable. */
    static synchronized int next(final int low, final int size) throws IOException
    {
        final int start = ThreadLocalRandom.current().nextInt(size);
        for (int step = 0; step < size; step++)
        {
            final int port = low + (start + step) % size;
            if (!HANDED_OUT.get(port) && bindable(port))
            {
                HANDED_OUT.set(port);
                return port;
            }
        }
        throw new IOException("no free port in " + low + "-" + (low + size - 1));
    }

    private static boolean bindable(final int port)
    {
        try (ServerSocket probe = new ServerSocket())
        {
            probe.setReuseAddress(false);
            probe.bind(new InetSocketAddress(port), 1);
            return true;
        }
        catch (final IOException taken)
        {
            return false;
        }
    }
}
