package io.ferrite.log;

/** The environment of the logs of one log directory: its group committer and the manager's background work. */
final class DirEnvironment implements LogEnvironment
{
    private final GroupCommitter committer;
    private final LogBackgroundWork background;
    private final DurabilityListener listener;
    private final long producerIdExpirationMs;
    private final CleanerManager cleaner;
    /** Writes this directory's recovery-point and log-start checkpoints ({@code LogManager.checkpointDir}). */
    private final SegmentList.FileWork checkpoint;

    DirEnvironment(final GroupCommitter committer, final LogBackgroundWork background, final DurabilityListener listener,
        final long producerIdExpirationMs, final CleanerManager cleaner, final SegmentList.FileWork checkpoint)
    {
        this.checkpoint = checkpoint;
        this.cleaner = cleaner;
        this.producerIdExpirationMs = producerIdExpirationMs;
        this.committer = committer;
        this.background = background;
        this.listener = listener;
    }

    @Override
    public void requestFlush(final PartitionLog log)
    {
        committer.request(log);
    }

    @Override
    public void flushInBackground(final PartitionLog log)
    {
        background.flushInBackground(log);
    }

    @Override
    public void closeLater(final Segment segment, final long delayMs)
    {
        background.closeLater(segment, delayMs);
    }

    @Override
    public DurabilityListener durabilityListener()
    {
        return listener;
    }

    @Override
    public boolean pauseCleaning(final PartitionLog log)
    {
        return cleaner.pauseUnlessInProgress(log);
    }

    @Override
    public void truncated(final PartitionLog log) throws java.io.IOException
    {
        checkpoint.run();
        cleaner.truncated(log); // Kafka's maybeTruncateCleanerCheckpointToActiveSegmentBaseOffset
    }

    @Override
    public void abortAndPauseCleaning(final PartitionLog log)
    {
        cleaner.abortAndPause(log);
    }

    @Override
    public void resumeCleaning(final PartitionLog log)
    {
        cleaner.resume(log);
    }

    @Override
    public void retentionRollWanted(final PartitionLog log)
    {
        background.retentionRollWanted(log);
    }

    @Override
    public void retentionSoon()
    {
        background.retentionSoon();
    }

    @Override
    public long producerIdExpirationMs()
    {
        return producerIdExpirationMs;
    }
}
