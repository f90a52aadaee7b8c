package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.api.TxnVerifier;
import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.wire.message.AddPartitionsToTxnRequestEncoder;
import io.ferrite.wire.message.AddPartitionsToTxnResponseDecoder;
import io.ferrite.wire.message.ApiKeys;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A produce's verification in a cluster (KIP-890, issue 14), as Kafka 4.4's partition leader does it with its
 * {@code AddPartitionsToTxnManager}: the transactional id's coordinator is the leader of its {@code __transaction_state}
 * partition ({@code abs(id.hashCode()) % partitions}, located from the metadata image as FindCoordinator locates it);
 * when that is this node the local coordinator answers ({@link ProduceVerifier}), else an AddPartitionsToTxn v5 (the
 * broker's form: one transaction, VerifyOnly for a produce below v12, an add of transaction version 2 from v12) goes to
 * that node over {@link NodeRequests} and the produce waits for its answer (bounded by {@code replica.socket.timeout.ms}).
 * No coordinator located (no topic, no leader, or the leader not live) answers COORDINATOR_NOT_AVAILABLE, a connection
 * that failed NETWORK_EXCEPTION, as Kafka's manager answers: the produce turns both into NOT_ENOUGH_REPLICAS, which the
 * client retries. One request at a time per coordinator node ({@link NodeRequests}: a lane per node), carrying every
 * question queued for that node when its lane takes the first ({@link Questions}), as Kafka's manager batches them per
 * node: many transactional ids in one request.
 */
public final class RemoteVerifier implements TxnVerifier, AutoCloseable
{
    private static final short VERSION = 5;
    private static final int FRAME_BYTES = 64 * 1024;
    /** What the request's header and the arrays' lengths may take besides the questions. */
    private static final int FRAME_SLACK = 512;

    private final TxnVerifier local;
    private final PartitionOwnership.Locator coordinators;
    private final int nodeId;
    private final NodeRequests requests;

    /** {@code coordinators} locates a transactional id's coordinator; the questions go over {@code requests}, closed with this. */
    public RemoteVerifier(final TxnVerifier local, final PartitionOwnership.Locator coordinators, final int nodeId,
        final NodeRequests requests)
    {
        this.local = local;
        this.coordinators = coordinators;
        this.nodeId = nodeId;
        this.requests = requests;
    }

    @Override
    public Verification verify(final String transactionalId, final long producerId, final short epoch, final String[] topics,
        final int[] partitions, final int count, final boolean add, final Runnable waker)
    {
        final PartitionOwnership.Located at = coordinators.locate(transactionalId);
        if (at.error() == Errors.NONE && at.nodeId() == nodeId)
        {
            return local.verify(transactionalId, producerId, epoch, topics, partitions, count, add, waker);
        }
        final Remote question = new Remote(transactionalId, producerId, epoch, Arrays.copyOf(topics, count),
            Arrays.copyOf(partitions, count), add, waker);
        if (at.error() != Errors.NONE)
        {
            question.answer(at.error());
        }
        else
        {
            question.to = new InetSocketAddress(at.host(), at.port());
            requests.send(question);
        }
        return question;
    }

    @Override
    public void close() throws InterruptedException
    {
        requests.close();
    }

    /** One produce's question to the coordinator on another node; answered on its lane's thread, polled on the network thread. */
    private final class Remote implements Verification, NodeRequests.Exchange
    {
        private final String transactionalId;
        private final long producerId;
        private final short epoch;
        private final String[] topics;
        private final int[] partitions;
        private final boolean add;
        private final Runnable waker;
        private final short[] errors;
        private InetSocketAddress to;
        /** Set after {@link #errors} are. */
        private volatile boolean done;

        Remote(final String transactionalId, final long producerId, final short epoch, final String[] topics,
            final int[] partitions, final boolean add, final Runnable waker)
        {
            this.transactionalId = transactionalId;
            this.producerId = producerId;
            this.epoch = epoch;
            this.topics = topics;
            this.partitions = partitions;
            this.add = add;
            this.waker = waker;
            this.errors = new short[topics.length];
        }

        @Override
        public boolean done()
        {
            return done;
        }

        @Override
        public short error(final int i)
        {
            return errors[i];
        }

        void answer(final short error)
        {
            if (done)
            {
                return;
            }
            Arrays.fill(errors, error);
            done = true;
            waker.run();
        }

        @Override
        public InetSocketAddress to()
        {
            return to;
        }

        @Override
        public ApiKeys api()
        {
            return ApiKeys.ADD_PARTITIONS_TO_TXN;
        }

        @Override
        public short version()
        {
            return VERSION;
        }

        @Override
        public RequestBatch<?> batch()
        {
            return new Questions(this);
        }

        /** As a request of its own (a lane sends its {@link #batch} instead, of it alone at least). */
        @Override
        public int write(final MutableDirectBuffer out, final int at)
        {
            return new Questions(this).write(out, at);
        }

        @Override
        public void answered(final DirectBuffer in, final int body, final int limit)
        {
            new Questions(this).answered(in, body, limit);
        }

        /** Its transaction in the request, at {@code t} (its partitions by topic). */
        void write(final AddPartitionsToTxnRequestEncoder.AddPartitionsToTxnTransaction t)
        {
            final Map<String, List<Integer>> byTopic = new LinkedHashMap<>();
            for (int i = 0; i < topics.length; i++)
            {
                byTopic.computeIfAbsent(topics[i], name -> new ArrayList<>()).add(partitions[i]);
            }
            final AddPartitionsToTxnRequestEncoder.AddPartitionsToTxnTopic each = t.transactionalId(transactionalId).producerId(producerId)
                .producerEpoch(epoch).verifyOnly(!add).topics(byTopic.size());
            for (final Map.Entry<String, List<Integer>> e : byTopic.entrySet())
            {
                final var indexes = each.next().name(e.getKey()).partitions(e.getValue().size());
                e.getValue().forEach(indexes::addInt32);
            }
        }

        /** Its partitions' errors from the answer's results for its id (null: none), UNKNOWN_SERVER_ERROR for one not named. */
        void answered(final Map<TxnPartition, Short> results)
        {
            if (done)
            {
                return;
            }
            for (int i = 0; i < errors.length; i++)
            {
                final Short error = results == null ? null : results.get(new TxnPartition(topics[i], partitions[i]));
                errors[i] = error == null ? Errors.UNKNOWN_SERVER_ERROR : error; // a partition not named, as the local verifier
            }
            done = true;
            waker.run();
        }

        /** Bytes it adds to a request and to its answer at most: its id, and each partition with its topic's name. */
        int bytes()
        {
            int n = 40 + 3 * transactionalId.length();
            for (final String topic : topics)
            {
                n += 24 + 3 * topic.length();
            }
            return n;
        }

        @Override
        public void failed(final Exception cause)
        {
            answer(Errors.NETWORK_EXCEPTION);
        }
    }

    /**
     * One AddPartitionsToTxn v5 to a coordinator node: the questions queued for it, one transaction each, in the order
     * queued. Two questions of one transactional id never share a request (the answer is per id): the second waits for
     * the next (Kafka's manager answers the older one NETWORK_EXCEPTION, or INVALID_PRODUCER_EPOCH, and sends the newer).
     * A request refused whole is each partition's error (a missing ACL: INVALID_TXN_STATE), as Kafka's manager.
     */
    private static final class Questions extends RequestBatch<Remote>
    {
        private final AddPartitionsToTxnRequestEncoder request = new AddPartitionsToTxnRequestEncoder();
        private final AddPartitionsToTxnResponseDecoder response = new AddPartitionsToTxnResponseDecoder();
        private final Set<String> ids = new HashSet<>();

        Questions(final Remote first)
        {
            super(Remote.class, first, FRAME_BYTES - FRAME_SLACK);
            ids.add(first.transactionalId);
        }

        @Override
        protected int bytes(final Remote r)
        {
            return r.bytes();
        }

        @Override
        protected boolean joins(final Remote r)
        {
            return !ids.contains(r.transactionalId);
        }

        @Override
        protected void added(final Remote r)
        {
            ids.add(r.transactionalId);
        }

        @Override
        public ApiKeys api()
        {
            return ApiKeys.ADD_PARTITIONS_TO_TXN;
        }

        @Override
        public short version()
        {
            return VERSION;
        }

        @Override
        public int write(final MutableDirectBuffer out, final int at)
        {
            final AddPartitionsToTxnRequestEncoder.AddPartitionsToTxnTransaction t = request.wrap(out, at, VERSION)
                .transactions(members().size());
            for (final Remote r : members())
            {
                r.write(t.next());
            }
            return request.finish();
        }

        @Override
        public void answered(final DirectBuffer in, final int body, final int limit)
        {
            response.wrap(in, body, limit, VERSION);
            if (response.errorCode() != Errors.NONE)
            {
                final short error = response.errorCode() == Errors.CLUSTER_AUTHORIZATION_FAILED ? Errors.INVALID_TXN_STATE :
                    response.errorCode();
                members().forEach(r -> r.answer(error));
                return;
            }
            final Map<String, Map<TxnPartition, Short>> byId = new HashMap<>();
            final AddPartitionsToTxnResponseDecoder.AddPartitionsToTxnResult txns = response.resultsByTransaction();
            while (txns.hasNext())
            {
                txns.next();
                final Map<TxnPartition, Short> results = byId.computeIfAbsent(txns.transactionalId(), id -> new HashMap<>());
                final AddPartitionsToTxnResponseDecoder.AddPartitionsToTxnTopicResult t = txns.topicResults();
                while (t.hasNext())
                {
                    t.next();
                    final String name = t.name();
                    final AddPartitionsToTxnResponseDecoder.AddPartitionsToTxnPartitionResult p = t.resultsByPartition();
                    while (p.hasNext())
                    {
                        p.next();
                        results.put(new TxnPartition(name, p.partitionIndex()), p.partitionErrorCode());
                    }
                }
            }
            members().forEach(r -> r.answered(byId.get(r.transactionalId)));
        }
    }
}
