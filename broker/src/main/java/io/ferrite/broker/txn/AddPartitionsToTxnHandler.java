package io.ferrite.broker.txn;

import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.Errors;
import io.ferrite.broker.api.PartitionLookup;
import io.ferrite.broker.coordinator.CoordinatorApiHandler;
import io.ferrite.broker.coordinator.CoordinatorCall;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.AddPartitionsToTxnRequestDecoder;
import io.ferrite.wire.message.AddPartitionsToTxnResponseEncoder;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * AddPartitionsToTxn. Versions 0-3 (a client's): as Kafka's KafkaApis, WRITE on the transactional id first (else
 * TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition), then WRITE on each topic: a partition of a topic the
 * principal may not write (or of one of Kafka's internal topics, refused to anyone) is TOPIC_AUTHORIZATION_FAILED, one of a
 * topic that does not exist UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED, nothing sent to the
 * coordinator; else the coordinator adds them all or none, one error for every partition. An add
 * meeting the previous transaction's end (CONCURRENT_TRANSACTIONS: its markers are still being written)
 * is answered so at once, as Kafka 4.4's {@code TransactionCoordinator.handleAddPartitionsToTransaction}
 * answers it (javap); the client retries after its backoff (kafka-clients: {@code retry.backoff.ms}).
 * Only a produce's own add is held and retried by the broker ({@link ProduceVerifier}).
 * Versions 4-5 (a broker's batched form): per transaction, a partition of a topic that does not exist
 * is UNKNOWN_TOPIC_OR_PARTITION and the transaction's others OPERATION_NOT_ATTEMPTED, nothing asked of
 * the coordinator for it (Kafka's KafkaApis, every version); else VerifyOnly answers per partition
 * whether it is in the ongoing transaction (TRANSACTION_ABORTABLE if not), or the partitions are added
 * with transaction version 2; CONCURRENT_TRANSACTIONS answered at once here too, as Kafka 4.4's coordinator
 * answers a broker's request (the asking broker retries it: Kafka's {@code ReplicaManager}). With an authorizer they
 * need CLUSTER_ACTION on the cluster, as in Kafka 4.4: else the top-level CLUSTER_AUTHORIZATION_FAILED and no results.
 * A partition exists here as in Kafka's check, its metadata ({@link PartitionLookup#inMetadata}): one of a large topic
 * still being made in slices is added (a produce to it answers NOT_LEADER_OR_FOLLOWER until it is made; a marker the
 * transaction's end finds it still unmade for is dropped, as nothing of the transaction can be in a log not yet made, and
 * a produce there afterwards is verified against the coordinator first).
 */
final class AddPartitionsToTxnHandler extends CoordinatorApiHandler<TxnCoordinator, AddPartitionsToTxnRequestDecoder>
{
    /** Not an error code: the answer of a request naming partitions that do not exist or it may not write. */
    private static final short UNKNOWN_TOPICS = Short.MIN_VALUE;
    /** Kafka's {@code Topic.isInternal} names. */
    private static final Set<String> KAFKA_INTERNAL = Set.of("__consumer_offsets", "__transaction_state", "__share_group_state");

    private final TopicRegistry topics;
    private final AddPartitionsToTxnResponseEncoder response = new AddPartitionsToTxnResponseEncoder();

    AddPartitionsToTxnHandler(final TxnCoordinator coordinator, final TopicRegistry topics, final Runnable waker)
    {
        super(coordinator, coordinator.agent(), waker, new AddPartitionsToTxnRequestDecoder());
        this.topics = topics;
    }

    /** One transaction of the request: its partitions by topic, in request order. */
    private record Asked(String transactionalId, long producerId, short epoch, boolean verifyOnly, Map<String, List<Integer>> partitions)
    {
        Set<TxnPartition> set()
        {
            final Set<TxnPartition> set = new LinkedHashSet<>();
            partitions.forEach((topic, indexes) -> indexes.forEach(i -> set.add(new TxnPartition(topic, i))));
            return set;
        }
    }

    private static Map<String, List<Integer>> partitions(final AddPartitionsToTxnRequestDecoder.AddPartitionsToTxnTopic t)
    {
        final Map<String, List<Integer>> byTopic = new LinkedHashMap<>();
        while (t.hasNext())
        {
            t.next();
            final List<Integer> indexes = byTopic.computeIfAbsent(t.name(), k -> new ArrayList<>());
            for (int i = 0; i < t.partitionsCount(); i++)
            {
                indexes.add(t.partitions(i));
            }
        }
        return byTopic;
    }

    @Override
    protected int handle(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        if (version <= 3)
        {
            final Asked asked = new Asked(request.v3AndBelowTransactionalId(), request.v3AndBelowProducerId(),
                request.v3AndBelowProducerEpoch(), false, partitions(request.v3AndBelowTopics()));
            if (!Access.transactionalId(connection, AclCodes.WRITE, asked.transactionalId()))
            {
                return writeV3(out, outOffset, version, asked, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, Set.of());
            }
            final Set<String> refused = refusedTopics(asked, connection);
            if (!refused.isEmpty() || anyUnknown(asked))
            {
                return writeV3(out, outOffset, version, asked, UNKNOWN_TOPICS, refused);
            }
            final short clientVersion = TxnErrors.addPartitionsClientVersion(version);
            return submit(connection, out, outOffset,
                (c, now) -> c.addPartitions(asked.transactionalId(), asked.producerId(), asked.epoch(), asked.set(), clientVersion),
                (o, at, added) -> writeV3(o, at, version, asked, TxnErrors.forTxnRequest(added.answer().error(), version), Set.of()),
                (o, at, error) -> writeV3(o, at, version, asked, error, Set.of()));
        }
        if (!Access.cluster(connection, AclCodes.CLUSTER_ACTION)) // v4+ is a broker's request: Kafka's top-level refusal
        {
            return writeBatch(out, outOffset, version, List.of(), null, Errors.CLUSTER_AUTHORIZATION_FAILED);
        }
        final List<Asked> transactions = new ArrayList<>();
        final List<Map<TxnPartition, Short>> unknown = new ArrayList<>(); // per transaction: its answer, or null to ask
        final AddPartitionsToTxnRequestDecoder.AddPartitionsToTxnTransaction t = request.transactions();
        while (t.hasNext())
        {
            t.next();
            final Asked asked = new Asked(t.transactionalId(), t.producerId(), t.producerEpoch(), t.verifyOnly(), partitions(t.topics()));
            transactions.add(asked);
            unknown.add(anyUnknown(asked) ? unknownTopicsAnswer(asked) : null);
        }
        return submit(connection, out, outOffset, (c, now) -> new Batch(c, transactions, unknown, version),
            (o, at, batch) -> writeBatch(o, at, version, transactions, batch, Errors.NONE),
            (o, at, error) -> writeBatch(o, at, version, transactions, null, error));
    }

    private boolean anyUnknown(final Asked asked)
    {
        for (final Map.Entry<String, List<Integer>> e : asked.partitions().entrySet())
        {
            final Topic topic = topics.topic(e.getKey());
            for (final int p : e.getValue())
            {
                if (!PartitionLookup.inMetadata(topic, p))
                {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The topics of a client's request its principal may not WRITE, as Kafka 4.4's KafkaApis checks them after the transactional
     * id: Kafka's internal topics always (its check leaves them out of what it authorizes, so they are refused even to a super
     * user, or without an authorizer), the others by the ACLs.
     */
    private Set<String> refusedTopics(final Asked asked, final Connection connection)
    {
        Set<String> refused = Set.of();
        for (final String name : asked.partitions().keySet())
        {
            final Topic topic = topics.topic(name);
            if (KAFKA_INTERNAL.contains(name) || !(topic != null ? Access.topic(connection, AclCodes.WRITE, topic) :
                Access.topic(connection, AclCodes.WRITE, name)))
            {
                refused = refused.isEmpty() ? new LinkedHashSet<>() : refused;
                refused.add(name);
            }
        }
        return refused;
    }

    /**
     * The v0-3 answer: {@code error} for every partition, or ({@link #UNKNOWN_TOPICS}) TOPIC_AUTHORIZATION_FAILED for the
     * {@code refused} topics' partitions, each unknown one's error and OPERATION_NOT_ATTEMPTED for the rest.
     */
    private int writeV3(final MutableDirectBuffer out, final int outOffset, final short version, final Asked asked, final short error,
        final Set<String> refused)
    {
        final AddPartitionsToTxnResponseEncoder.AddPartitionsToTxnTopicResult r = response.wrap(out, outOffset, version)
            .throttleTimeMs(0).resultsByTopicV3AndBelow(asked.partitions().size());
        for (final Map.Entry<String, List<Integer>> e : asked.partitions().entrySet())
        {
            final Topic topic = topics.topic(e.getKey());
            final AddPartitionsToTxnResponseEncoder.AddPartitionsToTxnPartitionResult pr = r.next().name(e.getKey())
                .resultsByPartition(e.getValue().size());
            for (final int p : e.getValue())
            {
                final short each = error != UNKNOWN_TOPICS ? error :
                    refused.contains(e.getKey()) ? Errors.TOPIC_AUTHORIZATION_FAILED : existence(topic, p);
                pr.next().partitionIndex(p).partitionErrorCode(each);
            }
        }
        return outOffset + response.finish();
    }

    /** A partition's answer in a transaction naming one that does not exist: UNKNOWN_TOPIC_OR_PARTITION or OPERATION_NOT_ATTEMPTED. */
    private static short existence(final Topic topic, final int partition)
    {
        return !PartitionLookup.inMetadata(topic, partition) ? Errors.UNKNOWN_TOPIC_OR_PARTITION : Errors.OPERATION_NOT_ATTEMPTED;
    }

    /** A transaction naming a partition that does not exist: UNKNOWN_TOPIC_OR_PARTITION for it, OPERATION_NOT_ATTEMPTED for the rest. */
    private Map<TxnPartition, Short> unknownTopicsAnswer(final Asked asked)
    {
        final Map<TxnPartition, Short> answer = new LinkedHashMap<>();
        for (final Map.Entry<String, List<Integer>> e : asked.partitions().entrySet())
        {
            final Topic topic = topics.topic(e.getKey());
            for (final int p : e.getValue())
            {
                answer.put(new TxnPartition(e.getKey(), p), existence(topic, p));
            }
        }
        return answer;
    }

    /** The v4+ work on the agent: each transaction verified (answered now) or added (answered once written). */
    private static final class Batch implements CoordinatorCall.Outcome
    {
        final List<Object> results = new ArrayList<>(); // per transaction: Map<TxnPartition, Short> or TxnCoordinator.Pending

        Batch(final TxnCoordinator c, final List<Asked> transactions, final List<Map<TxnPartition, Short>> unknown, final short version)
        {
            for (int i = 0; i < transactions.size(); i++)
            {
                final Asked a = transactions.get(i);
                results.add(unknown.get(i) != null ? unknown.get(i) : a.verifyOnly() ? c.verify(a.transactionalId(), a.producerId(), a.epoch(), a.set()) :
                    c.addPartitions(a.transactionalId(), a.producerId(), a.epoch(), a.set(), TxnErrors.addPartitionsClientVersion(version)));
            }
        }

        @Override
        public boolean complete(final long nowMs)
        {
            boolean all = true;
            for (final Object r : results)
            {
                if (r instanceof TxnCoordinator.Pending p && !p.complete(nowMs))
                {
                    all = false;
                }
            }
            return all;
        }
    }

    private int writeBatch(final MutableDirectBuffer out, final int outOffset, final short version, final List<Asked> transactions,
        final Batch batch, final short error)
    {
        final AddPartitionsToTxnResponseEncoder.AddPartitionsToTxnResult r = response.wrap(out, outOffset, version).throttleTimeMs(0)
            .errorCode(error).resultsByTransaction(batch == null ? 0 : transactions.size());
        for (int i = 0; batch != null && i < transactions.size(); i++)
        {
            final Asked a = transactions.get(i);
            final Object result = batch.results.get(i);
            final AddPartitionsToTxnResponseEncoder.AddPartitionsToTxnTopicResult tr = r.next().transactionalId(a.transactionalId())
                .topicResults(a.partitions().size());
            for (final Map.Entry<String, List<Integer>> e : a.partitions().entrySet())
            {
                final AddPartitionsToTxnResponseEncoder.AddPartitionsToTxnPartitionResult pr = tr.next().name(e.getKey())
                    .resultsByPartition(e.getValue().size());
                for (final int p : e.getValue())
                {
                    final short each = result instanceof TxnCoordinator.Pending pending ? pending.answer().error() :
                        ((Map<?, ?>)result).get(new TxnPartition(e.getKey(), p)) instanceof Short s ? s : Errors.UNKNOWN_SERVER_ERROR;
                    pr.next().partitionIndex(p).partitionErrorCode(each);
                }
            }
        }
        return outOffset + response.finish();
    }
}
