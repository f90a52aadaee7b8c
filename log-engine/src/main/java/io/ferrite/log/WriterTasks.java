package io.ferrite.log;

/**
 * How the log manager's scheduler has the logs' single writers run writer-only work — today the
 * producer-id expiry ({@link LogTransactions#removeExpiredProducers}), which changes the producer state
 * only a log's writer touches. The scheduler says once per check interval that it is due, not once
 * per log: the broker flags each log thread, which walks the partitions it owns a few per duty cycle
 * between its appends, so ten thousand partitions cost no burst and nothing is allocated per
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

    /** No writer loop to hand work to: the scheduler hands nothing (the writer's own calls do it). */
    WriterTasks NONE = () -> { };
}
