package io.ferrite.client;

/** The batches of one Produce request in flight, grouped by topic in request order; pooled. */
final class ProduceContext
{
    ProducerBatch[] batches = new ProducerBatch[64];
    int count;

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
