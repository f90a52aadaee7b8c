package io.ferrite.client;

import org.agrona.DirectBuffer;

/**
 * The checks {@link Producer#send} makes before it touches anything: every length is -1 (null) or 0 and up, and every
 * range lies inside its buffer, so no record can be refused half-way through its batch. A header key cannot be null:
 * {@link OutgoingHeaders#add} refuses it as kafka-clients' {@code RecordHeader} does.
 */
final class RecordChecks
{
    /** kafka-clients' {@code DefaultRecord.MAX_RECORD_OVERHEAD}: a record's length, attributes, deltas and header count. */
    private static final int MAX_RECORD_OVERHEAD = 21;

    private RecordChecks()
    {
    }

    /** @throws IllegalArgumentException for a length below -1 or a range outside its buffer */
    static void check(
        final DirectBuffer key, final int keyOffset, final int keyLength,
        final DirectBuffer value, final int valueOffset, final int valueLength,
        final OutgoingHeaders headers)
    {
        field("key", key, keyOffset, keyLength);
        field("value", value, valueOffset, valueLength);
        if (headers != null)
        {
            headers.check();
        }
    }

    /** @throws IllegalArgumentException for a length below -1 or a range outside its buffer */
    static void field(final String what, final DirectBuffer buffer, final int offset, final int length)
    {
        if (length < -1)
        {
            throw new IllegalArgumentException("the " + what + "'s length is " + length + ": -1 (null) or 0 and up");
        }
        if (length > 0 && (buffer == null || offset < 0 || offset > buffer.capacity() - length))
        {
            throw new IllegalArgumentException("the " + what + "'s " + length + " bytes at " + offset +
                " lie outside its buffer (" + (buffer == null ? "null" : buffer.capacity() + " bytes") + ")");
        }
    }

    /**
     * The bytes a batch holding only this record takes at most, as kafka-clients 4.4 reckons it before it accepts a
     * record ({@code AbstractRecords.estimateSizeInBytesUpperBound}: the v2 batch header, a record's 21 bytes of
     * overhead at most, then the key, value and headers with their varint lengths), so {@link Producer#send}
     * refuses a record over {@code max.request.size} or {@code buffer.memory} by that count as kafka-clients refuses it.
     */
    static int sizeUpperBound(final int keyLength, final int valueLength, final OutgoingHeaders headers)
    {
        return ProducerBatch.BATCH_OVERHEAD + MAX_RECORD_OVERHEAD + OutgoingHeaders.lengthPrefixed(keyLength) +
            OutgoingHeaders.lengthPrefixed(valueLength) + (headers == null ? 1 : headers.encodedLength());
    }
}
