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
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The transaction coordinator's markers for partitions led by other nodes, in a cluster (issue 14): each one a
 * WriteTxnMarkers request to the partition's leader, sent over {@link NodeRequests} (a lane per leader: a thread and one
 * kept connection). The leader's answer for the partition, or REQUEST_TIMED_OUT when the connection failed (the marker is
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
    private static final int FRAME_BYTES = 4096;

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

    /** One marker's WriteTxnMarkers exchange. */
    private final class Marker implements NodeRequests.Exchange
    {
        private final Send s;
        /** The request's codecs (its lane's thread). */
        private final WriteTxnMarkersRequestEncoder request = new WriteTxnMarkersRequestEncoder();
        private final WriteTxnMarkersResponseDecoder response = new WriteTxnMarkersResponseDecoder();
        /** Its leader, as queued, then as its lane found it ({@link #resolve}). */
        private volatile MarkerRouting.Route route;
        private volatile InetSocketAddress to;
        /** The lane found it led nowhere else now: answered NOT_LEADER_OR_FOLLOWER. */
        private volatile boolean moved;

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
        public ApiKeys api()
        {
            return ApiKeys.WRITE_TXN_MARKERS;
        }

        @Override
        public short version()
        {
            return VERSION;
        }

        @Override
        public int write(final MutableDirectBuffer out, final int at)
        {
            final WriteTxnMarkersRequestEncoder.WritableTxnMarker marker = request.wrap(out, at, VERSION).markers(1).next()
                .producerId(s.producerId()).producerEpoch(s.producerEpoch()).transactionResult(s.commit());
            marker.topics(1).next().name(s.tp().topic()).partitionIndexes(1).addInt32(s.tp().partition());
            marker.coordinatorEpoch(s.coordinatorEpoch()).transactionVersion((byte)s.transactionVersion()); // closes the topics
            return request.finish();
        }

        @Override
        public void answered(final DirectBuffer in, final int body, final int limit)
        {
            response.wrap(in, body, limit, VERSION);
            answer(s, errorOf(response, s));
        }

        @Override
        public void failed(final Exception cause)
        {
            LOG.debug("the marker of producer {} to {} at node {} failed: {}", s.producerId(), s.tp(), route.nodeId(), cause.toString());
            answer(s, moved ? Errors.NOT_LEADER_OR_FOLLOWER : Errors.REQUEST_TIMED_OUT);
        }
    }

    /** The answer's error for the marker's partition (UNKNOWN_TOPIC_OR_PARTITION when the answer does not name it). */
    private static short errorOf(final WriteTxnMarkersResponseDecoder response, final Send s)
    {
        final WriteTxnMarkersResponseDecoder.WritableTxnMarkerResult markers = response.markers();
        while (markers.hasNext())
        {
            markers.next();
            final WriteTxnMarkersResponseDecoder.WritableTxnMarkerTopicResult topics = markers.topics();
            while (topics.hasNext())
            {
                topics.next();
                final WriteTxnMarkersResponseDecoder.WritableTxnMarkerPartitionResult partitions = topics.partitions();
                while (partitions.hasNext())
                {
                    partitions.next();
                    if (s.tp().topic().equals(topics.name()) && partitions.partitionIndex() == s.tp().partition())
                    {
                        return partitions.errorCode();
                    }
                }
            }
        }
        return Errors.UNKNOWN_TOPIC_OR_PARTITION;
    }

    @Override
    public void close() throws InterruptedException
    {
        requests.close();
    }
}
