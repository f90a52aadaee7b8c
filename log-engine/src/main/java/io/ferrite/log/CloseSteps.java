package io.ferrite.log;

import java.io.IOException;

/**
 * The steps of closing and deleting a segment. {@link #all} runs every step of a close even when an
 * earlier one fails, then throws the first failure (the later ones suppressed on it). Why: a
 * segment's files are closed one after the other, and a step that throws — an index trimmed through
 * the path of a directory a deletion removed — must not leave the next file mapped and open (its
 * blocks then stay until a GC).
 */
final class CloseSteps
{
    private CloseSteps()
    {
    }

    /** One step of a close. */
    @FunctionalInterface
    interface Step
    {
        void run() throws IOException;
    }

    static void all(final Step... steps) throws IOException
    {
        Exception failure = null;
        for (final Step step : steps)
        {
            failure = run(step, failure);
        }
        if (failure instanceof IOException io)
        {
            throw io;
        }
        if (failure != null)
        {
            throw (RuntimeException)failure;
        }
    }

    /**
     * Readies a segment's indexes for the deletion of their files or the rename of their directory
     * ({@code MappedIndex.forDeletion}): mapped now, so that a reader that found the segment before
     * searches their entries, and never reached through their paths again, which may name another
     * partition's files by the time the segment is closed. Best effort on the map: one refused
     * (vm.max_map_count) leaves that reader to fail as it would have, and the deletion goes on.
     */
    static void indexesForDeletion(final Segment segment)
    {
        segment.txnIndex.forDeletion(); // its readers open nothing by its path again
        try
        {
            segment.offsetIndex.forDeletion();
        }
        catch (final java.io.UncheckedIOException unmappable)
        {
            // see above
        }
        try
        {
            segment.timeIndex.forDeletion();
        }
        catch (final java.io.UncheckedIOException unmappable)
        {
            // see above
        }
    }

    private static Exception run(final Step step, final Exception failure)
    {
        try
        {
            step.run();
            return failure;
        }
        catch (final IOException | RuntimeException ex)
        {
            if (failure == null)
            {
                return ex;
            }
            failure.addSuppressed(ex);
            return failure;
        }
    }
}
