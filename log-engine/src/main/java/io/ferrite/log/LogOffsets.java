package io.ferrite.log;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The offsets of one partition log, each with one writer, read by any thread:
 * <ul>
 *   <li>the log end: the log's writer, release-stored after the batch's bytes and its segment's
 *       size ({@link LogAppender}), so a reader that sees it sees the batch whole;</li>
 *   <li>the log start: retention and DeleteRecords, under the segments lock ({@link LogRetention});</li>
 *   <li>the durable offset and recovery point: the flush, under the flush lock ({@link LogFlusher});</li>
 *   <li>the high watermark: the log's owner, through {@link PartitionLog#highWatermark(long)}.</li>
 * </ul>
 * Each is set here and nowhere else; {@link #loaded} sets them once, before the log is shared.
 */
final class LogOffsets
{
    private static final VarHandle LOG_END_OFFSET;

    static
    {
        try
        {
            LOG_END_OFFSET = MethodHandles.lookup().findVarHandle(LogOffsets.class, "logEndOffset", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    @SuppressWarnings("unused") // through LOG_END_OFFSET
    private volatile long logEndOffset;
    private volatile long logStartOffset;
    private volatile long highWatermark;
    private volatile long durableOffset;
    private volatile long recoveryPoint;

    /** What recovery found; the high watermark starts at the log end, as on one node all that is kept is committed. */
    void loaded(final long logStartOffset, final long logEndOffset, final long recoveryPoint)
    {
        this.logStartOffset = logStartOffset;
        this.recoveryPoint = recoveryPoint;
        this.durableOffset = recoveryPoint;
        highWatermark(logEndOffset);
        LOG_END_OFFSET.setRelease(this, logEndOffset);
    }

    /** The offset the next append gets (acquire). */
    long logEndOffset()
    {
        return (long)LOG_END_OFFSET.getAcquire(this);
    }

    /** The writer's own read of the log end: it is the only thread that stores it. */
    long logEndOffsetOpaque()
    {
        return (long)LOG_END_OFFSET.getOpaque(this);
    }

    /** The writer publishes a batch (release): after its bytes and its segment's size. */
    void publishLogEnd(final long offset)
    {
        LOG_END_OFFSET.setRelease(this, offset);
    }

    long logStartOffset()
    {
        return logStartOffset;
    }

    /** Moves the log start up to {@code offset} (never back); under the segments lock. */
    void advanceLogStart(final long offset)
    {
        if (offset > logStartOffset)
        {
            logStartOffset = offset;
        }
    }

    long highWatermark()
    {
        return highWatermark;
    }

    /**
     * The only store of the high watermark. Why the log never moves it itself: what is committed is
     * the owner's to say (on one node the appended or, in fsync durability, the fsynced offset; with
     * replication what the followers have), and a second writer would need a compare-and-set loop to
     * keep it from going back.
     */
    void highWatermark(final long offset)
    {
        this.highWatermark = offset;
    }

    long durableOffset()
    {
        return durableOffset;
    }

    long recoveryPoint()
    {
        return recoveryPoint;
    }

    /**
     * A truncation to {@code logEnd} (under the flush lock and the segments lock, by the writer): the log end, high
     * watermark, durable offset and recovery point go no higher than it; {@code fully} (everything deleted, the log
     * starting afresh there) sets all of them, the log start too, to it, as Kafka's {@code truncateFullyAndStartAt}.
     */
    void truncated(final long logEnd, final boolean fully)
    {
        if (fully)
        {
            logStartOffset = logEnd;
        }
        if (fully || highWatermark > logEnd)
        {
            highWatermark = logEnd;
        }
        if (fully || durableOffset > logEnd)
        {
            durableOffset = logEnd; // the new segment's name was made durable before this
        }
        if (fully || recoveryPoint > logEnd)
        {
            recoveryPoint = logEnd;
        }
        LOG_END_OFFSET.setRelease(this, logEnd);
    }

    /**
     * The flush moves the durable offset to {@code target} if that is further, and the recovery point with it when
     * {@code recoveryToo} (under the flush lock). A flush whose data fsyncs succeeded but whose leader-epoch checkpoint
     * write failed moves the durable offset alone: the recovery point stays where the file's entries still cover
     * (an unclean open re-reads from it and rebuilds the epochs), and catches up at the next flush that writes the file.
     *
     * @return whether the durable offset moved
     */
    boolean advanceDurable(final long target, final boolean recoveryToo)
    {
        if (recoveryToo && durableOffset > recoveryPoint)
        {
            recoveryPoint = durableOffset; // a held-back recovery point catches up with what was already durable
        }
        if (target > durableOffset)
        {
            durableOffset = target;
            if (recoveryToo)
            {
                recoveryPoint = target;
            }
            return true;
        }
        return false;
    }
}
