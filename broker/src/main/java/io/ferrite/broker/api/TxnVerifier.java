package io.ferrite.broker.api;

/**
 * The transaction coordinator as a Produce asks it about a transactional batch that would open its
 * producer's transaction on a partition (Kafka's {@code AddPartitionsToTxnManager}, without the
 * network: the coordinator is on this node). Implemented by the transaction package on the
 * coordinators' agent; this package only knows the question and the answer's error codes.
 */
public interface TxnVerifier
{
    /**
     * A question under way, polled on the thread that asked it: a network thread (a produce), or the coordinators' agent
     * (a TxnOffsetCommit whose transactional id's coordinator is another node, {@code group.RemoteTxnCheck}).
     */
    interface Verification
    {
        /** Whether the coordinator answered (or never will: then each partition's error is COORDINATOR_NOT_AVAILABLE). */
        boolean done();

        /** Once {@link #done}: the coordinator's error for the {@code i}-th partition asked (before the produce's translation). */
        short error(int i);
    }

    /**
     * Asks whether partitions {@code topics[i]}-{@code partitions[i]} ({@code i < count}) are in the
     * ongoing transaction of {@code transactionalId} with this producer id and epoch ({@code add}
     * false: AddPartitionsToTxn's VerifyOnly), or adds them to it ({@code add} true: a transaction
     * version 2 producer, produce v12+). Copies what it keeps; {@code waker} runs when the answer is ready.
     */
    Verification verify(String transactionalId, long producerId, short epoch, String[] topics, int[] partitions, int count,
        boolean add, Runnable waker);

    /**
     * The verifier a TxnOffsetCommit asks: an add answered CONCURRENT_TRANSACTIONS is its answer at once (Kafka 4.4 retries
     * only a produce's add, in its {@code ReplicaManager}); this one unless it retries ({@code txn.RemoteVerifier}).
     */
    default TxnVerifier forOffsetCommits()
    {
        return this;
    }
}
