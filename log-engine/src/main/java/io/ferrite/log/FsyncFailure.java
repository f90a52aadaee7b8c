package io.ferrite.log;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The first fsync of a log that failed, kept for good. After a failed fsync (EIO) Linux may have
 * dropped the dirty pages it could not write and cleared the error, so a retried fsync can
 * "succeed" without the data: nothing the failed one should have covered may ever be reported
 * durable. The log's durable offset therefore stays where it was, and the log takes no more
 * appends, until a restart recovers it from what is on disk (Kafka takes the log directory offline
 * for the same reason; PostgreSQL's "fsyncgate" is where this was learned).
 *
 * <p>Written under the log's flush lock; read from any thread.
 */
final class FsyncFailure
{
    private static final Logger LOG = LoggerFactory.getLogger(FsyncFailure.class);

    private volatile Throwable cause;

    /** The first fsync failure, or null while every fsync succeeded. */
    Throwable cause()
    {
        return cause;
    }

    /** Throws the kept failure, so that no later flush of the log reports anything durable. */
    void throwIfFailed(final PartitionLog log) throws IOException
    {
        final Throwable failed = cause;
        if (failed != null)
        {
            throw new IOException(LogMessages.text("an earlier fsync of ", log, " failed"), failed);
        }
    }

    /**
     * Keeps {@code failure} if it is the first (logging it once, with the partition), tells the
     * listener and wakes those waiting in {@link PartitionLog#awaitDurable} (on {@code waiters}); returns it as the
     * IOException the flush throws. A mapped index's {@code force} reports its msync failure
     * unchecked, a channel's checked: both are the same loss.
     */
    IOException record(final PartitionLog log, final Exception failure, final DurabilityListener listener,
        final Object waiters)
    {
        final IOException io = failure instanceof UncheckedIOException unchecked ? unchecked.getCause() :
            failure instanceof IOException checked ? checked : new IOException(failure);
        if (cause == null)
        {
            cause = io;
            LOG.error("fsync of {} failed: it takes no more appends, and nothing it held unflushed is acknowledged, "
                + "until a restart recovers it from the disk", log, io);
            listener.onFsyncFailed(log, io);
            synchronized (waiters)
            {
                waiters.notifyAll();
            }
        }
        return io;
    }
}
