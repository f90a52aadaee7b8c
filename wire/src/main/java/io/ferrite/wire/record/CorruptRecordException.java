package io.ferrite.wire.record;

/**
 * A record batch or record whose bytes do not hold together: a size that disagrees with its
 * bytes, a bad CRC, a negative length, compressed data that does not decompress. The broker
 * answers CORRUPT_MESSAGE (or INVALID_RECORD) for the partition that carried it. Stackless.
 */
public final class CorruptRecordException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    public CorruptRecordException(final String message)
    {
        super(message, null, false, false);
    }

    public CorruptRecordException(final String message, final Throwable cause)
    {
        super(message, cause, false, false);
    }
}
