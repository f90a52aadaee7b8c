package io.ferrite.replication;

import io.ferrite.testing.LoopbackPorts;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/** What the child-JVM quorum tests share: voters on free loopback ports, and stopping the children. */
final class LoopbackVoters
{
    private LoopbackVoters()
    {
    }

    /** Nodes 1..n on ports free a moment ago (outside the ephemeral range: {@link LoopbackPorts}): their controller listeners' addresses, in node order. */
    static List<InetSocketAddress> addresses(final int n) throws IOException
    {
        final List<InetSocketAddress> addresses = new ArrayList<>();
        for (final int port : LoopbackPorts.take(n))
        {
            addresses.add(new InetSocketAddress("127.0.0.1", port));
        }
        return addresses;
    }

    /** {@code controller.quorum.voters} naming nodes 1..n at {@code addresses}. */
    static String voters(final List<InetSocketAddress> addresses)
    {
        final StringBuilder voters = new StringBuilder();
        for (int id = 1; id <= addresses.size(); id++)
        {
            final InetSocketAddress address = addresses.get(id - 1);
            voters.append(id == 1 ? "" : ",").append(id).append('@').append(address.getHostString()).append(':').append(address.getPort());
        }
        return voters.toString();
    }

    /** SIGKILLs every child started. */
    static void killAll(final Process[] members)
    {
        for (final Process member : members)
        {
            if (member != null)
            {
                member.destroyForcibly();
            }
        }
    }
}
