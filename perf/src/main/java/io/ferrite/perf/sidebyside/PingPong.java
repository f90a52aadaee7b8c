package io.ferrite.perf.sidebyside;

import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The floor of {@link ClientLatency}'s table: a bare TCP ping-pong on loopback with no protocol at all. A sender
 * writes each message (the clients' record size) on a {@link FixedRate} schedule without waiting for the answers (as the
 * producers pipeline their requests); an echo thread reads each message whole and writes it back whole; a receiver
 * thread reads the echoes and records each one's latency from its message's intended send time. Blocking sockets with
 * TCP_NODELAY (the kernel wakes the waiting thread, nothing spins), all in the runner's JVM, none allocating per
 * message. What no client and broker can beat on this machine: two socket writes, two wake-ups and the copies.
 */
final class PingPong
{
    private PingPong()
    {
    }

    static CellResult run(final int size, final FixedRate schedule) throws IOException, InterruptedException
    {
        final Histogram h = FixedRate.histogram();
        final AtomicReference<String> failure = new AtomicReference<>();
        try (ServerSocketChannel server = ServerSocketChannel.open())
        {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            final Thread echo = new Thread(() -> echo(server, size, failure), "ping-pong-echo");
            echo.setDaemon(true);
            echo.start();
            final AtomicLong received = new AtomicLong();
            try (SocketChannel client = SocketChannel.open(server.getLocalAddress()))
            {
                client.setOption(StandardSocketOptions.TCP_NODELAY, true);
                final Thread receiver = new Thread(() ->
                {
                    final ByteBuffer in = ByteBuffer.allocateDirect(size);
                    try
                    {
                        for (int i = 0; i < schedule.total; i++)
                        {
                            if (!readFully(client, in))
                            {
                                break;
                            }
                            schedule.record(h, in.getInt(8), System.nanoTime());
                            received.incrementAndGet();
                        }
                    }
                    catch (final IOException ex)
                    {
                        failure.compareAndSet(null, "receiver: " + ex);
                    }
                }, "ping-pong-receiver");
                receiver.setDaemon(true);
                receiver.start();
                final ByteBuffer out = ByteBuffer.allocateDirect(size);
                schedule.start();
                for (int i = 0; i < schedule.total; i++)
                {
                    schedule.awaitDue(i);
                    out.clear();
                    out.putLong(0, schedule.due(i)).putInt(8, i);
                    while (out.hasRemaining())
                    {
                        client.write(out);
                    }
                }
                receiver.join(TimeUnit.NANOSECONDS.toMillis(Math.max(1, schedule.deadline() - System.nanoTime())));
            }
            echo.join(TimeUnit.SECONDS.toMillis(10));
            final long missing = schedule.total - received.get();
            return new CellResult(h, null, missing, missing > 0 ? received.get() + " of " + schedule.total + " echoes received"
                + (failure.get() == null ? "" : ": " + failure.get()) : null);
        }
    }

    private static void echo(final ServerSocketChannel server, final int size, final AtomicReference<String> failure)
    {
        try (SocketChannel peer = server.accept())
        {
            peer.setOption(StandardSocketOptions.TCP_NODELAY, true);
            final ByteBuffer buffer = ByteBuffer.allocateDirect(size);
            while (readFully(peer, buffer))
            {
                buffer.flip();
                while (buffer.hasRemaining())
                {
                    peer.write(buffer);
                }
            }
        }
        catch (final IOException ex)
        {
            failure.compareAndSet(null, "echo: " + ex);
        }
    }

    /** Reads one whole message into {@code buffer} (cleared first); false at the end of the stream before any byte. */
    private static boolean readFully(final SocketChannel channel, final ByteBuffer buffer) throws IOException
    {
        buffer.clear();
        while (buffer.hasRemaining())
        {
            if (channel.read(buffer) < 0)
            {
                if (buffer.position() == 0)
                {
                    return false;
                }
                throw new IOException("the stream ended inside a message");
            }
        }
        return true;
    }
}
