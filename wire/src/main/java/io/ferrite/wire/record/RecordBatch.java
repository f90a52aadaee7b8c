package io.ferrite.wire.record;

import io.ferrite.wire.compress.CompressionType;
import org.agrona.DirectBuffer;

import static io.ferrite.wire.record.RecordBatchDescriptor.*;
import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * Flyweight over one RecordBatch v2 in a buffer: reads every header field in place and checks the
 * batch's frame and CRC. Records are read with a {@link RecordReader}. Reusable through
 * {@link #wrap}; allocates nothing.
 */
public final class RecordBatch
{
    /** {@link #check} results: 0 or one of these negative codes. */
    public static final int OK = 0;
    public static final int TRUNCATED = -1;
    public static final int INVALID_LENGTH = -2;
    public static final int UNSUPPORTED_MAGIC = -3;
    public static final int CRC_MISMATCH = -4;
    public static final int INVALID_COMPRESSION = -5;
    public static final int INVALID_RECORD_COUNT = -6;

    private final Crc32c crc32c = new Crc32c();
    private DirectBuffer buffer;
    private int offset;

    public RecordBatch wrap(final DirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /**
     * Checks the batch against the {@code available} bytes at its offset: the header fits, the length
     * covers at least the header and no more than what is there, magic 2, a known compression, a
     * non-negative record count, and the CRC32C.
     *
     * @return {@link #OK} or a negative code naming the first problem
     */
    public int check(final int available)
    {
        final int frame = checkFrame(available);
        if (frame != OK)
        {
            return frame;
        }
        return isCrcValid() ? OK : CRC_MISMATCH;
    }

    /**
     * {@link #check} without the CRC: for a batch this process has just built itself (the CRC it
     * wrote is the CRC of what it wrote), where a second pass over the bytes would only cost time.
     *
     * @return {@link #OK} or a negative code naming the first problem
     */
    public int checkFrame(final int available)
    {
        if (available < HEADER_LENGTH)
        {
            return TRUNCATED;
        }
        final int batchLength = batchLength();
        if (batchLength < HEADER_LENGTH - LOG_OVERHEAD)
        {
            return INVALID_LENGTH;
        }
        if (batchLength > available - LOG_OVERHEAD)
        {
            return TRUNCATED;
        }
        if (magic() != MAGIC_V2)
        {
            return UNSUPPORTED_MAGIC;
        }
        if (CompressionType.forId(attributes() & COMPRESSION_MASK) == null)
        {
            return INVALID_COMPRESSION;
        }
        if (recordCount() < 0)
        {
            return INVALID_RECORD_COUNT;
        }
        return OK;
    }

    /** The CRC32C of the bytes the CRC field covers, from the attributes to the end of the batch. */
    public int computeCrc()
    {
        return crc32c.compute(buffer, offset + ATTRIBUTES_OFFSET, sizeInBytes() - ATTRIBUTES_OFFSET);
    }

    public boolean isCrcValid()
    {
        return computeCrc() == crc();
    }

    public DirectBuffer buffer()
    {
        return buffer;
    }

    public int offset()
    {
        return offset;
    }

    /** The whole batch: the length field plus the 12 bytes before and including it. */
    public int sizeInBytes()
    {
        return LOG_OVERHEAD + batchLength();
    }

    public long baseOffset()
    {
        return buffer.getLong(offset + BASE_OFFSET_OFFSET, BIG_ENDIAN);
    }

    public int batchLength()
    {
        return buffer.getInt(offset + BATCH_LENGTH_OFFSET, BIG_ENDIAN);
    }

    public int partitionLeaderEpoch()
    {
        return buffer.getInt(offset + PARTITION_LEADER_EPOCH_OFFSET, BIG_ENDIAN);
    }

    public byte magic()
    {
        return buffer.getByte(offset + MAGIC_OFFSET);
    }

    /** The stored CRC (an unsigned 32-bit value, as its int bits). */
    public int crc()
    {
        return buffer.getInt(offset + CRC_OFFSET, BIG_ENDIAN);
    }

    public short attributes()
    {
        return buffer.getShort(offset + ATTRIBUTES_OFFSET, BIG_ENDIAN);
    }

    /** The compression of the records; null for the undefined ids 5 to 7 ({@link #check} refuses those). */
    public CompressionType compression()
    {
        return CompressionType.forId(attributes() & COMPRESSION_MASK);
    }

    public TimestampType timestampType()
    {
        return (attributes() & TIMESTAMP_TYPE_MASK) != 0 ? TimestampType.LOG_APPEND_TIME : TimestampType.CREATE_TIME;
    }

    public boolean isTransactional()
    {
        return (attributes() & TRANSACTIONAL_MASK) != 0;
    }

    public boolean isControl()
    {
        return (attributes() & CONTROL_MASK) != 0;
    }

    public boolean hasDeleteHorizon()
    {
        return (attributes() & DELETE_HORIZON_MASK) != 0;
    }

    public int lastOffsetDelta()
    {
        return buffer.getInt(offset + LAST_OFFSET_DELTA_OFFSET, BIG_ENDIAN);
    }

    public long lastOffset()
    {
        return baseOffset() + lastOffsetDelta();
    }

    public long baseTimestamp()
    {
        return buffer.getLong(offset + BASE_TIMESTAMP_OFFSET, BIG_ENDIAN);
    }

    public long maxTimestamp()
    {
        return buffer.getLong(offset + MAX_TIMESTAMP_OFFSET, BIG_ENDIAN);
    }

    public long producerId()
    {
        return buffer.getLong(offset + PRODUCER_ID_OFFSET, BIG_ENDIAN);
    }

    public short producerEpoch()
    {
        return buffer.getShort(offset + PRODUCER_EPOCH_OFFSET, BIG_ENDIAN);
    }

    public int baseSequence()
    {
        return buffer.getInt(offset + BASE_SEQUENCE_OFFSET, BIG_ENDIAN);
    }

    /** The sequence of the last record, wrapping past Integer.MAX_VALUE as Kafka's does. */
    public int lastSequence()
    {
        final int base = baseSequence();
        if (base == NO_SEQUENCE)
        {
            return NO_SEQUENCE;
        }
        final long last = (long)base + lastOffsetDelta();
        return last > Integer.MAX_VALUE ? (int)(last - Integer.MAX_VALUE - 1) : (int)last;
    }

    public int recordCount()
    {
        return buffer.getInt(offset + RECORD_COUNT_OFFSET, BIG_ENDIAN);
    }

    /** Offset of the (possibly compressed) records section in {@link #buffer()}. */
    public int recordsOffset()
    {
        return offset + RECORDS_OFFSET;
    }

    public int recordsLength()
    {
        return sizeInBytes() - RECORDS_OFFSET;
    }
}
