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

    static void all(final Step first, final Step second, final Step third) throws IOException
    {
        Exception failure = run(first, null);
        failure = run(second, failure);
        failure = run(third, failure);
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
     * Maps a segment's indexes before its files are deleted or its directory renamed, so that a
     * reader that found it before searches their entries, not a file made again by the path or none
     * (indexes are mapped on first use). Best effort: a map refused (vm.max_map_count) leaves that
     * reader to fail as it would have, and the deletion goes on.
     */
    static void mapIndexesBeforeDeletion(final Segment segment)
    {
        try
        {
            segment.offsetIndex.mapBeforeDeletion();
            segment.timeIndex.mapBeforeDeletion();
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
