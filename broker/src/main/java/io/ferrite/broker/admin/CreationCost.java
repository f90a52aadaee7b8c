package io.ferrite.broker.admin;

import java.util.concurrent.TimeUnit;

/**
 * What a partition's files are estimated to cost, and the bound on the backlog of unpublished topics it gives
 * ({@link PendingCreations#makeDownTo}): before a CreateTopics is journaled the agent makes the oldest unpublished topics
 * until they and the request's own unpublished ones' partitions are at most {@link #backlogBound} — what the estimated
 * cost of a partition says is {@link #BACKLOG_NS} (10 s) of work. The estimate is the slower of two moving averages: the
 * wall time the backlog takes to drain per partition ({@link DrainRate}: everything the agent does meanwhile included —
 * other commands, journal fsyncs, the CPU it does not get under load) and the time {@code TopicRegistry.create} took
 * per partition; before the first measurement both are {@value #ASSUMED_MS_PER_PARTITION} ms, the slowest create rate
 * measured on a loaded machine.
 *
 * <p>Why 10 s: that wait is spent inside the CreateTopics before its answer (and by every admin command queued behind
 * it), and Kafka 4.4's Admin gives up on a request after {@code request.timeout.ms} (30 s) and retries it — a retry of
 * a creation journaled meanwhile is answered TOPIC_ALREADY_EXISTS. The worst wait is the whole bound (a request larger
 * than it waits for every earlier topic), so 10 s lets the estimate be 3x off before a client times out; it also
 * bounds how long after its answer the newest topic is published (and a restart's replay of the unpublished topics) to
 * about 10 s at the measured rate; the large topics' slices are not bounded. A single request larger than the bound is
 * journaled after every earlier unpublished topic is made: its own files are its window. Tests set another bound
 * ({@link #backlogNs(long)}) or a fixed estimate ({@link #estimate(long)}).
 *
 * <p>Threading: the admin agent, but the two test setters (volatile).
 */
final class CreationCost
{
    /** The work pending (with a request's own), at the estimated cost per partition, a CreateTopics waits below. */
    static final long BACKLOG_NS = TimeUnit.SECONDS.toNanos(10);
    /**
     * The cost of a partition's files assumed before any is measured: pchunk's loaded run made 110 partitions/s (9 ms),
     * a quiet machine 1.6 ms; the slow figure bounds a first burst to about 1 100 partitions.
     */
    static final long ASSUMED_MS_PER_PARTITION = 9;

    /** A moving average of what a partition's files took to make. */
    private long nsPerPartition = TimeUnit.MILLISECONDS.toNanos(ASSUMED_MS_PER_PARTITION);
    /** The wall time the backlog drains at, per partition. */
    private final DrainRate drain = new DrainRate(TimeUnit.MILLISECONDS.toNanos(ASSUMED_MS_PER_PARTITION));
    /** A fixed estimate per partition set by a test, or 0: measured. */
    private volatile long fixedNsPerPartition;
    /** The backlog's bound in estimated work ({@link #BACKLOG_NS}; tests set another). */
    private volatile long backlogNs = BACKLOG_NS;

    /** The backlog's bound in estimated work, for tests (the accessor {@code CreationsHold}). */
    void backlogNs(final long ns)
    {
        backlogNs = ns;
    }

    /** A fixed estimate of a partition's cost (0: measured again), for tests: the bound they check then does not move. */
    void estimate(final long nsPerPartition)
    {
        fixedNsPerPartition = nsPerPartition;
    }

    /** The estimated wall cost of a partition's files: the slower of the drain rate and the create time (or a test's). */
    long estimatedNsPerPartition()
    {
        final long fixed = fixedNsPerPartition;
        return fixed > 0 ? fixed : Math.max(nsPerPartition, drain.nsPerPartition());
    }

    /** The most unpublished partitions, with a request's own, the backlog is made down to: {@link #backlogNs} at the estimate. */
    long backlogBound()
    {
        return backlogNs / Math.max(1, estimatedNsPerPartition());
    }

    /** A topic journaled at {@code now}: a backlog exists. */
    void journaled(final long now)
    {
        drain.backlog(now);
    }

    /** The chunks are held at {@code now} (a test): held time is not drain time. */
    void held(final long now)
    {
        drain.restart(now);
    }

    /** Nothing pending any more at {@code now}. */
    void drained(final long now)
    {
        drain.drained(now);
    }

    /** {@code partitions} made in {@code tookNs}, at {@code now}: both averages moved. */
    void made(final int partitions, final long tookNs, final long now)
    {
        final long perPartition = tookNs / Math.max(1, partitions);
        nsPerPartition += (perPartition - nsPerPartition) / 8; // a moving average over the last topics made
        drain.made(partitions, now);
    }
}
