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
 * producers pipeline their requests), the messages due together in one write when it is behind (as a producer batches
 * the records due together); an echo thread writes back whatever it reads; a receiver thread reads the echoes and
 * records each message's latency from its intended send time. Blocking sockets with TCP_NODELAY (the kernel wakes the
 * waiting thread, nothing spins), all in the runner's JVM, none allocating per message. What no client and broker can
 * beat on this machine: two socket writes, two wake-ups and the copies.
 */
final class PingPong
{
    /** Messages written together at most, when the sender is behind its schedule. */
    private static final int MAX_BATCH = 64;

    private PingPong()
    {
    }

    static CellResult run(final int size, final FixedRate schedule) throws IOException, InterruptedException
    {
        final Histogram h = FixedRate.histogram();
        final AtomicReference<String> failure = new AtomicReference<>();
        final AtomicLong received = new AtomicLong();
        try (ServerSocketChannel server = ServerSocketChannel.open())
        {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            final Thread echo = new Thread(() -> echo(server, size * MAX_BATCH, failure), "ping-pong-echo");
            echo.setDaemon(true);
            echo.start();
            try (SocketChannel client = SocketChannel.open(server.getLocalAddress()))
            {
                client.setOption(StandardSocketOptions.TCP_NODELAY, true);
                final Thread receiver = new Thread(() -> receive(client, size, schedule, h, received, failure), "ping-pong-receiver");
                receiver.setDaemon(true);
                receiver.start();
                final ByteBuffer out = ByteBuffer.allocateDirect(size * MAX_BATCH);
                schedule.start();
                int next = 0;
                while (next < schedule.total)
                {
                    schedule.awaitDue(next);
                    out.clear();
                    final long now = System.nanoTime();
                    do
                    {
                        out.putLong(out.position(), schedule.due(next)).putInt(out.position() + 8, next);
                        out.position(out.position() + size);
                        next++;
                    }
                    while (next < schedule.total && out.hasRemaining() && schedule.due(next) - now <= 0);
                    out.flip();
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

    /** Reads the echoes, each message's latency from its intended time (its first 8 bytes; its number in the next 4). */
    private static void receive(final SocketChannel client, final int size, final FixedRate schedule, final Histogram h,
        final AtomicLong received, final AtomicReference<String> failure)
    {
        final ByteBuffer in = ByteBuffer.allocateDirect(size * MAX_BATCH);
        try
        {
            while (received.get() < schedule.total && client.read(in) >= 0)
            {
                in.flip();
                final long now = System.nanoTime();
                while (in.remaining() >= size)
                {
                    schedule.record(h, in.getInt(in.position() + 8), now);
                    in.position(in.position() + size);
                    received.incrementAndGet();
                }
                in.compact();
            }
        }
        catch (final IOException ex)
        {
            failure.compareAndSet(null, "receiver: " + ex);
        }
    }

    /** Writes back every byte it reads until the stream ends. */
    private static void echo(final ServerSocketChannel server, final int bufferSize, final AtomicReference<String> failure)
    {
        try (SocketChannel peer = server.accept())
        {
            peer.setOption(StandardSocketOptions.TCP_NODELAY, true);
            final ByteBuffer buffer = ByteBuffer.allocateDirect(bufferSize);
            while (peer.read(buffer) >= 0)
            {
                buffer.flip();
                while (buffer.hasRemaining())
                {
                    peer.write(buffer);
                }
                buffer.clear();
            }
        }
        catch (final IOException ex)
        {
            failure.compareAndSet(null, "echo: " + ex);
        }
    }
}
