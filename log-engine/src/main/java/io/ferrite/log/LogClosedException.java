package io.ferrite.log;

/**
 * A read of a {@link PartitionLog} that was closed (or was closing) when the read began or while it
 * ran: {@code read}, {@code readBatch}, {@code offsetForTimestamp}, {@code maxTimestampOffset} and
 * {@link LogTailer#next} throw it instead of answering from files that are going away. The broker
 * answers such a read as Kafka answers one for a partition it no longer hosts. One instance per log,
 * made by its close, without a stack trace: a reader polling a closed log allocates nothing.
 */
public final class LogClosedException extends IllegalStateException
{
    private static final long serialVersionUID = 1L;

    LogClosedException(final String message)
    {
        super(message);
    }

    @Override
    public synchronized Throwable fillInStackTrace()
    {
        return this; // shared by every reader of the closed log
    }
}
