package io.ferrite.client;

import io.ferrite.wire.compress.Codecs;
import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableDirectByteBuffer;

/**
 * One RecordBatch v2 for one partition, built in place in its own off-heap buffer by a
 * {@link RecordBatchBuilder}, with the tag of each record for its completion. Pooled by the
 * producer: open (taking records), sealed (built, waiting to be sent or retried), in flight.
 */
final class ProducerBatch
{
    /** Bytes a record may take beyond its key, value and headers: attributes, the varints, the header count. */
    static final int RECORD_OVERHEAD = 1 + 5 + 10 + 5 + 5 + 5 + 5;
    /** A v2 batch's header: offset, length, epoch, magic, crc, attributes, deltas, timestamps, producer, count. */
    static final int BATCH_OVERHEAD = 61;

    final ExpandableDirectByteBuffer buffer;
    private final RecordBatchBuilder builder;
    /** One per record: a batch holds at most batch.size / RECORD_OVERHEAD records (one more when a record alone exceeds it). */
    private final long[] tags;
    /** The next batch in the {@link BatchQueue} holding this one. */
    ProducerBatch next;

    TopicState topic;
    PartitionState partition;
    int recordCount;
    int estimatedSize;
    int size;
    long createdNs;
    long deliveryDeadlineNs;
    long retryAtNs;
    int attempts;

    ProducerBatch(final int batchSize, final Codecs codecs)
    {
        this.buffer = new ExpandableDirectByteBuffer(batchSize + BATCH_OVERHEAD + 1024);
        this.builder = new RecordBatchBuilder(codecs);
        this.tags = new long[batchSize / RECORD_OVERHEAD + 2];
    }

    void open(final TopicState topic, final PartitionState partition, final CompressionType compression,
        final long nowNs, final long deliveryTimeoutNs)
    {
        this.topic = topic;
        this.partition = partition;
        builder.wrap(buffer, 0).compression(compression);
        recordCount = 0;
        estimatedSize = BATCH_OVERHEAD;
        size = 0;
        createdNs = nowNs;
        deliveryDeadlineNs = nowNs + deliveryTimeoutNs;
        retryAtNs = nowNs;
        attempts = 0;
    }

    void append(
        final long timestamp,
        final DirectBuffer key, final int keyOffset, final int keyLength,
        final DirectBuffer value, final int valueOffset, final int valueLength,
        final OutgoingHeaders headers, final int estimate, final long tag)
    {
        if (headers == null || headers.count() == 0)
        {
            builder.appendRecord(timestamp, key, keyOffset, keyLength, value, valueOffset, valueLength);
        }
        else
        {
            builder.beginRecord(timestamp, recordCount, key, keyOffset, keyLength, value, valueOffset, valueLength);
            headers.appendTo(builder);
            builder.endRecord();
        }
        tags[recordCount++] = tag;
        estimatedSize += estimate;
    }

    boolean sealed()
    {
        return size > 0;
    }

    void seal()
    {
        size = builder.build();
    }

    long tag(final int i)
    {
        return tags[i];
    }

    void release()
    {
        topic = null;
        partition = null;
    }
}
