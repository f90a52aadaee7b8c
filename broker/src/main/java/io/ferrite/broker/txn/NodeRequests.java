package io.ferrite.broker.txn;

import io.ferrite.broker.replica.FetcherChannel;
import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.RequestHeaderEncoder;
import io.ferrite.wire.message.ResponseHeaderDecoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Requests of the transaction coordinator's protocol to other nodes of a cluster (issue 14): the markers to a partition's
 * leader ({@link RemoteMarkers}) and a leader's produce verification to the transactional id's coordinator
 * ({@link RemoteVerifier}). Each destination node has a lane of its own: a queue and a thread sending over one kept
 * node-to-node connection ({@link FetcherChannel}, as the follower fetchers: connect and request bounded by
 * {@code socket.connection.setup.timeout.ms} and {@code replica.socket.timeout.ms}), one request in flight at a time, in
 * the order queued, as Kafka's InterBrokerSendThread keeps one connection per broker. A node that does not answer holds
 * its own lane only, up to the timeout; when an exchange with it fails, every request queued behind it fails at once
 * (their senders retry them — a marker to the partition's leader of then) rather than each waiting a timeout of its own.
 * When its lane takes a request, where it goes is asked again ({@link Exchange#resolve}): one whose destination moved
 * meanwhile goes to that node's lane instead.
 */
public final class NodeRequests implements AutoCloseable
{
    /** One request and its answer; {@link #answered} or {@link #failed} runs on a lane's thread, once. */
    public interface Exchange
    {
        /** The node it is for, when queued. */
        InetSocketAddress to();

        /**
         * When its lane takes it: the node it is for now (another lane's takes it), or null when it is no longer for
         * any node (it is then {@link #failed}). {@link #to} unless the exchange follows its destination.
         */
        default InetSocketAddress resolve()
        {
            return to();
        }

        ApiKeys api();

        short version();

        /** Writes the request's body at {@code at} of {@code out}; returns its length. */
        int write(MutableDirectBuffer out, int at);

        /** The answer's body, {@code body} to {@code limit} of {@code in}. */
        void answered(DirectBuffer in, int body, int limit);

        /** No answer: the connection failed, timed out, or the answer could not be read. */
        void failed(Exception cause);
    }

    private final FetcherSettings settings;
    private final String clientId;
    private final int frameBytes;
    /** The lanes by destination, made at its first request. */
    private final Map<InetSocketAddress, Lane> lanes = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** Requests up to {@code frameBytes}; a lane's thread starts with its first request. */
    public NodeRequests(final FetcherSettings settings, final String clientId, final int frameBytes)
    {
        this.settings = settings;
        this.clientId = clientId;
        this.frameBytes = frameBytes;
    }

    /** Any thread: sends {@code exchange} after those queued before it for the same node. */
    public void send(final Exchange exchange)
    {
        if (closed)
        {
            exchange.failed(new IOException("closed"));
            return;
        }
        final Lane lane;
        try
        {
            lane = lanes.computeIfAbsent(exchange.to(), Lane::new);
        }
        catch (final UncheckedIOException ex)
        {
            exchange.failed(ex.getCause()); // no selector for its connection: made again at the next request
            return;
        }
        lane.queue.add(exchange);
    }

    /** Any thread: drops the exchanges still queued that {@code which} accepts; they are neither sent nor answered. */
    public void purge(final Predicate<Exchange> which)
    {
        lanes.values().forEach(lane -> lane.queue.removeIf(which));
    }

    /** One destination's queue, connection and thread. */
    private final class Lane implements Runnable
    {
        private final InetSocketAddress to;
        private final LinkedBlockingQueue<Exchange> queue = new LinkedBlockingQueue<>();
        private final FetcherChannel channel;
        private final UnsafeBuffer out;
        private final RequestHeaderEncoder header = new RequestHeaderEncoder();
        private final ResponseHeaderDecoder responseHeader = new ResponseHeaderDecoder();
        private final Thread thread;
        private int correlationId;

        Lane(final InetSocketAddress to)
        {
            this.to = to;
            try
            {
                this.channel = new FetcherChannel(to, settings, frameBytes);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
            this.out = new UnsafeBuffer(ByteBuffer.allocateDirect(frameBytes));
            this.thread = new Thread(this, clientId + "-" + to.getHostString() + ":" + to.getPort());
            thread.setDaemon(true);
            thread.start();
        }

        @Override
        public void run()
        {
            while (!closed)
            {
                final Exchange e;
                try
                {
                    e = queue.poll(100, TimeUnit.MILLISECONDS);
                }
                catch (final InterruptedException ex)
                {
                    break;
                }
                if (e != null)
                {
                    take(e);
                }
            }
            failQueued(new IOException("closed")); // those waiting on an answer are not left waiting
            channel.close();
        }

        private void take(final Exchange e)
        {
            final InetSocketAddress now = e.resolve();
            if (now == null)
            {
                e.failed(new IOException("no longer for any node (was " + to + ")"));
            }
            else if (!now.equals(to))
            {
                send(e); // its destination moved: that node's lane
            }
            else if (!exchange(e))
            {
                failQueued(new IOException("an earlier request to " + to + " failed")); // retried by their senders
            }
        }

        /** Each exchange queued fails now, but one whose destination moved meanwhile, which goes to that node's lane. */
        private void failQueued(final Exception cause)
        {
            final List<Exchange> queued = new ArrayList<>();
            queue.drainTo(queued);
            for (final Exchange q : queued)
            {
                final InetSocketAddress now = closed ? null : q.resolve();
                if (now != null && !now.equals(to))
                {
                    send(q);
                }
                else
                {
                    q.failed(cause);
                }
            }
        }

        /** Whether the node answered (even an answer the exchange could not read). */
        private boolean exchange(final Exchange e)
        {
            final int length;
            final int body;
            try
            {
                if (!channel.connected())
                {
                    channel.connect();
                }
                channel.send(out.byteBuffer().clear().limit(encode(e)));
                length = channel.receive();
                body = responseHeader.wrap(channel.inBuffer, 0, length, e.api().responseHeaderVersion(e.version()));
                if (responseHeader.correlationId() != correlationId)
                {
                    throw new IOException("an answer to request " + responseHeader.correlationId() + ", expected " + correlationId);
                }
            }
            catch (final IOException | RuntimeException ex)
            {
                channel.disconnect();
                e.failed(ex);
                return false;
            }
            try
            {
                e.answered(channel.inBuffer, body, length);
            }
            catch (final RuntimeException ex)
            {
                channel.disconnect(); // an answer it could not read: the next request starts on a new connection
                e.failed(ex);
            }
            return true;
        }

        private int encode(final Exchange e)
        {
            int at = FetcherChannel.SIZE_LENGTH;
            final ApiKeys api = e.api();
            at += header.wrap(out, at, api.requestHeaderVersion(e.version())).requestApiKey(api.id).requestApiVersion(e.version())
                .correlationId(++correlationId).clientId(clientId).finish();
            at += e.write(out, at);
            out.putInt(0, at - FetcherChannel.SIZE_LENGTH, ByteOrder.BIG_ENDIAN);
            return at;
        }
    }

    @Override
    public void close() throws InterruptedException
    {
        closed = true;
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (final Lane lane : lanes.values())
        {
            lane.thread.interrupt();
            lane.channel.close(); // ends a connect or a wait in progress
        }
        for (final Lane lane : lanes.values())
        {
            lane.thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        }
    }
}
