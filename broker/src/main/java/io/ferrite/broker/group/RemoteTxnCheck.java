package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.api.TxnVerifier;
import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.broker.txn.TxnCoordinator;
import io.ferrite.broker.txn.TxnPartition;

/**
 * Where a TxnOffsetCommit's transaction is verified in a cluster (issue 14), as Kafka 4.4's group coordinator verifies
 * it through its node's {@code AddPartitionsToTxnManager} (KIP-890): when the transactional id's coordinator (the
 * leader of its {@code __transaction_state} partition) is another node, the {@code __consumer_offsets} partition is
 * verified (v0-4: VerifyOnly) or added (v5+) by an AddPartitionsToTxn v5 to that node ({@code txn.RemoteVerifier} over
 * its lane), and the commit waits on the agent for the answer; alone, or when the coordinator is this node, the local
 * transaction coordinator answers in the same step as the write's send ({@link TxnOffsetCommits}).
 *
 * <p>Unlike the local path, a remote answer and the batch's send are two steps: the transaction may end between them.
 * A marker that ended it with a bumped epoch (a fencing InitProducerId, a timeout's abort) makes the partition refuse
 * the batch (INVALID_PRODUCER_EPOCH, Kafka's COORDINATOR origin check); Kafka's verification guard, which also refuses
 * it after a marker at the same epoch, is not kept for coordinator batches here.
 */
final class RemoteTxnCheck
{
    /** Alone: every transactional id's coordinator is this node. */
    static final RemoteTxnCheck ALONE = new RemoteTxnCheck(null, -1);
    private final TxnVerifier verifier;
    private final int nodeId;

    /** {@code verifier} asks the coordinators of other nodes ({@code txn.RemoteVerifier}); {@code nodeId} is this node's. */
    RemoteTxnCheck(final TxnVerifier verifier, final int nodeId)
    {
        this.verifier = verifier;
        this.nodeId = nodeId;
    }

    /**
     * On the agent: null when {@code transactionalId}'s coordinator is this node (or cannot be located: the local
     * coordinator answers NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE), else the question to its node about
     * {@code partition} — an add when {@code add} — whose answer has {@code transactions}' agent settle its waiting
     * calls at once ({@link #settleSoon}).
     */
    TxnVerifier.Verification askElsewhere(final TxnCoordinator transactions, final String transactionalId, final long producerId,
        final short epoch, final TxnPartition partition, final boolean add)
    {
        final PartitionOwnership.Locator locator = transactions.ownership().locator();
        if (verifier == null || locator == null)
        {
            return null;
        }
        final PartitionOwnership.Located at = locator.locate(transactionalId);
        if (at.error() != Errors.NONE || at.nodeId() == nodeId)
        {
            return null;
        }
        return verifier.verify(transactionalId, producerId, epoch, new String[] {partition.topic()}, new int[] {partition.partition()},
            1, add, () -> settleSoon(transactions));
    }

    /**
     * From the lane's thread, once the answer is in: wakes {@code transactions}' agent, whose next pass settles its
     * waiting calls because it was woken ({@code CoordinatorAgent.wake}), so the commit waiting for this answer is
     * settled at once, not at the next 50 ms tick.
     */
    private static void settleSoon(final TxnCoordinator transactions)
    {
        transactions.agent().wake();
    }
}
