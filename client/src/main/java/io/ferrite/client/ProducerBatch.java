package io.ferrite.client;

import io.ferrite.wire.compress.Codecs;
import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.record.Crc32c;
import io.ferrite.wire.record.RecordBatchDescriptor;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableDirectByteBuffer;

import static java.nio.ByteOrder.BIG_ENDIAN;

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
    /** Its own: a CRC's view is made once per buffer, so one shared by the batches would make one per stamp. */
    private final Crc32c crc = new Crc32c();
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
    /** The error of its last answer (or failure), 0 before one: for {@link ProducerDiagnostics}. */
    short lastError;
    /** The idempotent producer's stamp, given when the batch is first sent: -1 before. */
    long producerId;
    short producerEpoch;
    int baseSequence;
    /** Renumbered by an epoch bump after it was sent (kafka-clients' {@code sequenceHasBeenReset}). */
    boolean sequenceReset;
    /** Neighbours in its partition's list of unacknowledged batches ({@link PartitionState#addUnacked}). */
    ProducerBatch prevUnacked;
    ProducerBatch nextUnacked;

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
        lastError = 0;
        producerId = -1;
        producerEpoch = -1;
        baseSequence = -1;
        sequenceReset = false;
    }

    boolean hasSequence()
    {
        return baseSequence >= 0;
    }

    int lastSequence()
    {
        return Sequences.increment(baseSequence, recordCount - 1);
    }

    /** Writes the producer id, epoch and base sequence into the sealed batch's header and its CRC again. */
    void stamp(final long producerId, final short producerEpoch, final int baseSequence)
    {
        this.producerId = producerId;
        this.producerEpoch = producerEpoch;
        this.baseSequence = baseSequence;
        buffer.putLong(RecordBatchDescriptor.PRODUCER_ID_OFFSET, producerId, BIG_ENDIAN);
        buffer.putShort(RecordBatchDescriptor.PRODUCER_EPOCH_OFFSET, producerEpoch, BIG_ENDIAN);
        buffer.putInt(RecordBatchDescriptor.BASE_SEQUENCE_OFFSET, baseSequence, BIG_ENDIAN);
        buffer.putInt(RecordBatchDescriptor.CRC_OFFSET, crc.compute(buffer, RecordBatchDescriptor.ATTRIBUTES_OFFSET,
            size - RecordBatchDescriptor.ATTRIBUTES_OFFSET), BIG_ENDIAN);
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
            try
            {
                headers.appendTo(builder);
            }
            catch (final RuntimeException ex)
            {
                // a header that throws half-way leaves no half-written record: the batch stays as it was
                builder.abortRecord();
                throw ex;
            }
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
