package io.ferrite.wire.record;

import io.ferrite.wire.Varints;
import org.agrona.DirectBuffer;

/**
 * Flyweight over one record of a v2 batch:
 * <pre>
 *   length: varint              bytes after this field
 *   attributes: int8            unused, 0
 *   timestampDelta: varlong     from the batch's base timestamp
 *   offsetDelta: varint         from the batch's base offset
 *   keyLength: varint           -1 for a null key
 *   key: byte[keyLength]
 *   valueLength: varint         -1 for a null value
 *   value: byte[valueLength]
 *   headerCount: varint
 *   headers: [keyLength: varint (not null), key, valueLength: varint (-1 null), value]
 * </pre>
 * {@link #wrap} checks the whole record against its declared length, as Kafka does, and records
 * where the key, value and headers are; headers are walked with {@link #nextHeader()}.
 */
public final class Record
{
    private DirectBuffer buffer;
    private int offset;
    private int end;
    private int pos;
    private long baseOffset;
    private long baseTimestamp;
    private long logAppendTime;
    private byte attributes;
    private long timestampDelta;
    private int offsetDelta;
    private int keyAt;
    private int keyLength;
    private int valueAt;
    private int valueLength;
    private int headerCount;
    private int headersAt;

    private int headerIndex;
    private int nextHeaderAt;
    private int headerKeyAt;
    private int headerKeyLength;
    private int headerValueAt;
    private int headerValueLength;

    /**
     * Checks and wraps the record at {@code offset}, reading nothing at or past {@code limit}.
     *
     * @param logAppendTime the batch's max timestamp when its timestamps are LogAppendTime, else
     *                      {@link RecordBatchDescriptor#NO_TIMESTAMP}
     * @return the offset after the record
     * @throws CorruptRecordException when the record does not hold together
     */
    public int wrap(
        final DirectBuffer buffer, final int offset, final int limit, final long baseOffset, final long baseTimestamp,
        final long logAppendTime)
    {
        this.buffer = buffer;
        this.offset = offset;
        this.baseOffset = baseOffset;
        this.baseTimestamp = baseTimestamp;
        this.logAppendTime = logAppendTime;
        pos = offset;
        final int bodyLength = varint(limit, "length");
        if (bodyLength < 0 || bodyLength > limit - pos)
        {
            throw CorruptRecordException.of("Invalid record size: expected to read ", bodyLength,
                " bytes in record payload, but the buffer has only ", limit - pos, " remaining bytes");
        }
        final int bodyStart = pos;
        final int bodyEnd = pos + bodyLength;
        if (pos >= bodyEnd)
        {
            throw new CorruptRecordException("Invalid record size: empty record body");
        }
        attributes = buffer.getByte(pos++);
        timestampDelta = varlong(bodyEnd);
        offsetDelta = varint(bodyEnd, "offsetDelta");
        keyLength = varint(bodyEnd, "keyLength");
        keyAt = pos;
        pos = skip(keyAt, keyLength, bodyEnd, true, "key");
        valueLength = varint(bodyEnd, "valueLength");
        valueAt = pos;
        pos = skip(valueAt, valueLength, bodyEnd, true, "value");
        headerCount = varint(bodyEnd, "headerCount");
        if (headerCount < 0)
        {
            throw CorruptRecordException.of("Found invalid number of record headers ", headerCount, "");
        }
        headersAt = pos;
        for (int i = 0; i < headerCount; i++)
        {
            final int k = varint(bodyEnd, "headerKeyLength");
            pos = skip(pos, k, bodyEnd, false, "header key");
            final int v = varint(bodyEnd, "headerValueLength");
            pos = skip(pos, v, bodyEnd, true, "header value");
        }
        if (pos != bodyEnd)
        {
            throw CorruptRecordException.of("Invalid record size: expected to read ", bodyLength,
                " bytes in record payload, but instead read ", pos - bodyStart, "");
        }
        this.end = bodyEnd;
        headerIndex = 0;
        nextHeaderAt = headersAt;
        return bodyEnd;
    }

    /** A zig-zag varint (at most five bytes) at {@link #pos}, advancing it, never reading at or past {@code limit}. */
    private int varint(final int limit, final String field)
    {
        int p = pos;
        if (p < limit)
        {
            // most record fields are one byte: deltas, small lengths, no headers
            final int b = buffer.getByte(p);
            if ((b & 0x80) == 0)
            {
                pos = p + 1;
                return (b >>> 1) ^ -(b & 1);
            }
        }
        int raw = 0;
        for (int shift = 0; ; shift += 7)
        {
            if (p >= limit)
            {
                throw CorruptRecordException.of("Invalid record: truncated ", field, "");
            }
            final int b = buffer.getByte(p++);
            raw |= (b & 0x7F) << shift;
            if ((b & 0x80) == 0)
            {
                pos = p;
                return (raw >>> 1) ^ -(raw & 1);
            }
            if (shift == 28)
            {
                throw CorruptRecordException.of("Invalid record: ", field, " varint longer than 5 bytes");
            }
        }
    }

    /** A zig-zag varlong (at most ten bytes) at {@link #pos}, advancing it. */
    private long varlong(final int limit)
    {
        int p = pos;
        if (p < limit)
        {
            final int b = buffer.getByte(p);
            if ((b & 0x80) == 0)
            {
                pos = p + 1;
                return (b >>> 1) ^ -(b & 1);
            }
        }
        long raw = 0;
        for (int shift = 0; ; shift += 7)
        {
            if (p >= limit)
            {
                throw new CorruptRecordException("Invalid record: truncated timestampDelta");
            }
            final long b = buffer.getByte(p++);
            raw |= (b & 0x7F) << shift;
            if ((b & 0x80) == 0)
            {
                pos = p;
                return (raw >>> 1) ^ -(raw & 1);
            }
            if (shift == 63)
            {
                throw new CorruptRecordException("Invalid record: timestampDelta varlong longer than 10 bytes");
            }
        }
    }

    private static int skip(final int at, final int length, final int end, final boolean nullable, final String what)
    {
        if (length < 0)
        {
            if (length == -1 && nullable)
            {
                return at;
            }
            throw invalidSize(what, length, end - at);
        }
        if (length > end - at)
        {
            throw invalidSize(what, length, end - at);
        }
        return at + length;
    }

    public DirectBuffer buffer()
    {
        return buffer;
    }

    /** Where the record starts (its length field). */
    public int encodedOffset()
    {
        return offset;
    }

    public int sizeInBytes()
    {
        return end - offset;
    }

    public byte attributes()
    {
        return attributes;
    }

    public long timestampDelta()
    {
        return timestampDelta;
    }

    public int offsetDelta()
    {
        return offsetDelta;
    }

    public long offset()
    {
        return baseOffset + offsetDelta;
    }

    /** The record's timestamp: the batch's LogAppendTime when it has one, else base + delta. */
    public long timestamp()
    {
        return logAppendTime != RecordBatchDescriptor.NO_TIMESTAMP ? logAppendTime : baseTimestamp + timestampDelta;
    }

    public int keyLength()
    {
        return keyLength;
    }

    public int keyOffset()
    {
        return keyAt;
    }

    public boolean hasKey()
    {
        return keyLength >= 0;
    }

    public int valueLength()
    {
        return valueLength;
    }

    public int valueOffset()
    {
        return valueAt;
    }

    public boolean hasValue()
    {
        return valueLength >= 0;
    }

    public int headerCount()
    {
        return headerCount;
    }

    /** Moves to the next header (from the first after each {@link #wrap}); false when there is none. */
    public boolean nextHeader()
    {
        if (headerIndex >= headerCount)
        {
            return false;
        }
        // checked by wrap, so only decoded here
        long v = Varints.readVarint(buffer, nextHeaderAt, end, "headerKeyLength");
        headerKeyLength = Varints.value(v);
        headerKeyAt = nextHeaderAt + Varints.size(v);
        v = Varints.readVarint(buffer, headerKeyAt + headerKeyLength, end, "headerValueLength");
        headerValueLength = Varints.value(v);
        headerValueAt = headerKeyAt + headerKeyLength + Varints.size(v);
        nextHeaderAt = headerValueAt + Math.max(headerValueLength, 0);
        headerIndex++;
        return true;
    }

    public int headerKeyOffset()
    {
        return headerKeyAt;
    }

    public int headerKeyLength()
    {
        return headerKeyLength;
    }

    public int headerValueOffset()
    {
        return headerValueAt;
    }

    /** -1 for a null header value. */
    public int headerValueLength()
    {
        return headerValueLength;
    }

    private static CorruptRecordException invalidSize(final String what, final int length, final int remaining)
    {
        return new CorruptRecordException(length < 0 ? "Invalid negative " + what + " size " + length
            : "Invalid " + what + " size " + length + ": only " + remaining + " bytes remain");
    }
}
