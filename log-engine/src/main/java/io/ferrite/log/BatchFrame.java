package io.ferrite.log;

import org.agrona.DirectBuffer;

import static io.ferrite.wire.record.RecordBatchDescriptor.BATCH_LENGTH_OFFSET;
import static io.ferrite.wire.record.RecordBatchDescriptor.HEADER_LENGTH;
import static io.ferrite.wire.record.RecordBatchDescriptor.LOG_OVERHEAD;
import static io.ferrite.wire.record.RecordBatchDescriptor.MAGIC_OFFSET;
import static io.ferrite.wire.record.RecordBatchDescriptor.MAGIC_V2;
import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * The one check every walk over a segment's batches makes before it follows a batch length: that
 * a whole v2 frame is there. Recovery scans only the segments after the recovery point, so an
 * older segment may hold a frame cut short or a length damaged while the log was closed; a walk
 * that followed such a length would read past the mapping (an exception per read for ever, or,
 * with Agrona's bounds checks off, unmapped memory) or loop on a length of zero. A walk that
 * meets a bad frame stops there, as Kafka's {@code FileLogInputStream} stops at a batch that does
 * not fit in the file. The CRC is not part of it: that would read every byte of every batch on
 * the fetch path (see the README's Recovery section for what is checked where).
 */
final class BatchFrame
{
    private BatchFrame()
    {
    }

    /**
     * Where the frame at {@code position} ends, when a whole one lies below {@code limit}: a v2
     * header, and a length that covers the header and stays below the limit; -1 otherwise.
     */
    static int end(final DirectBuffer view, final int position, final int limit)
    {
        if (position < 0 || position > limit - HEADER_LENGTH || view.getByte(position + MAGIC_OFFSET) != MAGIC_V2)
        {
            return -1;
        }
        // a length near Integer.MAX_VALUE overflows to a negative size and fails the first test
        final int size = LOG_OVERHEAD + view.getInt(position + BATCH_LENGTH_OFFSET, BIG_ENDIAN);
        return size >= HEADER_LENGTH && size <= limit - position ? position + size : -1;
    }
}
