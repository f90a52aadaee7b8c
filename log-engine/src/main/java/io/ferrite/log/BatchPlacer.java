package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import org.agrona.MutableDirectBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.invoke.VarHandle;

import static io.ferrite.wire.record.RecordBatchDescriptor.*;
import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * Where a checked batch goes, for every path of {@link LogAppender} (append, a claim's commit, a
 * marker): its offsets and leader epoch patched in, a roll if due, its bytes into the active segment
 * (an aborted transaction's {@code .txnindex} entry first), then published — producer state, the log
 * end, the flush policy. The batch is in the appender's flyweight. Single writer; allocates nothing.
 */
final class BatchPlacer
{
    private static final Logger LOG = LoggerFactory.getLogger(BatchPlacer.class);

    private final PartitionLog log;
    private final LogOffsets offsets;
    private final SegmentRoller roller;
    private final LogFlusher flusher;
    private final ProducerStateManager producers;
    private final RecordBatch batch;
    private final LogEpochs epochs;

    BatchPlacer(final PartitionLog log, final LogOffsets offsets, final SegmentRoller roller, final LogFlusher flusher,
        final ProducerStateManager producers, final RecordBatch batch, final LogEpochs epochs)
    {
        this.epochs = epochs;
        this.log = log;
        this.offsets = offsets;
        this.roller = roller;
        this.flusher = flusher;
        this.producers = producers;
        this.batch = batch;
    }

    /**
     * The writer became leader at {@code epoch}: stamped on the batches it appends from now on, and {@code (epoch, log end)}
     * assigned in the leader-epoch cache at once, as Kafka's {@code Partition.makeLeader} calls
     * {@code UnifiedLog.maybeAssignEpochStartOffset(leaderEpoch, logEndOffset)} — so OffsetForLeaderEpoch answers
     * for the new epoch before its first batch. The same epoch again keeps its start (Kafka's cache rule).
     */
    void leaderEpoch(final int epoch)
    {
        epochs.becameLeader(epoch, offsets.logEndOffsetOpaque());
    }

    /**
     * Assigns offsets, rolls if due, copies the checked batch (in the appender's flyweight) into the
     * active segment and publishes it. For an ABORT marker of {@code aborting} (else NO_PRODUCER_ID): when it ends an
     * open transaction, that transaction's {@code .txnindex} entry goes into the segment that will
     * hold the marker before the marker's bytes, so that no flush (which covers the index up to the
     * log end it read) and no read_committed fetch sees the marker without its entry; if the entry
     * cannot be written the marker is not either (STORAGE_ERROR: the coordinator sends it again), and
     * if the marker cannot be, its entry is taken back.
     */
    void place(final MutableDirectBuffer buffer, final int offset, final int length, final LogConfig cfg,
        final long now, final long aborting, final AppendResult result)
    {
        placeAt(buffer, offset, length, offsets.logEndOffsetOpaque(), true, cfg, now, aborting, result);
    }

    /**
     * A follower's batch ({@link FollowerAppender}): placed as {@link #place} places a leader's — roll, the
     * {@code .txnindex} entry of an ABORT first, bytes, publication — but at the base offset the leader gave it,
     * with nothing patched: its leader epoch, timestamps and CRC are the leader's.
     */
    void placeReplica(final MutableDirectBuffer buffer, final int offset, final int length, final LogConfig cfg,
        final long aborting, final AppendResult result)
    {
        placeAt(buffer, offset, length, batch.baseOffset(), false, cfg, SegmentRoller.UNKNOWN_TIME, aborting, result);
    }

    /** The flyweight every path places from. */
    RecordBatch batch()
    {
        return batch;
    }

    private void placeAt(final MutableDirectBuffer buffer, final int offset, final int length, final long base,
        final boolean assign, final LogConfig cfg, final long now, final long aborting, final AppendResult result)
    {
        final long last = base + batch.lastOffsetDelta();
        final Segment active;
        try
        {
            active = roller.maybeRoll(cfg, length, base, last, batch.maxTimestamp(), now);
        }
        catch (final IOException ex)
        {
            result.fail(AppendResult.STORAGE_ERROR, LogMessages.failed("cannot roll ", log, ex));
            return;
        }
        if (assign)
        {
            patch(buffer, offset, base, cfg, now, result);
        }
        final boolean indexed = aborting != NO_PRODUCER_ID && indexAbort(active, aborting, base, result);
        if (result.status < 0)
        {
            return; // the entry could not be written: nor is the marker
        }
        try
        {
            active.append(buffer, offset, length, last, batch.maxTimestamp());
        }
        catch (final IOException ex)
        {
            if (indexed)
            {
                unindexAbort(active, base);
            }
            result.fail(AppendResult.STORAGE_ERROR, LogMessages.failed("cannot write to ", log, ex));
            return;
        }
        published(cfg, base, last, result);
    }

    /** Writes the index entry of {@code producerId}'s open transaction an ABORT at {@code marker} ends; false when none is open. */
    private boolean indexAbort(final Segment active, final long producerId, final long marker, final AppendResult result)
    {
        final long first = producers.openTxnFirstOffset(producerId);
        if (first < 0)
        {
            return false;
        }
        try
        {
            active.appendAbortedTxn(producerId, first, marker, producers.abortedTxnLastStableOffset(producerId, marker));
            return true;
        }
        catch (final IOException | RuntimeException ex)
        {
            result.fail(AppendResult.STORAGE_ERROR, LogMessages.indexAbortFailed(producerId, log, ex));
            return false;
        }
    }

    /** Takes back the entry of a marker that could not be written (best effort: an entry past the log end is cut by recovery). */
    private void unindexAbort(final Segment active, final long marker)
    {
        try
        {
            active.txnIndex.truncateTo(marker);
        }
        catch (final IOException ex)
        {
            LOG.warn("{}: cannot take back the index entry of an ABORT marker at {} that was not written: {}", log, marker, ex.toString());
        }
    }

    /** Writes what the log assigns into the batch: leader epoch, for LogAppendTime the time and CRC, and last the base offset. */
    void patch(final MutableDirectBuffer buffer, final int offset, final long base, final LogConfig cfg, final long now,
        final AppendResult result)
    {
        buffer.putInt(offset + PARTITION_LEADER_EPOCH_OFFSET, epochs.current(), BIG_ENDIAN); // one volatile read
        if (cfg.logAppendTime)
        {
            buffer.putShort(offset + ATTRIBUTES_OFFSET, (short)(batch.attributes() | TIMESTAMP_TYPE_MASK), BIG_ENDIAN);
            buffer.putLong(offset + MAX_TIMESTAMP_OFFSET, now, BIG_ENDIAN);
            buffer.putInt(offset + CRC_OFFSET, batch.computeCrc(), BIG_ENDIAN);
            result.logAppendTime = now;
        }
        // the base offset last, and after the rest in the page cache: a claim's batch is patched in its
        // segment's mapping, and a process killed in the middle of this leaves the builder's base offset,
        // which recovery's "offsets follow on" check refuses — never a whole batch whose leader epoch
        // (outside the CRC like the base offset) is the builder's -1 (CrashRecoveryTest in claim mode saw one)
        VarHandle.storeStoreFence();
        buffer.putLong(offset + BASE_OFFSET_OFFSET, base, BIG_ENDIAN);
    }

    /** After the batch's bytes and size are published: producer state, the log end, the result, the flush policy. */
    void published(final LogConfig cfg, final long base, final long last, final AppendResult result)
    {
        // a marker reads the high watermark (what it ends stays unstable until that passes it); nothing else does
        producers.update(batch, batch.isControl() ? offsets.highWatermark() : Long.MAX_VALUE);
        // the leader-epoch hook of every placed batch (append, commit, marker, a follower's): before the log
        // end moves, so a flush that reads this log end finds the entry to write (LogEpochs)
        epochs.placed(batch, base);
        offsets.publishLogEnd(last + 1);
        result.firstOffset = base;
        result.lastOffset = last;
        result.status = AppendResult.OK;
        flusher.appended(batch.recordCount(), cfg);
    }
}
