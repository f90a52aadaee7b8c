package io.ferrite.log;

/**
 * How the log manager's scheduler has the logs' single writers run writer-only work — the
 * producer-id expiry ({@link LogTransactions#removeExpiredProducers}), which changes the producer state
 * only a log's writer touches, and retention's roll of an active segment ({@link #retentionRollDue}).
 * For the expiry the scheduler says once per check interval that it is due, not once per log: the
 * broker flags each log thread, which walks the partitions it owns a few per duty cycle between its appends, so ten thousand partitions cost no burst and nothing is allocated per
 * partition. An embedded writer with no such loop keeps {@link #NONE} and calls the work itself.
 */
@FunctionalInterface
public interface WriterTasks
{
    /**
     * {@code producer.id.expiration.check.interval.ms} passed: each open log's writer is to run
     * {@link LogTransactions#removeExpiredProducers} soon, between its appends. Called on the scheduler's
     * thread, once per interval; must not block. A check still under way when the next is due may absorb it.
     */
    void producerExpiryDue();

    /**
     * Retention found {@code log}'s active segment past retention ({@link RetentionRoll}): its writer is to call
     * {@code log.retentionRoll().run()} soon, between its appends. Called on a retention thread (the scheduler's, or a
     * cleaner thread's for a compacted log), on every pass that finds the log so (the roll clears the log's flag: a
     * repeat is a no-op); must not block. {@link #NONE} does nothing: the embedded writer calls it itself.
     */
    default void retentionRollDue(final PartitionLog log)
    {
    }

    /** No writer loop to hand work to: the scheduler hands nothing (the writer's own calls do it). */
    WriterTasks NONE = () -> { };
}
