package io.ferrite.broker.logthread;

import io.ferrite.log.PartitionLog;

/**
 * The messages of the log threads' failures and refusals, built here rather than in the produce path's methods
 * that report them: javac's inline string concatenation (the build's {@code -XDstringConcat=inline}, issue 17)
 * turns each concatenation into a StringBuilder chain, which would grow those methods past the JIT's inlining
 * limits. Every method here runs only on a failure or a refusal.
 */
final class LogThreadMessages
{
    private LogThreadMessages()
    {
    }

    /** {@code a + x + b}. */
    static String text(final String a, final Object x, final String b)
    {
        return a + x + b;
    }

    static String appendTo(final AppendCommand command)
    {
        return "an append to " + command.partition.log;
    }

    static String isrShrank(final PartitionLog log, final int inSync)
    {
        return "the ISR of " + log + " shrank below min.insync.replicas after the append (" + inSync + " in sync)";
    }

    static String fsyncFailed(final PartitionLog log, final long firstOffset, final long lastOffset)
    {
        return "fsync of " + log + " failed before it covered offsets " + firstOffset + ".." + lastOffset + ": " + log.fsyncFailure();
    }

    static String closedUnsynced(final PartitionLog log, final long firstOffset, final long lastOffset)
    {
        return "log " + log + " closed before an fsync covered offsets " + firstOffset + ".." + lastOffset;
    }

    static String followersLate(final PartitionLog log, final long lastOffset)
    {
        return "the followers of " + log + " did not reach offset " + lastOffset + " within the request's timeout";
    }

    static String follows(final PartitionLog log)
    {
        return "this node follows " + log;
    }

    static String returnedCommand(final int networkThread)
    {
        return "telling network thread " + networkThread + " of a returned command";
    }
}
