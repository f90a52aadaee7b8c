package io.ferrite.broker.txn;

import io.ferrite.broker.replica.FetcherChannel;
import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.RequestHeaderEncoder;
import io.ferrite.wire.message.ResponseHeaderDecoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
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
 * meanwhile goes to that node's lane instead. An exchange that shares its request ({@link Exchange#request}: a
 * {@link RequestBatch}) takes with it those queued behind it for the same node that fit, as Kafka's inter-broker senders
 * drain a node's queue into one request; exchanges queued together ({@link #sendAll}) are all there when their lane
 * takes the first of them.
 *
 * <p>A request whose {@link Exchange#resolve} or callback throws, or that cannot be encoded (larger than the frame),
 * fails alone (logged), the connection and those queued behind it untouched; a lane's thread that ends for any
 * other reason (or idle for {@link #IDLE_NANOS}) leaves the lanes first and fails what it holds, so that the next request
 * to its node makes a new lane (review 1 of txnsend, M2, LOW 6).
 */
public final class NodeRequests implements AutoCloseable
{
    /** What fails: a queued {@link Exchange}, a {@link Request}; on a lane's thread (or a sender's, when none takes it). */
    public interface Failable
    {
        /** No answer: the connection failed, timed out, the answer could not be read, or it was never sent. */
        void failed(Exception cause);
    }

    /**
     * What a sender queues for a node: when its lane takes it, it goes in a {@link #request} — its own, or one it shares
     * with those queued behind it — which is answered or {@link #failed}, once.
     */
    public interface Exchange extends Failable
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

        /**
         * When its lane takes it: the request it goes in — itself when it is a {@link Request}, or a {@link RequestBatch}
         * of it alone that those queued behind it for the same node may join.
         */
        Request request();
    }

    /** One request and its answer; {@link #answered} or {@link #failed} runs on a lane's thread, once. */
    public interface Request extends Failable
    {
        ApiKeys api();

        short version();

        /** Writes the request's body at {@code at} of {@code out}; returns its length. */
        int write(MutableDirectBuffer out, int at);

        /** The answer's body, {@code body} to {@code limit} of {@code in}. */
        void answered(DirectBuffer in, int body, int limit);
    }

    private static final Logger LOG = LoggerFactory.getLogger(NodeRequests.class);
    /** A lane with nothing to send for this long ends (Kafka's connections.max.idle.ms default, 9 minutes). */
    private static final long IDLE_NANOS = TimeUnit.MINUTES.toNanos(9);

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
        enqueue(exchange.to(), List.of(exchange));
    }

    /**
     * Any thread: sends {@code exchanges} as {@link #send} does; those for one node are queued together, so that when its
     * lane takes the first it finds the others behind it (to share its request when they can).
     */
    public void sendAll(final List<? extends Exchange> exchanges)
    {
        final Map<InetSocketAddress, List<Exchange>> byNode = new LinkedHashMap<>();
        exchanges.forEach(e -> byNode.computeIfAbsent(e.to(), to -> new ArrayList<>()).add(e));
        byNode.forEach(this::enqueue);
    }

    private void enqueue(final InetSocketAddress to, final List<Exchange> exchanges)
    {
        if (closed)
        {
            exchanges.forEach(e -> e.failed(new IOException("closed")));
            return;
        }
        final Lane lane;
        try
        {
            lane = lanes.computeIfAbsent(to, Lane::new);
        }
        catch (final UncheckedIOException ex)
        {
            exchanges.forEach(e -> e.failed(ex.getCause())); // no selector for its connection: made again at the next request
            return;
        }
        lane.queue.addAll(exchanges);
        if (lane.ended)
        {
            // its lane ended (closed, idle or dead) after this found it, and will not take them: a new lane, or failed
            final List<Exchange> left = new ArrayList<>();
            for (final Exchange e : exchanges)
            {
                if (lane.queue.remove(e))
                {
                    left.add(e);
                }
            }
            if (!left.isEmpty())
            {
                lanes.remove(to, lane);
                enqueue(to, left);
            }
        }
    }

    /** Any thread: drops the exchanges still queued that {@code which} accepts; they are neither sent nor answered. */
    public void purge(final Predicate<Exchange> which)
    {
        lanes.values().forEach(lane -> lane.queue.purge(which));
    }

    /** One destination's queue, connection and thread. */
    private final class Lane implements Runnable
    {
        private final InetSocketAddress to;
        private final LaneQueue queue = new LaneQueue();
        private final FetcherChannel channel;
        private final UnsafeBuffer out;
        private final RequestHeaderEncoder header = new RequestHeaderEncoder();
        private final ResponseHeaderDecoder responseHeader = new ResponseHeaderDecoder();
        private final Thread thread;
        private int correlationId;
        /** Set before the thread's last drain of the queue: a request added after it is not taken (see {@link #send}). */
        private volatile boolean ended;

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
            try
            {
                long idleSince = System.nanoTime();
                while (!closed)
                {
                    final Exchange e;
                    try
                    {
                        e = queue.next(100);
                    }
                    catch (final InterruptedException ex)
                    {
                        break;
                    }
                    if (e != null)
                    {
                        takeOrFail(e);
                        idleSince = System.nanoTime();
                    }
                    else if (System.nanoTime() - idleSince > IDLE_NANOS)
                    {
                        break; // idle: its thread, selector and buffers are freed; the next request makes a new lane
                    }
                }
            }
            finally
            {
                ended = true; // before the removal and the drain: a send that adds after the drain sees it
                lanes.remove(to, this);
                if (closed)
                {
                    failQueued(new IOException("closed")); // those waiting on an answer are not left waiting
                }
                else
                {
                    handOver();
                }
                channel.close();
            }
        }

        /** Takes {@code e}: what throws is logged, the lane goes on (its resolve and callbacks fail it alone). */
        private void takeOrFail(final Exchange e)
        {
            try
            {
                take(e);
            }
            catch (final RuntimeException ex)
            {
                LOG.error("Sending a request to {} failed", to, ex);
            }
        }

        private void take(final Exchange e)
        {
            final InetSocketAddress now;
            try
            {
                now = e.resolve();
            }
            catch (final RuntimeException ex)
            {
                LOG.error("A request to {}: where it goes could not be found", to, ex);
                fail(e, ex);
                return;
            }
            if (now == null)
            {
                fail(e, new IOException("no longer for any node (was " + to + ")"));
            }
            else if (!now.equals(to))
            {
                send(e); // its destination moved: that node's lane
            }
            else
            {
                final Request request;
                try
                {
                    request = e.request();
                }
                catch (final RuntimeException ex)
                {
                    LOG.error("A request to {} could not be made", to, ex);
                    fail(e, ex);
                    return;
                }
                if (request instanceof RequestBatch<?> batch)
                {
                    joined(batch);
                }
                if (!exchange(request))
                {
                    failQueued(new IOException("an earlier request to " + to + " failed")); // retried by their senders
                }
            }
        }

        /**
         * {@code batch} takes those queued behind its first that fit (in order, up to the first too large for it, which
         * stays first in line); one whose key the batch already has (a second marker of a producer to a partition, a
         * second question of a transactional id) is passed over and stays first in line for the next request, those
         * behind it still joining (review L1: only that key waits). On the way, one queued whose destination moved goes to
         * that node's lane, one no longer for any node fails. What throws ends the batch where it is: each exchange taken
         * is in it, moved, or failed (review L2).
         */
        private void joined(final RequestBatch<?> batch)
        {
            queue.carryQueued(); // pointer work under the senders' lock; the lookups after it
            final List<Exchange> moved = new ArrayList<>();
            final List<Exchange> gone = new ArrayList<>();
            try
            {
                for (final Iterator<Exchange> carried = queue.carried(); carried.hasNext(); )
                {
                    final Exchange q = carried.next();
                    final InetSocketAddress now = where(q);
                    final boolean here = to.equals(now);
                    final RequestBatch.Fit fit = here ? batch.fit(q) : RequestBatch.Fit.JOINS;
                    if (fit == RequestBatch.Fit.FULL)
                    {
                        break; // it and those behind it: the next request
                    }
                    if (fit == RequestBatch.Fit.LATER || !queue.takeCarried(q))
                    {
                        continue; // its key is in the batch: the next request; or purged meanwhile
                    }
                    if (!here)
                    {
                        (now == null ? gone : moved).add(q);
                        continue;
                    }
                    try
                    {
                        batch.add(q);
                    }
                    catch (final RuntimeException ex)
                    {
                        fail(q, ex);
                        throw ex;
                    }
                }
            }
            catch (final RuntimeException ex)
            {
                LOG.error("Joining the requests queued for {} failed: those joined so far go", to, ex);
            }
            gone.forEach(q -> fail(q, new IOException("no longer for any node (was " + to + ")")));
            for (final Exchange q : moved)
            {
                try
                {
                    send(q); // another lane's
                }
                catch (final RuntimeException ex)
                {
                    LOG.error("A request moved from {} could not be queued", to, ex);
                    fail(q, ex);
                }
            }
        }

        /** Where {@code q} goes now ({@link Exchange#resolve}); null when that is no node or could not be found (logged). */
        private InetSocketAddress where(final Exchange q)
        {
            try
            {
                return q.resolve();
            }
            catch (final RuntimeException ex)
            {
                LOG.error("A request to {}: where it goes could not be found", to, ex);
                return null;
            }
        }

        /** Ended while open (idle, or its thread died): what was queued since goes to a new lane. */
        private void handOver()
        {
            final List<Exchange> queued = queue.takeAll();
            queued.forEach(NodeRequests.this::send);
        }

        /** Each exchange queued fails now, but one whose destination moved meanwhile, which goes to that node's lane. */
        private void failQueued(final Exception cause)
        {
            final List<Exchange> queued = queue.takeAll();
            for (final Exchange q : queued)
            {
                final InetSocketAddress now = closed ? null : where(q);
                if (now != null && !now.equals(to))
                {
                    send(q);
                }
                else
                {
                    fail(q, cause);
                }
            }
        }

        /** {@code e} fails with {@code cause}; what its callback throws is logged. */
        private void fail(final Failable e, final Exception cause)
        {
            try
            {
                e.failed(cause);
            }
            catch (final RuntimeException ex)
            {
                LOG.error("A failed request's callback threw", ex);
            }
        }

        /** Whether the node answered (even an answer the exchange could not read), or {@code e} was not sent at all. */
        private boolean exchange(final Request e)
        {
            final int frame;
            try
            {
                frame = encode(e);
            }
            catch (final RuntimeException ex)
            {
                // not sent (say, larger than the frame): it fails alone; the connection and those queued behind go on (review M2)
                LOG.warn("A request to {} could not be encoded: {}", to, ex.toString());
                fail(e, ex);
                return true;
            }
            final int length;
            final int body;
            try
            {
                if (!channel.connected())
                {
                    channel.connect();
                }
                channel.send(out.byteBuffer().clear().limit(frame));
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
                fail(e, ex);
                return false;
            }
            try
            {
                e.answered(channel.inBuffer, body, length);
            }
            catch (final RuntimeException ex)
            {
                channel.disconnect(); // an answer it could not read: the next request starts on a new connection
                fail(e, ex);
            }
            return true;
        }

        private int encode(final Request e)
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
