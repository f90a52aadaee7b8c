package io.ferrite.log;

import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.record.ControlRecords;
import io.ferrite.wire.record.CorruptRecordException;
import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;

import static io.ferrite.wire.record.RecordBatchDescriptor.NO_TIMESTAMP;

/**
 * Whether a control batch is a transaction marker, and which: the one reading that both the producer state
 * ({@link ProducerStateManager}, which ends the transaction) and a follower's {@code .txnindex} entry of an ABORT
 * ({@link FollowerAppender}, written before the marker is placed) go by, so that they cannot disagree.
 */
final class ControlMarkers
{
    private ControlMarkers()
    {
    }

    /**
     * The marker type of {@code batch} (a control batch), its record read into {@code record}: ABORT or COMMIT,
     * after which {@link ControlRecords#coordinatorEpoch} of {@code record} reads; else {@link ControlRecords#UNKNOWN}
     * — an empty or compressed control batch (not a marker a log writes; Kafka's reader takes none from an empty
     * one either), another control type, or a CRC-valid record too short to be a marker.
     */
    static short type(final RecordBatch batch, final Record record)
    {
        if (batch.recordCount() < 1 || batch.compression() != CompressionType.NONE)
        {
            return ControlRecords.UNKNOWN;
        }
        try
        {
            record.wrap(batch.buffer(), batch.recordsOffset(), batch.offset() + batch.sizeInBytes(), batch.baseOffset(),
                batch.baseTimestamp(), NO_TIMESTAMP);
            final short type = ControlRecords.type(record);
            if (type != ControlRecords.ABORT && type != ControlRecords.COMMIT)
            {
                return ControlRecords.UNKNOWN;
            }
            ControlRecords.coordinatorEpoch(record); // throws when the value cannot hold one
            return type;
        }
        catch (final CorruptRecordException ex)
        {
            return ControlRecords.UNKNOWN;
        }
    }
}
