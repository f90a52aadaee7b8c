package io.ferrite.perf.soak;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.function.IntToLongFunction;

/**
 * Which node opened a loopback connection a {@link LinkProxy} accepted: the node whose process owns the connecting
 * socket. Linux lists every TCP socket in {@code /proc/net/tcp} and {@code tcp6} (local and remote address:port in
 * hex, and the socket's inode); the connecting end is the socket whose local port is the accepted connection's
 * remote port and whose remote port is the proxy's; {@code /proc/<pid>/fd/*} of the owner links to
 * {@code socket:[inode]}. This tells the peers apart whatever their client ids say (Ferrite's replica fetcher
 * names the leader it fetches from, {@code ferrite-replica-fetcher-<leader>}, not itself) and covers every
 * connection a node opens: replica fetchers, the raft client, broker-to-controller channels. Linux only.
 */
final class PeerIdentity
{
    private final int nodes;
    private final IntToLongFunction pidOf;

    /** {@code pidOf} answers the pid of node 1..nodes now (a restarted node has a new one), or -1. */
    PeerIdentity(final int nodes, final IntToLongFunction pidOf)
    {
        this.nodes = nodes;
        this.pidOf = pidOf;
    }

    /**
     * The node (1..nodes) that owns the connecting end of a connection from loopback port {@code remotePort} to the
     * proxy's {@code localPort}, or 0 when no node does (the soak's own clients, or the socket is gone).
     */
    int nodeOf(final int remotePort, final int localPort)
    {
        final long inode = inode(remotePort, localPort);
        if (inode <= 0)
        {
            return 0;
        }
        final String link = "socket:[" + inode + "]";
        for (int id = 1; id <= nodes; id++)
        {
            final long pid = pidOf.applyAsLong(id);
            if (pid > 0 && owns(pid, link))
            {
                return id;
            }
        }
        return 0;
    }

    private static long inode(final int localPort, final int remotePort)
    {
        final String local = ":" + hexPort(localPort);
        final String remote = ":" + hexPort(remotePort);
        for (final String table : List.of("/proc/net/tcp", "/proc/net/tcp6"))
        {
            try
            {
                for (final String line : Files.readAllLines(Path.of(table)))
                {
                    final String[] f = line.trim().split("\\s+");
                    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
                    if (f.length > 9 && f[1].endsWith(local) && f[2].endsWith(remote))
                    {
                        return Long.parseLong(f[9]);
                    }
                }
            }
            catch (final IOException | NumberFormatException ex)
            {
                // no such table (no IPv6): the other one
            }
        }
        return -1;
    }

    private static String hexPort(final int port)
    {
        return String.format(Locale.ROOT, "%04X", port);
    }

    private static boolean owns(final long pid, final String link)
    {
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "fd")))
        {
            for (final Path fd : fds)
            {
                try
                {
                    if (link.equals(Files.readSymbolicLink(fd).toString()))
                    {
                        return true;
                    }
                }
                catch (final IOException ex)
                {
                    // the descriptor closed while we looked
                }
            }
        }
        catch (final IOException ex)
        {
            return false; // the process is gone
        }
        return false;
    }
}
