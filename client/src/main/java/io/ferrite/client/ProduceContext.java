package io.ferrite.client;

import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.ProduceRequestEncoder;

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

    /** Writes the Produce request of these batches (grouped by topic, {@code topicCount} topics) into {@code c} and commits it. */
    void encode(final ProduceRequestEncoder request, final NodeConnection c, final short version, final int topicCount,
        final short acks, final int timeoutMs, final long now)
    {
        final int body = c.begin(ApiKeys.PRODUCE, version);
        request.wrap(c.buffer(), body, version).transactionalId((CharSequence)null).acks(acks).timeoutMs(timeoutMs);
        final ProduceRequestEncoder.TopicProduceData td = request.topicData(topicCount);
        int i = 0;
        while (i < count)
        {
            final TopicState t = batches[i].topic;
            int j = i;
            while (j < count && batches[j].topic == t)
            {
                j++;
            }
            td.next().name(t.nameBytes, 0, t.nameBytes.capacity());
            final ProduceRequestEncoder.PartitionProduceData pd = td.partitionData(j - i);
            for (int k = i; k < j; k++)
            {
                final ProducerBatch b = batches[k];
                pd.next().index(b.partition.partition).records(b.buffer, 0, b.size);
            }
            i = j;
        }
        final int length = request.finish();
        c.commit(ApiKeys.PRODUCE, version, body + length, this, acks != 0, now);
    }

    /** The batch of this request for the topic named at {@code [nameOffset, +nameLength)} and partition, taken out; null if none. */
    ProducerBatch take(final org.agrona.DirectBuffer buffer, final int nameOffset, final int nameLength, final int partition)
    {
        for (int i = 0; i < count; i++)
        {
            final ProducerBatch b = batches[i];
            if (b != null && b.partition.partition == partition && b.topic.nameEquals(buffer, nameOffset, nameLength))
            {
                batches[i] = null;
                return b;
            }
        }
        return null;
    }

    void clear()
    {
        java.util.Arrays.fill(batches, 0, count, null);
        count = 0;
    }
}
