package io.ferrite.client;

import org.agrona.DirectBuffer;

/**
 * The checks {@link Producer#send} makes before it touches anything: every length is -1 (null) or 0 and up, and every
 * range lies inside its buffer, so no record can be refused half-way through its batch. A header key cannot be null:
 * {@link OutgoingHeaders#add} refuses it as kafka-clients' {@code RecordHeader} does.
 */
final class RecordChecks
{
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
}
