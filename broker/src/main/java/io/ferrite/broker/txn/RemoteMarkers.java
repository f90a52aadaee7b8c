package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.WriteTxnMarkersRequestEncoder;
import io.ferrite.wire.message.WriteTxnMarkersResponseDecoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The transaction coordinator's markers for partitions led by other nodes, in a cluster (issue 14): WriteTxnMarkers
 * requests to the partitions' leaders, sent over {@link NodeRequests} (a lane per leader: a thread and one kept
 * connection). As Kafka 4.4's {@code TransactionMarkerChannelManager}, one request to a leader carries every marker queued
 * for it when its lane takes the first ({@link Markers}: each transaction's partitions in one marker entry, several
 * transactions in one request), up to what a request frame holds; the markers a coordinator pass sends together
 * ({@link #sendAll}: a transaction's partitions, the retries due at a tick) are queued together, so that they share it. The leader's answer for the partition, or REQUEST_TIMED_OUT when the connection failed (the marker is
 * then sent again after its backoff, to the leader the image names then, as Kafka retries a marker whose leader moved),
 * is handed back to the coordinators' agent, which applies it in its next pass ({@link #drain}). One request in flight per
 * leader, each leader's markers on a lane of their own: a leader that does not answer holds its own markers only (up to
 * the request timeout, and those queued behind the one that failed are answered REQUEST_TIMED_OUT with it); a marker is
 * routed again when its lane takes it ({@link #routeBy}).
 */
public final class RemoteMarkers implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(RemoteMarkers.class);
    private static final short VERSION = 2;
    /** A request (and its answer) of up to this many bytes: some hundreds of markers. */
    private static final int FRAME_BYTES = 64 * 1024;
    /** What the request's header and the arrays' lengths may take besides the markers (the client id is short). */
    private static final int FRAME_SLACK = 512;

    /** A marker on its way (agent to its leader's lane); {@code then} runs on the agent with the partition's error. */
    public record Send(MarkerRouting.Route to, TxnPartition tp, long producerId, short producerEpoch, int coordinatorEpoch,
        boolean commit, short transactionVersion, java.util.function.IntConsumer then)
    {
    }

    private final Runnable wakeAgent;
    private final NodeRequests requests;
    private final ConcurrentLinkedQueue<Runnable> answers = new ConcurrentLinkedQueue<>();
    /** Where a marker goes when its lane takes it (null: where it was queued for); the image's, read on the lanes' threads. */
    private volatile MarkerRouting routing;

    /** Started at once; {@code wakeAgent} wakes the coordinators' agent when an answer is in. */
    public RemoteMarkers(final FetcherSettings settings, final int nodeId, final Runnable wakeAgent)
    {
        this.wakeAgent = wakeAgent;
        this.requests = new NodeRequests(settings, "ferrite-txn-markers-" + nodeId, FRAME_BYTES);
    }

    /**
     * Before markers are sent: each marker's leader is looked up again by {@code routing} when its lane takes it (a leader
     * that moved meanwhile gets it instead; one no longer on another node — here, none, or its topic gone — is answered
     * NOT_LEADER_OR_FOLLOWER, and the coordinator routes it again after its backoff).
     */
    public void routeBy(final MarkerRouting routing)
    {
        this.routing = routing;
    }

    /** On the agent: sends a marker; its answer comes back through {@link #drain}. */
    public void send(final Send s)
    {
        requests.send(new Marker(s));
    }

    /** On the agent: sends {@code sends} queued together (those to one leader go in one request when they fit). */
    public void sendAll(final List<Send> sends)
    {
        if (sends.size() == 1)
        {
            send(sends.get(0));
        }
        else if (!sends.isEmpty())
        {
            requests.sendAll(sends.stream().map(Marker::new).toList());
        }
    }

    /** On the agent: drops the queued markers {@code which} accepts (their runs were forgotten); they are never answered. */
    public void purge(final java.util.function.Predicate<Send> which)
    {
        requests.purge(e -> e instanceof Marker m && which.test(m.s));
    }

    /** On the agent, at the start of each pass: applies the answers come back; returns how many. */
    public int drain()
    {
        int n = 0;
        for (Runnable answer; (answer = answers.poll()) != null; n++)
        {
            answer.run();
        }
        return n;
    }

    private void answer(final Send s, final short error)
    {
        answers.add(() -> s.then().accept(error));
        wakeAgent.run();
    }

    /** One marker on its way: it goes in a {@link Markers} request with those queued behind it for its leader. */
    private final class Marker implements NodeRequests.Exchange
    {
        private final Send s;
        /** Its leader, as queued, then as its lane found it ({@link #resolve}). */
        private volatile MarkerRouting.Route route;
        private volatile InetSocketAddress to;
        /** The lane found it led nowhere else now: answered NOT_LEADER_OR_FOLLOWER. */
        private volatile boolean moved;
        /** Answered or failed: once only (its lane's thread). */
        private boolean over;

        Marker(final Send s)
        {
            this.s = s;
            this.route = s.to();
            this.to = new InetSocketAddress(s.to().host(), s.to().port());
        }

        @Override
        public InetSocketAddress to()
        {
            return to;
        }

        @Override
        public InetSocketAddress resolve()
        {
            final MarkerRouting by = routing;
            if (by == null)
            {
                return to;
            }
            final MarkerRouting.Route now = by.route(s.tp().topic(), s.tp().partition());
            if (now == MarkerRouting.Route.LOCAL || now == MarkerRouting.Route.NO_LEADER || now == MarkerRouting.Route.GONE)
            {
                moved = true;
                return null;
            }
            if (!now.equals(route))
            {
                route = now;
                to = new InetSocketAddress(now.host(), now.port());
            }
            return to;
        }

        @Override
        public NodeRequests.Request request()
        {
            return new Markers(this);
        }

        void answer(final short error)
        {
            if (!over)
            {
                over = true;
                RemoteMarkers.this.answer(s, error);
            }
        }

        @Override
        public void failed(final Exception cause)
        {
            if (!over)
            {
                LOG.debug("the marker of producer {} to {} at node {} failed: {}", s.producerId(), s.tp(), route.nodeId(), cause.toString());
                answer(moved ? Errors.NOT_LEADER_OR_FOLLOWER : Errors.REQUEST_TIMED_OUT);
            }
        }
    }

    /** A marker's transaction: the markers of one (of a producer, its epoch, outcome and coordinator epoch) share an entry. */
    private record Txn(long producerId, short producerEpoch, boolean commit, int coordinatorEpoch, short transactionVersion)
    {
        Txn(final Send s)
        {
            this(s.producerId(), s.producerEpoch(), s.commit(), s.coordinatorEpoch(), s.transactionVersion());
        }
    }

    /** A partition's answer is found by its producer id and partition (Kafka's answer is per producer id). */
    private record Answered(long producerId, TxnPartition tp)
    {
    }

    /**
     * One WriteTxnMarkers request to a leader: the markers queued for it, each transaction's partitions in one marker
     * entry (by topic), in the order queued. Two markers of one producer id to one partition never share a request (the
     * answer could not tell them apart): the second waits for the next, those behind it still joining. The answer's error for each partition goes to its
     * marker; a partition the answer does not name is UNKNOWN_TOPIC_OR_PARTITION, as before.
     */
    private final class Markers extends RequestBatch<Marker>
    {
        private final WriteTxnMarkersRequestEncoder request = new WriteTxnMarkersRequestEncoder();
        private final WriteTxnMarkersResponseDecoder response = new WriteTxnMarkersResponseDecoder();
        private final java.util.Set<Answered> partitions = new java.util.HashSet<>();

        Markers(final Marker first)
        {
            super(ApiKeys.WRITE_TXN_MARKERS, VERSION, Marker.class, first, FRAME_BYTES - FRAME_SLACK);
            partitions.add(new Answered(first.s.producerId(), first.s.tp()));
        }

        /** A marker entry and a topic of its own at most: the topic's name (up to 3 bytes a char) and some 50 bytes more. */
        @Override
        protected int bytes(final Marker m)
        {
            return 56 + 3 * m.s.tp().topic().length();
        }

        @Override
        protected boolean joins(final Marker m)
        {
            return !partitions.contains(new Answered(m.s.producerId(), m.s.tp()));
        }

        @Override
        protected void added(final Marker m)
        {
            partitions.add(new Answered(m.s.producerId(), m.s.tp()));
        }

        @Override
        public int write(final MutableDirectBuffer out, final int at)
        {
            final Map<Txn, Map<String, List<Integer>>> byTxn = new LinkedHashMap<>();
            for (final Marker m : members())
            {
                byTxn.computeIfAbsent(new Txn(m.s), t -> new LinkedHashMap<>()).computeIfAbsent(m.s.tp().topic(), t -> new ArrayList<>())
                    .add(m.s.tp().partition());
            }
            final WriteTxnMarkersRequestEncoder.WritableTxnMarker marker = request.wrap(out, at, VERSION).markers(byTxn.size());
            for (final Map.Entry<Txn, Map<String, List<Integer>>> e : byTxn.entrySet())
            {
                final Txn txn = e.getKey();
                marker.next().producerId(txn.producerId()).producerEpoch(txn.producerEpoch()).transactionResult(txn.commit());
                final WriteTxnMarkersRequestEncoder.WritableTxnMarkerTopic topics = marker.topics(e.getValue().size());
                for (final Map.Entry<String, List<Integer>> topic : e.getValue().entrySet())
                {
                    final var indexes = topics.next().name(topic.getKey()).partitionIndexes(topic.getValue().size());
                    topic.getValue().forEach(indexes::addInt32);
                }
                marker.coordinatorEpoch(txn.coordinatorEpoch()).transactionVersion((byte)txn.transactionVersion()); // closes the topics
            }
            return request.finish();
        }

        @Override
        public void answered(final DirectBuffer in, final int body, final int limit)
        {
            response.wrap(in, body, limit, VERSION);
            final Map<Answered, Short> errors = new HashMap<>();
            final WriteTxnMarkersResponseDecoder.WritableTxnMarkerResult markers = response.markers();
            while (markers.hasNext())
            {
                markers.next();
                final long producerId = markers.producerId();
                final WriteTxnMarkersResponseDecoder.WritableTxnMarkerTopicResult topics = markers.topics();
                while (topics.hasNext())
                {
                    topics.next();
                    final String name = topics.name();
                    final WriteTxnMarkersResponseDecoder.WritableTxnMarkerPartitionResult each = topics.partitions();
                    while (each.hasNext())
                    {
                        each.next();
                        errors.put(new Answered(producerId, new TxnPartition(name, each.partitionIndex())), each.errorCode());
                    }
                }
            }
            for (final Marker m : members())
            {
                m.answer(errors.getOrDefault(new Answered(m.s.producerId(), m.s.tp()), Errors.UNKNOWN_TOPIC_OR_PARTITION));
            }
        }
    }

    @Override
    public void close() throws InterruptedException
    {
        requests.close();
    }
}
