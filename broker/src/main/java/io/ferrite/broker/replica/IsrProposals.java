package io.ferrite.broker.replica;

/**
 * Where a leader proposes a change of a partition's ISR: Kafka's AlterPartition, which the controller
 * integration will implement (the controller decides; the leader applies what it answers through
 * {@link LeaderReplicas#isr(int[])}). Called on the partition's log thread, at most one proposal in
 * flight per partition (Kafka's "inflight" partition state): an implementation must not block.
 */
@FunctionalInterface
public interface IsrProposals
{
    /** Nothing is proposed anywhere: a single node, whose ISR is itself and never changes. */
    IsrProposals NONE = (topic, partition, leaderEpoch, isr) -> { };

    /**
     * Proposes {@code isr} (this node and the followers in sync, ascending) for {@code topic}-{@code partition}
     * led in {@code leaderEpoch}. Until the controller's answer is applied (or {@link LeaderReplicas#proposalFailed}),
     * nothing more is proposed for the partition.
     */
    void propose(String topic, int partition, int leaderEpoch, int[] isr);
}
