package io.ferrite.client;

/** A partition as the producer sees it: its leader, the batch taking records, the sealed ones waiting in order. */
final class PartitionState
{
    final int partition;
    int leader = -1;
    int leaderEpoch = -1;
    ProducerBatch open;
    /** Sealed batches in send order; a batch that is retried goes back to the front. */
    final BatchQueue sealed = new BatchQueue();
    /** At most one batch of a partition is in flight, so a retry cannot overtake a later batch. */
    boolean inFlight;

    PartitionState(final int partition)
    {
        this.partition = partition;
    }
}
