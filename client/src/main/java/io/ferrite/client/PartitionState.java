package io.ferrite.client;

/**
 * A partition as the producer sees it: its leader, the batch taking records, the sealed ones waiting
 * in order, and (idempotent producer) its sequence numbers and the batches sent and not yet completed.
 */
final class PartitionState
{
    final int partition;
    int leader = -1;
    int leaderEpoch = -1;
    ProducerBatch open;
    /** Sealed batches in send order; a retried batch goes back in sequence order, before those never sent. */
    final BatchQueue sealed = new BatchQueue();
    /** Batches of this partition in requests in flight (without idempotence at most one, so a retry cannot overtake). */
    int inFlight;
    /** The most batches of this partition in flight at once (the tests show 5 with idempotence). */
    int peakInFlight;

    /** The producer id and epoch this partition's sequences belong to (-1: none yet). */
    long producerId = -1;
    short producerEpoch = -1;
    /** The base sequence of the next batch sent for the first time. */
    int nextSequence;
    /** The last sequence the broker acknowledged, -1 for none. */
    int lastAckedSequence = -1;
    /** Batches given a sequence and not completed, sent or waiting for a retry, in sequence order. */
    ProducerBatch firstUnacked;
    ProducerBatch lastUnacked;
    /** An error asked for an epoch bump: this partition's unacknowledged batches are renumbered from 0 under it. */
    boolean rewriteSequences;
    /**
     * A batch that was sent failed with its outcome unknown (expired, or out of retries after a lost answer):
     * it may be in the log. No batch of the partition is sent for the first time until its other unacknowledged
     * batches have completed; then it is resolved (the last acknowledged sequence is the last given: it arrived) or
     * the epoch is bumped (kafka-clients' unresolved sequence).
     */
    boolean unresolved;
    /** The sequence after the unresolved batch's last: a batch with it answered OUT_OF_ORDER_SEQUENCE_NUMBER proves the gap. */
    int unresolvedSequence;

    PartitionState(final int partition)
    {
        this.partition = partition;
    }

    /**
     * Closes the open batch (kafka-clients closes a batch when its sender drains it, or when the next record does not
     * fit): built, it takes no more records, and the topic's keyless records go to its next partition.
     */
    ProducerBatch sealOpen()
    {
        final ProducerBatch b = open;
        b.seal();
        open = null;
        b.topic.sticky++;
        return b;
    }

    /** Closes the open batch ({@link #sealOpen}) and queues it behind the sealed ones. */
    void sealQueued()
    {
        sealed.addLast(sealOpen());
    }

    /** The open batch if it has waited {@code lingerNs} (it may go when its partition may send), else null. */
    ProducerBatch lingeredOpen(final long nowNs, final long lingerNs)
    {
        return open != null && nowNs - open.createdNs >= lingerNs ? open : null;
    }

    boolean hasUnacked()
    {
        return firstUnacked != null;
    }

    void addUnacked(final ProducerBatch b)
    {
        b.prevUnacked = lastUnacked;
        b.nextUnacked = null;
        if (lastUnacked == null)
        {
            firstUnacked = b;
        }
        else
        {
            lastUnacked.nextUnacked = b;
        }
        lastUnacked = b;
    }

    void removeUnacked(final ProducerBatch b)
    {
        if (b.prevUnacked == null)
        {
            if (firstUnacked != b)
            {
                return; // not in the list
            }
            firstUnacked = b.nextUnacked;
        }
        else
        {
            b.prevUnacked.nextUnacked = b.nextUnacked;
        }
        if (b.nextUnacked == null)
        {
            lastUnacked = b.prevUnacked;
        }
        else
        {
            b.nextUnacked.prevUnacked = b.prevUnacked;
        }
        b.prevUnacked = null;
        b.nextUnacked = null;
    }
}
