package io.ferrite.broker.txn;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.coordinator.transaction.TransactionMetadata;
import org.apache.kafka.coordinator.transaction.TransactionState;
import org.apache.kafka.coordinator.transaction.TxnTransitMetadata;
import org.apache.kafka.server.common.TransactionVersion;

import java.util.HashSet;
import java.util.Set;
import java.util.stream.Collectors;

/** Conversions between Ferrite's transaction types and Kafka 4.4's, for the tests that hold one against the other. */
final class KafkaTxn
{
    private KafkaTxn()
    {
    }

    static TransactionState state(final TxnState s)
    {
        return TransactionState.fromId(s.id());
    }

    static TxnState state(final TransactionState s)
    {
        return TxnState.ofId(s.id());
    }

    static HashSet<TopicPartition> partitions(final Set<TxnPartition> partitions)
    {
        return partitions.stream().map(p -> new TopicPartition(p.topic(), p.partition())).collect(Collectors.toCollection(HashSet::new));
    }

    static Set<TxnPartition> partitionsOf(final Set<TopicPartition> partitions)
    {
        return partitions.stream().map(p -> new TxnPartition(p.topic(), p.partition())).collect(Collectors.toSet());
    }

    static TxnTransitMetadata transit(final TxnTransit t)
    {
        return new TxnTransitMetadata(t.producerId(), t.prevProducerId(), t.nextProducerId(), t.producerEpoch(), t.lastProducerEpoch(),
            t.timeoutMs(), state(t.state()), partitions(t.partitions()), t.startTimestamp(), t.lastUpdateTimestamp(),
            TransactionVersion.fromFeatureLevel(t.clientTransactionVersion()));
    }

    static TxnTransit transit(final TxnTransitMetadata t)
    {
        return new TxnTransit(t.producerId(), t.prevProducerId(), t.nextProducerId(), t.producerEpoch(), t.lastProducerEpoch(),
            t.txnTimeoutMs(), state(t.txnState()), partitionsOf(t.topicPartitions()), t.txnStartTimestamp(), t.txnLastUpdateTimestamp(),
            t.clientTransactionVersion().featureLevel());
    }

    /** Kafka's metadata of the same content (no pending state). */
    static TransactionMetadata metadata(final String id, final TxnTransit t)
    {
        return new TransactionMetadata(id, t.producerId(), t.prevProducerId(), t.nextProducerId(), t.producerEpoch(),
            t.lastProducerEpoch(), t.timeoutMs(), state(t.state()), partitions(t.partitions()), t.startTimestamp(),
            t.lastUpdateTimestamp(), TransactionVersion.fromFeatureLevel(t.clientTransactionVersion()));
    }

    /** Kafka's metadata as a transit of its own state, as {@link TxnMetadata#snapshot} does for ours. */
    static TxnTransit snapshot(final TransactionMetadata m)
    {
        // Kafka's metadata has no nextProducerId accessor: its no-op transit carries it
        return transit(m.prepareNoTransit());
    }
}
