package io.ferrite.broker.txn;

import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;

/**
 * Which transactional ids this node coordinates ({@link PartitionOwnership} of {@code __transaction_state}). Alone
 * ({@link TxnCoordinator#followLeaders} never called), every one: the coordinator loads every partition at start. In a
 * cluster (issue 14), as Kafka 4.4's transaction coordinator: the ids whose partition ({@link TxnConfig#partitionFor})
 * this node leads. A new lead replays the partition ({@link TxnReplay}) and completes the transactions it left
 * prepared (their markers sent again, then Complete*); a lost lead forgets its transactions and their markers under way
 * (the new leader's load sends them again). The cache answers from it ({@link TxnCache#lookupError}).
 */
public final class TxnOwnership extends PartitionOwnership
{
    private static final Logger LOG = LoggerFactory.getLogger(TxnOwnership.class);

    private final TxnCoordinator coordinator;
    private final TopicRegistry topics;
    /** The leader epoch each loaded partition was loaded at: its markers' coordinator epoch (agent only). */
    private final Map<Integer, Integer> loadedEpochs = new HashMap<>();

    TxnOwnership(final TxnCoordinator coordinator, final TopicRegistry topics)
    {
        super(TxnCoordinator.TOPIC, "transactional ids", () -> coordinator.agent().wake(), true); // Kafka's onElection reloads
        this.coordinator = coordinator;
        this.topics = topics;
    }

    @Override
    protected void load(final int partition, final int leaderEpoch)
    {
        final Topic topic = topics.topic(TxnCoordinator.TOPIC);
        if (topic == null || partition >= topic.partitions.length)
        {
            throw new IllegalStateException("led but not here");
        }
        final int count = coordinator.config().stateLogPartitions();
        if (partition >= count)
        {
            // the topic grown (CreatePartitions) after its count was fixed: no id is placed here while this broker runs
            LOG.info("{}-{}: led, but ids are placed by the {} partitions fixed for this broker's life: none is here",
                TxnCoordinator.TOPIC, partition, count);
            return;
        }
        loadedEpochs.put(partition, leaderEpoch); // before the load: it starts the markers of the prepared transactions
        final int records = coordinator.loadPartition(topic.partition(partition), partition);
        LOG.info("{}-{}: coordinator of its transactional ids at leader epoch {} ({} records loaded)", TxnCoordinator.TOPIC, partition,
            leaderEpoch, records);
    }

    @Override
    protected void unload(final int partition)
    {
        loadedEpochs.remove(partition);
        if (partition < coordinator.config().stateLogPartitions())
        {
            coordinator.unloadPartition(partition);
        }
        LOG.info("{}-{}: no longer its transactional ids' coordinator", TxnCoordinator.TOPIC, partition);
    }

    /**
     * On the agent: the coordinator epoch of {@code transactionalId}'s markers, as Kafka's WriteTxnMarkers carries it —
     * the leader epoch its {@code __transaction_state} partition was loaded at here (the partition keeps the highest it
     * saw per producer and refuses a lower one: a deposed coordinator's late marker is TRANSACTION_COORDINATOR_FENCED);
     * {@code otherwise} when the partition is not loaded here (alone: every partition, loaded at start).
     */
    int coordinatorEpoch(final String transactionalId, final int otherwise)
    {
        return loadedEpochs.getOrDefault(coordinator.config().partitionFor(transactionalId), otherwise);
    }
}
