package io.ferrite.client;

/** The batches of one Produce request in flight, grouped by topic in request order; pooled. */
final class ProduceContext
{
    ProducerBatch[] batches = new ProducerBatch[64];
    int count;
    /** The next context in the producer's free list. */
    ProduceContext next;

    /** Room for one batch of each of {@code partitions} partitions: a request takes at most one per partition. */
    void ensureCapacity(final int partitions)
    {
        if (batches.length < partitions)
        {
            batches = java.util.Arrays.copyOf(batches, partitions);
        }
    }

    void add(final ProducerBatch batch)
    {
        if (count == batches.length)
        {
            batches = java.util.Arrays.copyOf(batches, count * 2);
        }
        batches[count++] = batch;
    }

    void clear()
    {
        java.util.Arrays.fill(batches, 0, count, null);
        count = 0;
    }
}
