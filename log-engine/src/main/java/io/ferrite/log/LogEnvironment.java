package io.ferrite.log;

/** What a partition log needs from its manager: background flushing and deferred closing. */
interface LogEnvironment
{
    /** Asks the group committer of the log's disk to fsync it soon (durable acks, flush.messages). */
    void requestFlush(PartitionLog log);

    /**
     * Flushes a rolled segment in the background and then moves the recovery point past it, on a
     * thread of its own: a long fsync must not hold back retention or checkpoints.
     */
    void flushInBackground(PartitionLog log);

    /** Closes (and unmaps) a deleted segment once readers that may hold it are done ({@code delayMs}). */
    void closeLater(Segment segment, long delayMs);

    DurabilityListener durabilityListener();

    /** {@code producer.id.expiration.ms}: what a load leaves out of the producer state, and what the expiry forgets. */
    default long producerIdExpirationMs()
    {
        return LogManagerConfig.DEFAULT_PRODUCER_ID_EXPIRATION_MS;
    }

    /**
     * Keeps the cleaner off {@code log} while its segments are deleted outside the cleaner, unless a cleaner thread
     * holds it now: false then, and the deletion waits for a later pass ({@link CleanerManager#pauseUnlessInProgress}).
     */
    default boolean pauseCleaning(final PartitionLog log)
    {
        return true;
    }

    /**
     * Kafka's {@code abortAndPauseCleaning}, before a truncation ({@link LogTruncation}): a clean of {@code log} in
     * progress is stopped and waited for, and none starts until {@link #resumeCleaning}.
     */
    default void abortAndPauseCleaning(final PartitionLog log)
    {
    }

    /**
     * After a truncation of {@code log} (its writer, out of the writer's gate): the directory's recovery-point and
     * log-start checkpoints written now, as Kafka's {@code LogManager.truncateTo} writes them.
     */
    default void truncated(final PartitionLog log) throws java.io.IOException
    {
    }

    /** Retention asks the log's writer to roll its active segment ({@link RetentionRoll}): tells the {@link WriterTasks}. */
    default void retentionRollWanted(final PartitionLog log)
    {
    }

    /** A writer rolled for retention ({@link RetentionRoll#run}): a retention pass soon deletes the rolled segment. */
    default void retentionSoon()
    {
    }

    /** Undoes a {@link #pauseCleaning} that returned true, or an {@link #abortAndPauseCleaning}. */
    default void resumeCleaning(final PartitionLog log)
    {
    }

    /** For tests and the embedded API: everything inline, nothing in the background. */
    LogEnvironment INLINE = new LogEnvironment()
    {
        @Override
        public void requestFlush(final PartitionLog log)
        {
            log.flushQuietly(false);
        }

        @Override
        public void flushInBackground(final PartitionLog log)
        {
            try
            {
                log.forceRolledSnapshots(); // first, as RolledFlusher does
            }
            catch (final java.io.IOException ex)
            {
                throw new java.io.UncheckedIOException(ex); // as flushQuietly's failures
            }
            log.flushQuietly(true);
        }

        @Override
        public void closeLater(final Segment segment, final long delayMs)
        {
            try
            {
                segment.close(); // no delay here: the mappings are left to the GC, for readers still on them
            }
            catch (final java.io.IOException ignored)
            {
                // its files are deleted already
            }
        }

        @Override
        public DurabilityListener durabilityListener()
        {
            return DurabilityListener.NONE;
        }
    };
}
