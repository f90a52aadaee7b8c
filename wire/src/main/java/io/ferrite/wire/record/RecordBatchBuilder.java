package io.ferrite.wire.record;

import io.ferrite.wire.Varints;
import io.ferrite.wire.compress.Codecs;
import io.ferrite.wire.compress.CompressionType;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import static io.ferrite.wire.record.RecordBatchDescriptor.*;
import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * Writes one RecordBatch v2: set the header fields, append records, {@link #build()}. Offsets
 * deltas count from 0 unless given; the base timestamp is the first record's, the max timestamp the
 * largest (or the LogAppendTime), as kafka-clients' {@code MemoryRecordsBuilder} does. Uncompressed
 * records go straight to the output; compressed ones are gathered in a reusable off-heap buffer and
 * compressed by {@link #build()}. One per thread; allocation-free when warm.
 * <pre>
 *   int size = builder.wrap(buffer, offset).compression(LZ4).producer(pid, epoch, seq)
 *       .appendRecord(ts, key, 0, key.capacity(), value, 0, value.capacity())
 *       .build();
 * </pre>
 */
public final class RecordBatchBuilder
{
    /** The length varint of a record under construction takes at most five bytes; shrunk on {@link #endRecord()}. */
    private static final int MAX_LENGTH_VARINT = 5;

    private final Codecs codecs;
    private final Crc32c crc32c = new Crc32c();
    private final ExpandableDirectByteBuffer uncompressed = new ExpandableDirectByteBuffer(0);
    private final UnsafeBuffer marker = new UnsafeBuffer(new byte[ControlRecords.KEY_LENGTH + ControlRecords.MARKER_VALUE_LENGTH]);

    private MutableDirectBuffer out;
    private int offset;

    private long baseOffset;
    private int partitionLeaderEpoch;
    private CompressionType compression;
    private boolean logAppendTime;
    private long logAppendTimestamp;
    private boolean transactional;
    private boolean control;
    private boolean deleteHorizon;
    private long producerId;
    private short producerEpoch;
    private int baseSequence;
    private boolean lastOffsetDeltaOverridden;
    private int lastOffsetDeltaOverride;

    private MutableDirectBuffer records;
    private int recordsStart;
    private int position;
    private int count;
    private int nextOffsetDelta;
    private int lastOffsetDelta;
    private long baseTimestamp;
    private long maxTimestamp;

    private int recordStart;
    private int headerCountAt;
    private int headerCount;
    private boolean inRecord;
    private int countBefore;
    private int lastOffsetDeltaBefore;
    private int nextOffsetDeltaBefore;
    private long maxTimestampBefore;

    public RecordBatchBuilder()
    {
        this(new Codecs());
    }

    public RecordBatchBuilder(final Codecs codecs)
    {
        this.codecs = codecs;
    }

    /** Starts a batch at {@code offset} of {@code out} with every header field at Kafka's default. */
    public RecordBatchBuilder wrap(final MutableDirectBuffer out, final int offset)
    {
        this.out = out;
        this.offset = offset;
        baseOffset = 0;
        partitionLeaderEpoch = NO_PARTITION_LEADER_EPOCH;
        compression = CompressionType.NONE;
        logAppendTime = false;
        transactional = false;
        control = false;
        deleteHorizon = false;
        producerId = NO_PRODUCER_ID;
        producerEpoch = NO_PRODUCER_EPOCH;
        baseSequence = NO_SEQUENCE;
        lastOffsetDeltaOverridden = false;
        count = 0;
        nextOffsetDelta = 0;
        lastOffsetDelta = -1;
        baseTimestamp = NO_TIMESTAMP;
        maxTimestamp = NO_TIMESTAMP;
        inRecord = false;
        startRecords();
        return this;
    }

    private void startRecords()
    {
        if (compression == CompressionType.NONE)
        {
            records = out;
            recordsStart = offset + RECORDS_OFFSET;
        }
        else
        {
            records = uncompressed;
            recordsStart = 0;
        }
        position = recordsStart;
    }

    private void requireNoRecords()
    {
        if (count > 0 || inRecord)
        {
            throw new IllegalStateException("set the batch's compression before appending records");
        }
    }

    public RecordBatchBuilder baseOffset(final long baseOffset)
    {
        this.baseOffset = baseOffset;
        return this;
    }

    public RecordBatchBuilder partitionLeaderEpoch(final int epoch)
    {
        this.partitionLeaderEpoch = epoch;
        return this;
    }

    public RecordBatchBuilder compression(final CompressionType compression)
    {
        requireNoRecords();
        this.compression = compression;
        startRecords();
        return this;
    }

    /** Marks the batch's timestamps as LogAppendTime {@code timestamp} (its max timestamp). */
    public RecordBatchBuilder logAppendTime(final long timestamp)
    {
        this.logAppendTime = true;
        this.logAppendTimestamp = timestamp;
        return this;
    }

    public RecordBatchBuilder producer(final long producerId, final short producerEpoch, final int baseSequence)
    {
        this.producerId = producerId;
        this.producerEpoch = producerEpoch;
        this.baseSequence = baseSequence;
        return this;
    }

    public RecordBatchBuilder transactional(final boolean transactional)
    {
        this.transactional = transactional;
        return this;
    }

    public RecordBatchBuilder control(final boolean control)
    {
        this.control = control;
        return this;
    }

    /** Sets the delete-horizon bit: the base timestamp is then the horizon, not the first record's. */
    public RecordBatchBuilder deleteHorizonMs(final long horizon)
    {
        this.deleteHorizon = true;
        this.baseTimestamp = horizon;
        return this;
    }

    /**
     * Writes {@code lastOffsetDelta} as the batch's last offset delta, whatever records it holds
     * (Kafka's {@code MemoryRecordsBuilder.overrideLastOffset}): a batch the cleaner rebuilt keeps the
     * original's last offset, so the producer state a reader rebuilds from it is unchanged.
     */
    public RecordBatchBuilder overrideLastOffsetDelta(final int lastOffsetDelta)
    {
        this.lastOffsetDeltaOverridden = true;
        this.lastOffsetDeltaOverride = lastOffsetDelta;
        return this;
    }

    public int recordCount()
    {
        return count;
    }

    /** Appends a record without headers; a -1 length means a null key or value. */
    public RecordBatchBuilder appendRecord(
        final long timestamp,
        final DirectBuffer key, final int keyOffset, final int keyLength,
        final DirectBuffer value, final int valueOffset, final int valueLength)
    {
        return appendRecord(timestamp, nextOffsetDelta, key, keyOffset, keyLength, value, valueOffset, valueLength);
    }

    /** Appends a record without headers at an explicit offset delta (increasing). */
    public RecordBatchBuilder appendRecord(
        final long timestamp, final int offsetDelta,
        final DirectBuffer key, final int keyOffset, final int keyLength,
        final DirectBuffer value, final int valueOffset, final int valueLength)
    {
        // the size is known up front: the length varint goes in place, no move
        final long timestampDelta = timestampDelta(timestamp);
        final int bodyLength = 1 + Varints.varlongSize(timestampDelta) + Varints.varintSize(offsetDelta) +
            Varints.varintSize(keyLength) + Math.max(keyLength, 0) +
            Varints.varintSize(valueLength) + Math.max(valueLength, 0) + 1;
        records.checkLimit(position + MAX_LENGTH_VARINT + bodyLength);
        int p = position;
        p += Varints.putVarint(records, p, bodyLength);
        p = body(p, timestampDelta, offsetDelta, key, keyOffset, keyLength, value, valueOffset, valueLength);
        records.putByte(p++, (byte)0); // no headers
        position = p;
        recorded(timestamp, offsetDelta);
        return this;
    }

    /** Convenience for tests and control paths (allocation-free only for null or pre-wrapped arrays). */
    public RecordBatchBuilder appendRecord(final long timestamp, final byte[] key, final byte[] value)
    {
        beginRecord(timestamp, key, value);
        return endRecord();
    }

    /** Starts a record that will carry headers: add them with {@link #header}, finish with {@link #endRecord()}. */
    public RecordBatchBuilder beginRecord(
        final long timestamp, final int offsetDelta,
        final DirectBuffer key, final int keyOffset, final int keyLength,
        final DirectBuffer value, final int valueOffset, final int valueLength)
    {
        if (inRecord)
        {
            throw new IllegalStateException("endRecord() the record before starting another");
        }
        final long timestampDelta = timestampDelta(timestamp);
        records.checkLimit(position + MAX_LENGTH_VARINT + 1 + 10 + 5 + 5 + Math.max(keyLength, 0) + 5 +
            Math.max(valueLength, 0) + 5);
        recordStart = position;
        int p = position + MAX_LENGTH_VARINT;
        p = body(p, timestampDelta, offsetDelta, key, keyOffset, keyLength, value, valueOffset, valueLength);
        headerCountAt = p;
        headerCount = 0;
        position = p + MAX_LENGTH_VARINT; // room for the header count varint, also shrunk at the end
        inRecord = true;
        countBefore = count;
        lastOffsetDeltaBefore = lastOffsetDelta;
        nextOffsetDeltaBefore = nextOffsetDelta;
        maxTimestampBefore = maxTimestamp;
        recorded(timestamp, offsetDelta);
        return this;
    }

    public RecordBatchBuilder beginRecord(final long timestamp, final byte[] key, final byte[] value)
    {
        final DirectBuffer k = key == null ? null : new UnsafeBuffer(key);
        final DirectBuffer v = value == null ? null : new UnsafeBuffer(value);
        return beginRecord(timestamp, nextOffsetDelta, k, 0, key == null ? -1 : key.length, v, 0,
            value == null ? -1 : value.length);
    }

    /** Adds a header to the record begun with {@link #beginRecord}; a -1 value length is a null value. */
    public RecordBatchBuilder header(
        final DirectBuffer key, final int keyOffset, final int keyLength,
        final DirectBuffer value, final int valueOffset, final int valueLength)
    {
        if (!inRecord)
        {
            throw new IllegalStateException("headers belong to a record begun with beginRecord()");
        }
        if (keyLength < 0)
        {
            throw new IllegalArgumentException("a header key cannot be null");
        }
        records.checkLimit(position + 10 + keyLength + Math.max(valueLength, 0));
        int p = position;
        p += Varints.putVarint(records, p, keyLength);
        records.putBytes(p, key, keyOffset, keyLength);
        p += keyLength;
        p += Varints.putVarint(records, p, valueLength);
        if (valueLength > 0)
        {
            records.putBytes(p, value, valueOffset, valueLength);
            p += valueLength;
        }
        position = p;
        headerCount++;
        return this;
    }

    public RecordBatchBuilder header(final String key, final byte[] value)
    {
        final byte[] k = key.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return header(new UnsafeBuffer(k), 0, k.length, value == null ? null : new UnsafeBuffer(value), 0,
            value == null ? -1 : value.length);
    }

    /** Finishes the record begun with {@link #beginRecord}: writes its header count and length. */
    public RecordBatchBuilder endRecord()
    {
        if (!inRecord)
        {
            throw new IllegalStateException("no record begun");
        }
        // close the gap reserved for the header count, then the one reserved for the length
        final int headersAt = headerCountAt + MAX_LENGTH_VARINT;
        final int headersLength = position - headersAt;
        final int countSize = Varints.varintSize(headerCount);
        Varints.putVarint(records, headerCountAt, headerCount);
        records.putBytes(headerCountAt + countSize, records, headersAt, headersLength);
        final int bodyStart = recordStart + MAX_LENGTH_VARINT;
        final int bodyLength = headerCountAt + countSize + headersLength - bodyStart;
        final int lengthSize = Varints.putVarint(records, recordStart, bodyLength);
        records.putBytes(recordStart + lengthSize, records, bodyStart, bodyLength);
        position = recordStart + lengthSize + bodyLength;
        inRecord = false;
        return this;
    }

    /**
     * Drops the record begun with {@link #beginRecord} and its headers: the batch is as it was before, so a header
     * that threw half-way (a null key, a range outside its buffer) leaves no half-written record behind.
     */
    public RecordBatchBuilder abortRecord()
    {
        if (!inRecord)
        {
            throw new IllegalStateException("no record begun");
        }
        position = recordStart;
        count = countBefore;
        lastOffsetDelta = lastOffsetDeltaBefore;
        nextOffsetDelta = nextOffsetDeltaBefore;
        maxTimestamp = maxTimestampBefore;
        inRecord = false;
        return this;
    }

    /** Appends a transaction marker (control batches): COMMIT or ABORT with the coordinator epoch. */
    public RecordBatchBuilder appendEndTxnMarker(final long timestamp, final boolean commit, final int coordinatorEpoch)
    {
        final UnsafeBuffer kv = marker;
        kv.putShort(0, ControlRecords.CURRENT_KEY_VERSION, BIG_ENDIAN);
        kv.putShort(2, commit ? ControlRecords.COMMIT : ControlRecords.ABORT, BIG_ENDIAN);
        kv.putShort(4, ControlRecords.CURRENT_MARKER_VERSION, BIG_ENDIAN);
        kv.putInt(6, coordinatorEpoch, BIG_ENDIAN);
        return appendRecord(timestamp, kv, 0, ControlRecords.KEY_LENGTH, kv, ControlRecords.KEY_LENGTH,
            ControlRecords.MARKER_VALUE_LENGTH);
    }

    private long timestampDelta(final long timestamp)
    {
        if (count == 0 && !inRecord && !deleteHorizon)
        {
            baseTimestamp = timestamp;
        }
        return timestamp - baseTimestamp;
    }

    private int body(
        final int at, final long timestampDelta, final int offsetDelta,
        final DirectBuffer key, final int keyOffset, final int keyLength,
        final DirectBuffer value, final int valueOffset, final int valueLength)
    {
        if (count > 0 && offsetDelta <= lastOffsetDelta)
        {
            throw notAbove(offsetDelta, lastOffsetDelta);
        }
        int p = at;
        records.putByte(p++, (byte)0); // attributes
        p += Varints.putVarlong(records, p, timestampDelta);
        p += Varints.putVarint(records, p, offsetDelta);
        p += Varints.putVarint(records, p, keyLength);
        if (keyLength > 0)
        {
            records.putBytes(p, key, keyOffset, keyLength);
            p += keyLength;
        }
        p += Varints.putVarint(records, p, valueLength);
        if (valueLength > 0)
        {
            records.putBytes(p, value, valueOffset, valueLength);
            p += valueLength;
        }
        return p;
    }

    private void recorded(final long timestamp, final int offsetDelta)
    {
        count++;
        lastOffsetDelta = offsetDelta;
        nextOffsetDelta = offsetDelta + 1;
        if (timestamp > maxTimestamp)
        {
            maxTimestamp = timestamp;
        }
    }

    /**
     * Writes the header (and compresses the records) and computes the CRC.
     *
     * @return the batch's size in bytes
     */
    public int build()
    {
        if (inRecord)
        {
            throw new IllegalStateException("endRecord() the last record before build()");
        }
        int recordsLength = position - recordsStart;
        if (compression != CompressionType.NONE)
        {
            recordsLength = codecs.codec(compression).compress(uncompressed, 0, recordsLength, out, offset + RECORDS_OFFSET);
        }
        final int size = RECORDS_OFFSET + recordsLength;
        out.checkLimit(offset + size);
        int attributes = compression.id;
        if (logAppendTime)
        {
            attributes |= TIMESTAMP_TYPE_MASK;
        }
        if (transactional)
        {
            attributes |= TRANSACTIONAL_MASK;
        }
        if (control)
        {
            attributes |= CONTROL_MASK;
        }
        if (deleteHorizon)
        {
            attributes |= DELETE_HORIZON_MASK;
        }
        out.putLong(offset + BASE_OFFSET_OFFSET, baseOffset, BIG_ENDIAN);
        out.putInt(offset + BATCH_LENGTH_OFFSET, size - LOG_OVERHEAD, BIG_ENDIAN);
        out.putInt(offset + PARTITION_LEADER_EPOCH_OFFSET, partitionLeaderEpoch, BIG_ENDIAN);
        out.putByte(offset + MAGIC_OFFSET, MAGIC_V2);
        out.putShort(offset + ATTRIBUTES_OFFSET, (short)attributes, BIG_ENDIAN);
        out.putInt(offset + LAST_OFFSET_DELTA_OFFSET,
            lastOffsetDeltaOverridden ? lastOffsetDeltaOverride : count == 0 ? -1 : lastOffsetDelta, BIG_ENDIAN);
        out.putLong(offset + BASE_TIMESTAMP_OFFSET, baseTimestamp, BIG_ENDIAN);
        out.putLong(offset + MAX_TIMESTAMP_OFFSET, logAppendTime ? logAppendTimestamp : maxTimestamp, BIG_ENDIAN);
        out.putLong(offset + PRODUCER_ID_OFFSET, producerId, BIG_ENDIAN);
        out.putShort(offset + PRODUCER_EPOCH_OFFSET, producerEpoch, BIG_ENDIAN);
        out.putInt(offset + BASE_SEQUENCE_OFFSET, baseSequence, BIG_ENDIAN);
        out.putInt(offset + RECORD_COUNT_OFFSET, count, BIG_ENDIAN);
        out.putInt(offset + CRC_OFFSET, crc32c.compute(out, offset + ATTRIBUTES_OFFSET, size - ATTRIBUTES_OFFSET), BIG_ENDIAN);
        return size;
    }

    private static IllegalArgumentException notAbove(final int offsetDelta, final int lastOffsetDelta)
    {
        return new IllegalArgumentException("offset delta " + offsetDelta + " is not above " + lastOffsetDelta);
    }
}
