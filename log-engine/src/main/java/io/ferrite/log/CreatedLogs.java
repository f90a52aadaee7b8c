package io.ferrite.log;

import java.io.IOException;

/**
 * What a {@link LogManager#createLogs(java.util.List, Runnable)} batch did, entry by entry (in the batch's order): the
 * entry's logs, published, or the failure that left none of them.
 */
public final class CreatedLogs
{
    private final PartitionLog[][] made;
    private final Exception[] failures;

    CreatedLogs(final PartitionLog[][] made, final Exception[] failures)
    {
        this.made = made;
        this.failures = failures;
    }

    /** The logs entry {@code i} made, or null when it failed. */
    public PartitionLog[] made(final int i)
    {
        return failures[i] == null ? made[i] : null;
    }

    /** Why entry {@code i} made nothing, or null when it made its logs. */
    public Exception failure(final int i)
    {
        return failures[i];
    }

    /** The entries. */
    public int size()
    {
        return made.length;
    }

    /** Entry {@code i}'s logs; its failure thrown as it came (an IOException or an unchecked one). */
    PartitionLog[] madeOrThrow(final int i) throws IOException
    {
        final Exception failure = failures[i];
        if (failure instanceof IOException io)
        {
            throw io;
        }
        if (failure instanceof RuntimeException runtime)
        {
            throw runtime;
        }
        if (failure != null) // a checked exception of another kind: not to be taken for a success
        {
            throw new IOException(failure);
        }
        return made[i];
    }
}
