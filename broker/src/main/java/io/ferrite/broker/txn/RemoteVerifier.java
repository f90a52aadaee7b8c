package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.api.TxnVerifier;
import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.wire.message.AddPartitionsToTxnRequestEncoder;
import io.ferrite.wire.message.AddPartitionsToTxnResponseDecoder;
import io.ferrite.wire.message.ApiKeys;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

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
 *
 * <p>A produce's add (v12+) answered CONCURRENT_TRANSACTIONS for any partition (the transaction's last EndTxn answered,
 * its markers still being written) is asked again, all its partitions, {@link Retries#backoffMs} after each answer
 * until {@link Retries#maxMs} have passed since it was first asked, then the last answer is the produce's (v12+ gets
 * CONCURRENT_TRANSACTIONS), as Kafka 4.4's {@code ReplicaManager.handleProduceAppend} retries what its manager answers
 * ({@code add.partitions.to.txn.retry.backoff.ms}, {@code add.partitions.to.txn.retry.backoff.max.ms}, there also
 * bounded by {@code request.timeout.ms}); each retry locates the coordinator again and goes over the network wherever it
 * is now, this node included, as Kafka's manager sends it. A verify-only question (a produce below v12) and a
 * TxnOffsetCommit's question ({@link #forOffsetCommits}) are answered at once, as Kafka retries neither.
 */
public final class RemoteVerifier implements TxnVerifier, AutoCloseable
{
    /** How a produce's add answered CONCURRENT_TRANSACTIONS is asked again: every {@code backoffMs}, for {@code maxMs}. */
    public record Retries(long backoffMs, long maxMs)
    {
        /** Kafka 4.4's {@code add.partitions.to.txn.retry.backoff.ms} and {@code add.partitions.to.txn.retry.backoff.max.ms}. */
        public static final Retries KAFKA_DEFAULTS = new Retries(20, 100);
    }

    private static final Logger LOG = LoggerFactory.getLogger(RemoteVerifier.class);
    private static final short VERSION = 5;
    private static final int FRAME_BYTES = 64 * 1024;
    /** What the request's header and the arrays' lengths may take besides the questions. */
    private static final int FRAME_SLACK = 512;

    private final TxnVerifier local;
    private final PartitionOwnership.Locator coordinators;
    private final int nodeId;
    private final NodeRequests requests;
    private final Retries retries;
    /** Where a retry waits for its backoff (its thread made at the first retry, ended idle), as Kafka's scheduler runs them. */
    private final ScheduledThreadPoolExecutor retrying;
    /** The questions of a TxnOffsetCommit: never retried. */
    private final TxnVerifier offsetCommits = (id, pid, epoch, topics, partitions, count, add, waker) ->
        ask(id, pid, epoch, topics, partitions, count, add, false, waker);

    /** As the next, with Kafka's retries ({@link Retries#KAFKA_DEFAULTS}). */
    public RemoteVerifier(final TxnVerifier local, final PartitionOwnership.Locator coordinators, final int nodeId,
        final NodeRequests requests)
    {
        this(local, coordinators, nodeId, requests, Retries.KAFKA_DEFAULTS);
    }

    /**
     * {@code coordinators} locates a transactional id's coordinator; the questions go over {@code requests}, closed with
     * this; a produce's add answered CONCURRENT_TRANSACTIONS is asked again as {@code retries} says.
     */
    public RemoteVerifier(final TxnVerifier local, final PartitionOwnership.Locator coordinators, final int nodeId,
        final NodeRequests requests, final Retries retries)
    {
        this.local = local;
        this.coordinators = coordinators;
        this.nodeId = nodeId;
        this.requests = requests;
        this.retries = retries;
        this.retrying = new ScheduledThreadPoolExecutor(1, r ->
        {
            final Thread t = new Thread(r, "ferrite-txn-verify-retries-" + nodeId);
            t.setDaemon(true);
            return t;
        });
        retrying.setKeepAliveTime(1, TimeUnit.MINUTES); // no retry for a minute: its thread ends (made again at the next)
        retrying.allowCoreThreadTimeOut(true);
    }

    @Override
    public Verification verify(final String transactionalId, final long producerId, final short epoch, final String[] topics,
        final int[] partitions, final int count, final boolean add, final Runnable waker)
    {
        return ask(transactionalId, producerId, epoch, topics, partitions, count, add, add, waker);
    }

    @Override
    public TxnVerifier forOffsetCommits()
    {
        return offsetCommits;
    }

    private Verification ask(final String transactionalId, final long producerId, final short epoch, final String[] topics,
        final int[] partitions, final int count, final boolean add, final boolean retried, final Runnable waker)
    {
        final PartitionOwnership.Located at = coordinators.locate(transactionalId);
        if (at.error() == Errors.NONE && at.nodeId() == nodeId)
        {
            return local.verify(transactionalId, producerId, epoch, topics, partitions, count, add, waker);
        }
        final Remote question = new Remote(transactionalId, producerId, epoch, Arrays.copyOf(topics, count),
            Arrays.copyOf(partitions, count), add, waker, retried);
        question.sendTo(at);
        return question;
    }

    @Override
    public void close() throws InterruptedException
    {
        requests.close();
        retrying.shutdown(); // a retry waiting for its backoff still runs: its send fails (closed), NETWORK_EXCEPTION
        retrying.awaitTermination(retries.backoffMs() + 5_000, TimeUnit.MILLISECONDS);
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
        /** Whether an answer of CONCURRENT_TRANSACTIONS is asked again, until {@link #retryUntilNanos} ({@link System#nanoTime}). */
        private final boolean retried;
        private final long retryUntilNanos;
        /** What it adds to a request and to its answer at most ({@link RemoteVerifier#bytes}). */
        private final int bytes;
        /** Set before each send (its lane reads it after). */
        private volatile InetSocketAddress to;
        /** Set after {@link #errors} are, once they are final. */
        private volatile boolean done;

        Remote(final String transactionalId, final long producerId, final short epoch, final String[] topics,
            final int[] partitions, final boolean add, final Runnable waker, final boolean retried)
        {
            this.transactionalId = transactionalId;
            this.producerId = producerId;
            this.epoch = epoch;
            this.topics = topics;
            this.partitions = partitions;
            this.add = add;
            this.waker = waker;
            this.errors = new short[topics.length];
            this.retried = retried;
            this.retryUntilNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(retries.maxMs());
            this.bytes = bytes(transactionalId, topics);
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

        /** To the coordinator {@code at}, over the network (its error, when none is located: the answer). */
        void sendTo(final PartitionOwnership.Located at)
        {
            if (at.error() != Errors.NONE)
            {
                answer(at.error());
                return;
            }
            to = new InetSocketAddress(at.host(), at.port());
            requests.send(this);
        }

        void answer(final short error)
        {
            if (!done)
            {
                Arrays.fill(errors, error);
                settle();
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
            settle();
        }

        /** The errors are in: final, or (CONCURRENT_TRANSACTIONS for some partition, before the bound) asked again later. */
        private void settle()
        {
            if (retried && System.nanoTime() - retryUntilNanos < 0 && concurrent())
            {
                try
                {
                    retrying.schedule(this::retry, retries.backoffMs(), TimeUnit.MILLISECONDS);
                    return;
                }
                catch (final RejectedExecutionException closed)
                {
                    // closed: the answer so far is final
                }
            }
            done = true;
            waker.run();
        }

        private boolean concurrent()
        {
            for (final short error : errors)
            {
                if (error == Errors.CONCURRENT_TRANSACTIONS)
                {
                    return true;
                }
            }
            return false;
        }

        /** After its backoff, on the retries' thread: asked again where the coordinator is now. */
        private void retry()
        {
            try
            {
                sendTo(coordinators.locate(transactionalId));
            }
            catch (final RuntimeException ex)
            {
                LOG.error("Asking {}'s coordinator again failed: the last answer is final", transactionalId, ex);
                done = true;
                waker.run();
            }
        }

        @Override
        public InetSocketAddress to()
        {
            return to;
        }

        @Override
        public NodeRequests.Request request()
        {
            return new Questions(this);
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

        @Override
        public void failed(final Exception cause)
        {
            answer(Errors.NETWORK_EXCEPTION);
        }
    }

    /**
     * Bytes a question adds to a request and to its answer at most: its id and the fields of its transaction, each topic's
     * name once (up to 3 bytes a char) with its array lengths, and each partition's index in the request, its index and
     * error in the answer (review L5: the name was counted once per partition). Nothing allocated (review L3): a name is
     * counted unless an earlier one equals it — the one just before first, as a produce's partitions of one topic come
     * together (its request names each topic once), so the lists of many partitions cost one comparison each.
     */
    static int bytes(final String transactionalId, final String[] topics)
    {
        int n = 40 + 3 * transactionalId.length();
        for (int i = 0; i < topics.length; i++)
        {
            n += 11;
            if (!namedBefore(topics, i))
            {
                n += 20 + 3 * topics[i].length();
            }
        }
        return n;
    }

    private static boolean namedBefore(final String[] topics, final int i)
    {
        final String topic = topics[i];
        for (int j = i - 1; j >= 0; j--)
        {
            if (topics[j].equals(topic))
            {
                return true;
            }
        }
        return false;
    }

    /**
     * One AddPartitionsToTxn v5 to a coordinator node: the questions queued for it, one transaction each, in the order
     * queued. Two questions of one transactional id never share a request (the answer is per id): the second waits for
     * the next, those behind it still joining (Kafka's manager answers the older one NETWORK_EXCEPTION, or
     * INVALID_PRODUCER_EPOCH, and sends the newer).
     * A request refused whole is each partition's error (a missing ACL: INVALID_TXN_STATE), as Kafka's manager.
     */
    private static final class Questions extends RequestBatch<Remote>
    {
        private final AddPartitionsToTxnRequestEncoder request = new AddPartitionsToTxnRequestEncoder();
        private final AddPartitionsToTxnResponseDecoder response = new AddPartitionsToTxnResponseDecoder();
        private final Set<String> ids = new HashSet<>();

        Questions(final Remote first)
        {
            super(ApiKeys.ADD_PARTITIONS_TO_TXN, VERSION, Remote.class, first, FRAME_BYTES - FRAME_SLACK);
            ids.add(first.transactionalId);
        }

        @Override
        protected int bytes(final Remote r)
        {
            return r.bytes;
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
