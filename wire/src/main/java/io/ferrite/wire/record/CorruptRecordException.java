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

    /**
     * {@code before + value + after}: built here, out of the hot methods that throw it (they stay small
     * enough to inline; issue 17, javac's inline string concatenation).
     */
    public static CorruptRecordException of(final String before, final long value, final String after)
    {
        return new CorruptRecordException(before + value + after);
    }

    /** {@code before + value + middle + second + after}, as {@link #of(String, long, String)}. */
    public static CorruptRecordException of(
        final String before, final long value, final String middle, final long second, final String after)
    {
        return new CorruptRecordException(before + value + middle + second + after);
    }

    /** {@code before + text + after}, as {@link #of(String, long, String)}. */
    public static CorruptRecordException of(final String before, final String text, final String after)
    {
        return new CorruptRecordException(before + text + after);
    }

    /** {@code codec + ": " + cause.getMessage()} with that cause, as {@link #of(String, long, String)}. */
    public static CorruptRecordException of(final String codec, final Exception cause)
    {
        return new CorruptRecordException(codec + ": " + cause.getMessage(), cause);
    }
}
