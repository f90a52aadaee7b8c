package io.ferrite.log;

import java.io.IOException;

/**
 * Runs every step of a close even when an earlier one fails, then throws the first failure (the
 * later ones suppressed on it). Why: a segment's files are closed one after the other, and a step
 * that throws — an index trimmed through the path of a directory a deletion removed — must not
 * leave the next file mapped and open (its blocks then stay until a GC).
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
