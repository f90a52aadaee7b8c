package io.ferrite.broker.admin;

/**
 * Tests' accessor of {@link PendingCreations}' test hook (package-private there, so no embedder reaches it): while
 * held, the agent makes no chunk between its commands; a command that needs a topic, and the backlog's bound, still
 * make files. Also the backlog's bound and the journal's rewrite size, which tests set lower.
 */
public final class CreationsHold
{
    private CreationsHold()
    {
    }

    public static void hold(final PendingCreations creations, final boolean hold)
    {
        creations.hold(hold);
    }

    /**
     * On the agent's thread (through {@code AdminAgent.execute}): one chunk made while held — a large topic's next slice,
     * or unpublished topics; the number of topics made (at least 1).
     */
    public static int chunk(final PendingCreations creations)
    {
        return creations.makeOneChunk();
    }

    /** The partitions a chunk makes at most: a topic of more is published at once and made in slices of this many. */
    public static int chunkPartitions()
    {
        return PendingCreations.CHUNK_PARTITIONS;
    }

    /** The backlog's bound in estimated work (10 s unless a test sets another). */
    public static void backlog(final PendingCreations creations, final java.time.Duration work)
    {
        creations.cost().backlogNs(work.toNanos());
    }

    /** A fixed estimated cost of a partition's files (null: measured again), so a bound a test checks does not move. */
    public static void estimate(final PendingCreations creations, final java.time.Duration perPartition)
    {
        creations.cost().estimate(perPartition == null ? 0 : perPartition.toNanos());
    }

    /** The journal size from which it is rewritten while topics are pending (1 MiB unless a test sets another). */
    public static void rewriteFrom(final PendingCreations creations, final long bytes)
    {
        creations.rewriteBytes(bytes);
    }

    /** The journal's rewrites so far (read on the agent's thread, or while the agent is idle). */
    public static int rewrites(final PendingCreations creations)
    {
        return creations.rewrites();
    }

    /** The JVM system property that sets the rewrite size in a server started in a child JVM. */
    public static String rewriteProperty()
    {
        return JournalRewrites.REWRITE_BYTES_PROPERTY;
    }
}
