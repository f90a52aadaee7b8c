package io.ferrite.log;

import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;

import static io.ferrite.wire.record.RecordBatchDescriptor.NO_SEQUENCE;

/**
 * Builds the control batch of a transaction marker, as Kafka's {@code MemoryRecords.withEndTransactionMarker}
 * writes it: RecordBatch v2, transactional and control, the producer's id and epoch, base sequence
 * -1, no compression, one record whose key is {@code version 0, type (ABORT 0, COMMIT 1)} and whose
 * value is {@code version 0, coordinator epoch}, timestamped now. One per log, made at its first
 * marker (a log that never sees one keeps none); the log's writer thread only.
 */
final class MarkerBatch
{
    /** A marker is 61 bytes of header and a record of about 20: room to spare. */
    private static final int CAPACITY = 128;

    private final RecordBatchBuilder builder = new RecordBatchBuilder();
    final MutableDirectBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(CAPACITY));

    /** @return the batch's length, at index 0 of {@link #buffer} */
    int build(final long producerId, final short producerEpoch, final int coordinatorEpoch, final boolean commit, final long now)
    {
        return builder.wrap(buffer, 0).producer(producerId, producerEpoch, NO_SEQUENCE).transactional(true).control(true)
            .appendEndTxnMarker(now, commit, coordinatorEpoch).build();
    }
}
