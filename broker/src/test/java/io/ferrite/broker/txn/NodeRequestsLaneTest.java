package io.ferrite.broker.txn;

import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.wire.message.ApiKeys;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.util.concurrent.CountDownLatch;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * Review 1 of txnsend, M2: what a request's own code throws on its lane's thread ({@link NodeRequests.Exchange#resolve},
 * a {@code failed} callback) fails that request alone; the lane goes on, so the next request to the node is still sent
 * and answered or failed. The node is a real socket that accepts each connection and closes it (every exchange fails).
 */
class NodeRequestsLaneTest
{
    @Test
    void aRequestWhoseCodeThrowsFailsAloneAndTheNextToTheSameNodeIsStillSent() throws Exception
    {
        try (ServerSocket node = new ServerSocket(0, 8, InetAddress.getLoopbackAddress()))
        {
            final Thread closes = new Thread(() ->
            {
                try
                {
                    while (!node.isClosed())
                    {
                        node.accept().close(); // every exchange ends without an answer
                    }
                }
                catch (final IOException ignored)
                {
                    // closed at the test's end
                }
            });
            closes.setDaemon(true);
            closes.start();
            final InetSocketAddress to = new InetSocketAddress(InetAddress.getLoopbackAddress(), node.getLocalPort());
            final NodeRequests requests = new NodeRequests(FetcherSettings.KAFKA_DEFAULTS, "lane-test", 64 * 1024);
            try
            {
                final IllegalStateException broken = new IllegalStateException("no image");
                final Probe resolveThrows = new Probe(to)
                {
                    @Override
                    public InetSocketAddress resolve()
                    {
                        throw broken;
                    }
                };
                requests.send(resolveThrows);
                await(() -> resolveThrows.failures.get() > 0, Duration.ofSeconds(30), "the request whose resolve threw failed");
                assertSame(broken, resolveThrows.cause.get(), "failed with what its resolve threw");

                final Probe failedThrows = new Probe(to)
                {
                    @Override
                    public void failed(final Exception cause)
                    {
                        super.failed(cause);
                        throw new IllegalStateException("a callback's bug");
                    }
                };
                requests.send(failedThrows);
                await(() -> failedThrows.failures.get() > 0, Duration.ofSeconds(30), "the request to the closing node failed");

                final Probe next = new Probe(to);
                requests.send(next);
                await(() -> next.failures.get() > 0, Duration.ofSeconds(30), "the next request to the node sent, and failed");
                assertInstanceOf(IOException.class, next.cause.get(), "the node closed its connection: " + next.cause.get());
                assertEquals(1, resolveThrows.failures.get(), "failed once");
                assertEquals(1, failedThrows.failures.get(), "failed once");
                assertEquals(1, next.failures.get(), "failed once");
                assertEquals(0, resolveThrows.answers.get() + failedThrows.answers.get() + next.answers.get(), "answered");
            }
            finally
            {
                requests.close();
            }
        }
    }

    /**
     * Review 1 of txnsend, LOW 7: a request queued behind one in flight to node X, whose destination moves to node Y
     * meanwhile, is sent to Y when X's lane takes it (after X answered the one in flight: the take, not the fan-out of a
     * failed exchange, routes it). X holds its first request's answer until released, and counts the requests it reads;
     * Y counts its connections and closes each.
     */
    @Test
    void aQueuedRequestWhoseDestinationMovedToAnotherNodeGoesThereWhenItsLaneTakesIt() throws Exception
    {
        try (ServerSocket x = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
            ServerSocket y = new ServerSocket(0, 8, InetAddress.getLoopbackAddress()))
        {
            final CountDownLatch release = new CountDownLatch(1);
            final AtomicInteger readByX = new AtomicInteger();
            final AtomicInteger acceptedByY = new AtomicInteger();
            final Thread servesX = ForgottenRemoteMarkersTest.daemon(() ->
            {
                try (Socket s = x.accept(); DataInputStream in = new DataInputStream(s.getInputStream());
                    DataOutputStream out = new DataOutputStream(s.getOutputStream()))
                {
                    while (true)
                    {
                        final byte[] request = new byte[in.readInt()];
                        in.readFully(request);
                        if (readByX.incrementAndGet() == 1)
                        {
                            release.await();
                        }
                        out.writeInt(4); // a response header v0 (the correlation id), no body
                        out.write(request, 4, 4);
                        out.flush();
                    }
                }
                catch (final InterruptedException e)
                {
                    Thread.currentThread().interrupt();
                }
            });
            final Thread servesY = ForgottenRemoteMarkersTest.daemon(() ->
            {
                while (!y.isClosed())
                {
                    y.accept().close();
                    acceptedByY.incrementAndGet();
                }
            });
            final InetSocketAddress toX = new InetSocketAddress(InetAddress.getLoopbackAddress(), x.getLocalPort());
            final InetSocketAddress toY = new InetSocketAddress(InetAddress.getLoopbackAddress(), y.getLocalPort());
            final NodeRequests requests = new NodeRequests(FetcherSettings.KAFKA_DEFAULTS, "lane-test", 64 * 1024);
            try
            {
                final Probe held = new Probe(toX);
                requests.send(held);
                await(() -> readByX.get() == 1, Duration.ofSeconds(30), "X read the first request");
                final Probe moving = new Probe(toX);
                requests.send(moving); // queued behind the one in flight
                moving.now = toY;
                release.countDown();
                await(() -> held.answers.get() == 1 && moving.failures.get() == 1, Duration.ofSeconds(30),
                    () -> "the first answered by X, the moved one sent to Y (closed there): " + held.answers + "/" + held.failures
                        + ", " + moving.answers + "/" + moving.failures);
                assertEquals(1, acceptedByY.get(), "connections Y took: the moved request's");
                assertEquals(1, readByX.get(), "requests X read: the first alone");
                assertInstanceOf(IOException.class, moving.cause.get(), "Y closed its connection: " + moving.cause.get());
            }
            finally
            {
                requests.close();
                x.close();
                y.close();
                servesX.join(10_000);
                servesY.join(10_000);
            }
        }
    }

    /**
     * Review M1: a sender never waits on its lane's lookups. Two requests queued together; the lane, joining the second to
     * the first's batch, asks where the second goes, and that lookup blocks (a slow image, say). Meanwhile another thread
     * (the coordinators' agent, a network thread) queues a third for the same node: its send returns at once. The node
     * answers every request; each of the three is answered once, the third in a request of its own after the batch.
     */
    @Test
    void aSenderDoesNotWaitWhileItsLaneLooksUpWhereAQueuedRequestGoes() throws Exception
    {
        try (ServerSocket node = new ServerSocket(0, 8, InetAddress.getLoopbackAddress()))
        {
            final AtomicInteger read = new AtomicInteger();
            final Thread serves = ForgottenRemoteMarkersTest.daemon(() ->
            {
                try (Socket s = node.accept(); DataInputStream in = new DataInputStream(s.getInputStream());
                    DataOutputStream out = new DataOutputStream(s.getOutputStream()))
                {
                    while (true)
                    {
                        final byte[] request = new byte[in.readInt()];
                        in.readFully(request);
                        read.incrementAndGet();
                        out.writeInt(4); // a response header v0 (the correlation id), no body
                        out.write(request, 4, 4);
                        out.flush();
                    }
                }
            });
            final InetSocketAddress to = new InetSocketAddress(InetAddress.getLoopbackAddress(), node.getLocalPort());
            final NodeRequests requests = new NodeRequests(FetcherSettings.KAFKA_DEFAULTS, "lane-test", 64 * 1024);
            final CountDownLatch lookingUp = new CountDownLatch(1);
            final CountDownLatch lookedUp = new CountDownLatch(1);
            try
            {
                final Probe first = new Batched(to);
                final Probe slow = new Batched(to)
                {
                    @Override
                    public InetSocketAddress resolve()
                    {
                        lookingUp.countDown();
                        try
                        {
                            lookedUp.await();
                        }
                        catch (final InterruptedException e)
                        {
                            Thread.currentThread().interrupt();
                        }
                        return super.resolve();
                    }
                };
                requests.sendAll(java.util.List.of(first, slow));
                await(() -> lookingUp.getCount() == 0, Duration.ofSeconds(30), "the lane looks up where the second goes");
                final Probe third = new Batched(to);
                final Thread agent = ForgottenRemoteMarkersTest.daemon(() -> requests.send(third));
                await(() -> !agent.isAlive(), Duration.ofSeconds(10),
                    () -> "the third's send returned while the lane looks up (its thread is " + agent.getState() + ")");
                lookedUp.countDown();
                await(() -> first.answers.get() + slow.answers.get() + third.answers.get() == 3, Duration.ofSeconds(30),
                    () -> "each answered: " + first.answers + ", " + slow.answers + ", " + third.answers);
                assertEquals(0, first.failures.get() + slow.failures.get() + third.failures.get(), "failed");
                assertEquals(2, read.get(), "requests the node read: the first two in one, the third in the next");
            }
            finally
            {
                lookedUp.countDown();
                requests.close();
                node.close();
                serves.join(10_000);
            }
        }
    }

    /** A {@link Probe} that shares its request with the probes queued behind it ({@link Probes}). */
    private static class Batched extends Probe
    {
        Batched(final InetSocketAddress to)
        {
            super(to);
        }

        @Override
        public NodeRequests.Request request()
        {
            return new Probes(this);
        }
    }

    /** Probes in one ApiVersions v0 request: the answer goes to each. */
    private static final class Probes extends RequestBatch<Probe>
    {
        Probes(final Probe first)
        {
            super(ApiKeys.API_VERSIONS, (short)0, Probe.class, first, 1024);
        }

        @Override
        protected int bytes(final Probe member)
        {
            return 1;
        }

        @Override
        protected boolean joins(final Probe member)
        {
            return true;
        }

        @Override
        public int write(final MutableDirectBuffer out, final int at)
        {
            return 0;
        }

        @Override
        public void answered(final DirectBuffer in, final int body, final int limit)
        {
            members().forEach(p -> p.answered(in, body, limit));
        }
    }

    /** An ApiVersions request to {@code to} that records how it ended. */
    private static class Probe implements NodeRequests.Exchange, NodeRequests.Request
    {
        /** Where it goes when its lane takes it. */
        volatile InetSocketAddress now;
        final AtomicInteger answers = new AtomicInteger();
        final AtomicInteger failures = new AtomicInteger();
        final AtomicReference<Exception> cause = new AtomicReference<>();

        Probe(final InetSocketAddress to)
        {
            this.now = to;
        }

        @Override
        public InetSocketAddress to()
        {
            return now; // as a marker's: the node it was last routed to
        }

        @Override
        public NodeRequests.Request request()
        {
            return this; // alone
        }

        @Override
        public ApiKeys api()
        {
            return ApiKeys.API_VERSIONS;
        }

        @Override
        public short version()
        {
            return 0;
        }

        @Override
        public int write(final MutableDirectBuffer out, final int at)
        {
            return 0; // ApiVersions v0: an empty body
        }

        @Override
        public InetSocketAddress resolve()
        {
            return now;
        }

        @Override
        public void answered(final DirectBuffer in, final int body, final int limit)
        {
            answers.incrementAndGet();
        }

        @Override
        public void failed(final Exception cause)
        {
            this.cause.compareAndSet(null, cause);
            failures.incrementAndGet();
        }
    }
}
