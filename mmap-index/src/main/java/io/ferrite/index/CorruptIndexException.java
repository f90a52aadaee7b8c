package io.ferrite.index;

/** An index file that fails its sanity check; the log rebuilds it from the segment. */
public final class CorruptIndexException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    public CorruptIndexException(final String message)
    {
        super(message);
    }
}
