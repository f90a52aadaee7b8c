package io.ferrite.broker.txn;

import io.ferrite.broker.ProducerIds;
import io.ferrite.broker.api.Apis;
import io.ferrite.broker.coordinator.CoordinatorRuntime;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.ApiKeys;

/**
 * The transaction APIs, one handler class each, each a thin translation between the wire and
 * {@link TxnCoordinator} on the coordinators' agent ({@link io.ferrite.broker.coordinator.CoordinatorApiHandler}).
 * FindCoordinator for a transactional id is the group package's handler's (it stays on the network thread).
 * The tools' APIs: DescribeProducers reads each partition's producers on its log thread; WriteTxnMarkers from a
 * client sends its markers through the coordinators' {@link io.ferrite.broker.coordinator.CoordinatorLog}.
 */
public final class TxnHandlers
{
    private TxnHandlers()
    {
    }

    /**
     * Registers every transaction API on {@code apis} (each handler made on its first request); {@code waker} wakes their
     * network thread.
     */
    public static void register(final Apis apis, final TxnCoordinator coordinator, final CoordinatorRuntime runtime,
        final LogThread[] logThreads, final TopicRegistry topics, final ProducerIds ids, final Runnable waker)
    {
        apis.registerLazily(ApiKeys.INIT_PRODUCER_ID, () -> new InitProducerIdHandler(coordinator, waker, ids))
            .registerLazily(ApiKeys.ADD_PARTITIONS_TO_TXN, () -> new AddPartitionsToTxnHandler(coordinator, topics, waker))
            .registerLazily(ApiKeys.ADD_OFFSETS_TO_TXN, () -> new AddOffsetsToTxnHandler(coordinator, waker))
            .registerLazily(ApiKeys.END_TXN, () -> new EndTxnHandler(coordinator, waker))
            .registerLazily(ApiKeys.DESCRIBE_TRANSACTIONS, () -> new DescribeTransactionsHandler(coordinator, waker))
            .registerLazily(ApiKeys.LIST_TRANSACTIONS, () -> new ListTransactionsHandler(coordinator, waker))
            .registerLazily(ApiKeys.DESCRIBE_PRODUCERS, () -> new DescribeProducersHandler(topics, logThreads, waker))
            .registerLazily(ApiKeys.WRITE_TXN_MARKERS, () -> new WriteTxnMarkersHandler(runtime.log(), runtime.agent(), topics, waker));
    }
}
