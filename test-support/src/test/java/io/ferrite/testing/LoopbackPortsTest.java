package io.ferrite.testing;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LoopbackPortsTest
{
    @Test
    void portsAreOutsideTheEphemeralRangeDistinctAndBindable() throws IOException
    {
        final int[] ephemeral = LoopbackPorts.ephemeralRange();
        final Set<Integer> seen = new HashSet<>();
        for (int round = 0; round < 20; round++)
        {
            for (final int port : LoopbackPorts.take(6))
            {
                assertTrue(port < ephemeral[0] || port > ephemeral[1], port + " is in the ephemeral range");
                assertTrue(port >= LoopbackPorts.LOWEST, port + " is below " + LoopbackPorts.LOWEST);
                assertTrue(seen.add(port), port + " handed out twice");
                // as a child binds it: loopback, Java's default SO_REUSEADDR
                try (ServerSocket child = new ServerSocket(port, 50, InetAddress.getLoopbackAddress()))
                {
                    assertEquals(port, child.getLocalPort());
                }
            }
        }
        assertEquals(120, seen.size());
    }

    @Test
    void aPortBoundElsewhereOrHandedOutBeforeIsPassedOver() throws IOException
    {
        // eleven ports in a row that bind now and this JVM has not handed out (the other tests may have); hold ten: from
        // wherever it starts, the chooser must end on the eleventh
        final int[] chosenFrom = LoopbackPorts.chosenFrom(LoopbackPorts.ephemeralRange());
        final List<ServerSocket> held = new ArrayList<>();
        try
        {
            int first = chosenFrom[0];
            for (int port = first; held.size() < 11; port++)
            {
                assertTrue(port <= chosenFrom[1], "no eleven ports in a row bind in " + chosenFrom[0] + "-" + chosenFrom[1]);
                final ServerSocket holder = LoopbackPorts.handedOut(port) ? null : hold(port);
                if (holder != null)
                {
                    held.add(holder);
                }
                else
                {
                    held.forEach(LoopbackPortsTest::closeQuietly);
                    held.clear();
                    first = port + 1;
                }
            }
            closeQuietly(held.remove(10));
            // from any start it steps over the held ones (wrapping at the end) to the free one
            assertEquals(first + 10, LoopbackPorts.next(first, 11));
            // which is now handed out: nothing is left
            final int block = first;
            assertThrows(IOException.class, () -> LoopbackPorts.next(block, 11));
        }
        finally
        {
            held.forEach(LoopbackPortsTest::closeQuietly);
        }
    }

    @Test
    void theRangeIsReadFromTheFileOrDefaults(@TempDir final Path dir) throws IOException
    {
        final Path file = dir.resolve("ip_local_port_range");
        Files.writeString(file, "40000\t50000\n", StandardCharsets.US_ASCII);
        assertArrayEquals(new int[] {40_000, 50_000}, LoopbackPorts.ephemeralRange(file));
        Files.writeString(file, "garbage\n", StandardCharsets.US_ASCII);
        assertArrayEquals(new int[] {32_768, 60_999}, LoopbackPorts.ephemeralRange(file));
        assertArrayEquals(new int[] {32_768, 60_999}, LoopbackPorts.ephemeralRange(dir.resolve("absent")));
    }

    @Test
    void belowTheRangeWhenThereIsRoomAboveItOtherwise()
    {
        assertArrayEquals(new int[] {10_000, 32_767}, LoopbackPorts.chosenFrom(new int[] {32_768, 60_999}));
        assertArrayEquals(new int[] {61_000, 65_535}, LoopbackPorts.chosenFrom(new int[] {1_024, 60_999}));
        assertArrayEquals(new int[] {65_001, 65_535}, LoopbackPorts.chosenFrom(new int[] {10_500, 65_000}));
    }

    /** A socket bound to {@code port} on every address as the chooser checks it, or null if the port is taken. */
    private static ServerSocket hold(final int port) throws IOException
    {
        final ServerSocket holder = new ServerSocket();
        holder.setReuseAddress(false);
        try
        {
            holder.bind(new InetSocketAddress(port), 1);
            return holder;
        }
        catch (final IOException taken)
        {
            holder.close();
            return null;
        }
    }

    private static void closeQuietly(final ServerSocket socket)
    {
        try
        {
            socket.close();
        }
        catch (final IOException ignored)
        {
            // closing a listening socket does not fail in practice
        }
    }
}
