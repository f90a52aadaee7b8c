package io.ferrite.perf.sidebyside;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for the brokers and controllers this runner starts in child JVMs, chosen outside the ephemeral range as
 * test-support's {@code io.ferrite.testing.LoopbackPorts} chooses them for the tests (its javadoc has the why: a
 * port-0 port is an ephemeral one, which any outgoing connection on the machine may take before the child binds it;
 * the kernel never gives an outgoing connection a port outside that range).
 *
 * <p>Perf's own, smaller copy: the runner is main code shipped in {@code benchmarks.jar}, and test-support is a
 * test-scope module that perf's main code does not depend on. Ports from {@value #LOWEST} up to the ephemeral
 * range's low end, from a random start, the first that binds on the wildcard address with {@code SO_REUSEADDR} off,
 * none twice in one JVM.
 */
public final class ChildPorts
{
    private static final int LOWEST = 10_000;
    private static final BitSet HANDED_OUT = new BitSet(65_536);

    private ChildPorts()
    {
    }

    public static synchronized int take() throws IOException
    {
        final int end = ephemeralLow();
        final int size = end - LOWEST;
        final int start = ThreadLocalRandom.current().nextInt(size);
        for (int step = 0; step < size; step++)
        {
            final int port = LOWEST + (start + step) % size;
            if (!HANDED_OUT.get(port) && bindable(port))
            {
                HANDED_OUT.set(port);
                return port;
            }
        }
        throw new IOException("no free port in " + LOWEST + "-" + (end - 1));
    }

    /**
     * The ephemeral range's low end; Linux's default when /proc does not say, or says one too low to choose below
     * (then the ports chosen may be ephemeral ones, as port 0's are).
     */
    private static int ephemeralLow()
    {
        try
        {
            final int low = Integer.parseInt(Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).strip()
                .split("\\s+")[0]);
            if (low > LOWEST + 1_000)
            {
                return low;
            }
        }
        catch (final IOException | RuntimeException unreadable)
        {
            // not Linux: the default
        }
        return 32_768;
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
