package io.ferrite.log;

/**
 * How the log manager's scheduler has a log's single writer run writer-only work — today the
 * producer-id expiry ({@link LogTransactions#removeExpiredProducers}), which changes the producer state
 * only its writer touches. The broker hands the task to the partition's log thread, which runs it
 * between appends; an embedded writer with no such loop keeps {@link #NONE} and calls the work itself.
 */
@FunctionalInterface
public interface WriterTasks
{
    /**
     * Hands {@code task} to {@code log}'s writer, to run there soon, between its appends. Called on the
     * scheduler's thread; must not block. A log the writer no longer has (deleted meanwhile) may drop it.
     */
    void execute(PartitionLog log, Runnable task);

    /** No writer loop to hand work to: the scheduler hands nothing (the writer's own calls do it). */
    WriterTasks NONE = (log, task) -> { };
}
