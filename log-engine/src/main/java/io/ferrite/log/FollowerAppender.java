package io.ferrite.log;

import io.ferrite.wire.record.ControlRecords;
import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import org.agrona.MutableDirectBuffer;

import java.io.IOException;

import static io.ferrite.wire.record.RecordBatchDescriptor.*;

/**
 * A follower's append (Kafka 4.4's {@code UnifiedLog.appendAsFollower}, origin REPLICATION): batches a leader
 * wrote, fetched from it, appended keeping everything the leader gave them — base offsets, partition leader
 * epochs, timestamps, producer fields, CRCs. Nothing is patched and nothing is assigned.
 *
 * <p>First every batch is checked, and nothing is appended if one fails: its frame and magic 2, its CRC
 * (CORRUPT_MESSAGE), each batch at most {@code segment.bytes} (RECORD_TOO_LARGE; Kafka checks the whole fetched set
 * and answers RECORD_LIST_TOO_LARGE, its {@code RecordBatchTooLargeException}: see the README's differences),
 * the first batch's base offset not below the log end (UNEXPECTED_APPEND_OFFSET, Kafka's
 * {@code UnexpectedAppendOffsetException}), each batch's offsets above the one's before (OFFSETS_OUT_OF_ORDER,
 * Kafka's {@code OffsetsOutOfOrderException}). A gap — a base above the offset expected, as a compacted leader's
 * batches have, or a leader whose damaged older segment was cut ({@code SegmentGapTest}) — is taken, as Kafka
 * takes it; an append that put one into the active segment rolls at its end ({@link #sealGap}). As Kafka: {@code max.message.bytes} is not checked (the leader took the
 * batch), nor the records inside (the CRC covers them); a partial batch at the end — a fetch answer cut at its
 * byte limit — and, with it, everything from a batch whose partition leader epoch is above the follower's
 * {@code leaderEpoch} on, are left out, not refused (the caller sees where the log end got to).
 *
 * <p>Then each batch is placed on its own through the leader's path ({@link BatchPlacer#placeReplica}): the
 * same roll conditions (batch by batch, so a follower's segments end where its leader's do whatever the fetch
 * boundaries; Kafka rolls once per fetched set), the same offset and time index entries, the same producer
 * state update. Producer checks are Kafka's for REPLICATION: no sequence or epoch check (the leader made
 * them), but a non-transactional batch of a producer whose transaction is open is INVALID_TXN_STATE, as in
 * Kafka's {@code ProducerAppendInfo.appendDataBatch}; that check is made batch by batch, so the batches before
 * such a one stay appended (Kafka refuses the whole set; only a broken leader sends one). An ABORT marker that
 * ends an open transaction gets its {@code .txnindex} entry as the leader's does, and a marker's transaction
 * stays unstable until the follower's own high watermark passes it.
 *
 * <p>Single writer, through the writer's gate as any append; allocates nothing.
 */
final class FollowerAppender
{
    private final PartitionLog log;
    private final LogAppender appender;
    private final LogOffsets offsets;
    private final ProducerStateManager producers;
    private final BatchPlacer placer;
    private final SegmentList segments;
    private final SegmentRoller roller;
    private final RecordBatch batch;
    /** The active segment once an append put a gap in it, until it is rolled (a roll that failed is tried again). */
    private Segment gapped;
    /** Reads a marker's control record in place. */
    private final Record controlRecord = new Record();

    FollowerAppender(final PartitionLog log, final LogAppender appender, final LogOffsets offsets,
        final ProducerStateManager producers, final BatchPlacer placer, final SegmentList segments, final SegmentRoller roller)
    {
        this.segments = segments;
        this.roller = roller;
        this.log = log;
        this.appender = appender;
        this.offsets = offsets;
        this.producers = producers;
        this.placer = placer;
        this.batch = placer.batch();
    }

    /** See {@link PartitionLog#appendAsFollower}. */
    void append(final MutableDirectBuffer buffer, final int offset, final int length, final int leaderEpoch,
        final AppendResult result)
    {
        if (!appender.beginAppend(result))
        {
            return;
        }
        try
        {
            if (!appender.fsyncFailed(result))
            {
                appendChecked(buffer, offset, length, leaderEpoch, result);
            }
        }
        finally
        {
            appender.gate().endAppend();
        }
    }

    private void appendChecked(final MutableDirectBuffer buffer, final int offset, final int length, final int leaderEpoch,
        final AppendResult result)
    {
        final LogConfig cfg = log.config();
        result.logStartOffset = offsets.logStartOffset();
        final int end = check(buffer, offset, length, leaderEpoch, cfg, result);
        if (end < 0)
        {
            return;
        }
        long first = -1;
        long last = -1;
        int position = offset;
        while (position < end)
        {
            batch.wrap(buffer, position);
            final int size = batch.sizeInBytes();
            if (!checkTxnState(result))
            {
                break;
            }
            final long expected = offsets.logEndOffsetOpaque();
            placer.placeReplica(buffer, position, size, cfg, abortingProducer(), result);
            if (result.status < 0)
            {
                break;
            }
            final Segment active = segments.active();
            if (result.firstOffset > expected && result.firstOffset != active.baseOffset)
            {
                gapped = active; // a gap inside the active segment, not at its start
            }
            first = first < 0 ? result.firstOffset : first;
            last = result.lastOffset;
            position += size;
        }
        sealGap(result);
        // on a failure part way, what was appended before it
        result.firstOffset = first;
        result.lastOffset = last;
    }

    /**
     * Rolls when this append (or one whose roll failed) left a gap in the active segment: the new active
     * segment starts at the log end, so gaps only ever sit in sealed segments, below the next one's base, where
     * recovery takes them ({@link SegmentRecovery#recover}'s {@code gapsBelow}). Recovery of the active segment
     * wants its offsets to run on exactly — that is what catches a damaged base offset there — so a crash before
     * this roll cuts the active segment at its first gap: follower data this append has not acknowledged yet,
     * which the next fetch brings again. Not a roll at every gap: a follower of a compacted leader, whose
     * cleaned segments have gaps between most batches, would make a segment per batch; this makes at most one
     * per fetch, and none once it fetches from the leader's active segment (never cleaned, so without gaps).
     */
    private void sealGap(final AppendResult result)
    {
        if (gapped == null || gapped != segments.active())
        {
            gapped = null; // none, or already sealed by a roll of the placement's own
            return;
        }
        try
        {
            roller.rollAtLogEnd(offsets.logEndOffsetOpaque());
            gapped = null;
        }
        catch (final IOException ex)
        {
            if (result.status >= 0)
            {
                result.fail(AppendResult.STORAGE_ERROR, "cannot roll " + log + " after a gap in its active segment: " + ex);
            }
        }
    }

    /**
     * Every batch's checks before any is appended.
     *
     * @return the end of the batches to append (the offset itself when none is), or -1 (the result says why)
     */
    private int check(final MutableDirectBuffer buffer, final int offset, final int length, final int leaderEpoch,
        final LogConfig cfg, final AppendResult result)
    {
        final int limit = offset + length;
        long expected = offsets.logEndOffsetOpaque();
        int position = offset;
        while (position < limit)
        {
            batch.wrap(buffer, position);
            final int frame = batch.checkFrame(limit - position);
            if (frame == RecordBatch.TRUNCATED)
            {
                break; // a fetch answer's last batch, cut at its byte limit: the next fetch brings it whole
            }
            if (frame == RecordBatch.UNSUPPORTED_MAGIC)
            {
                return fail(AppendResult.UNSUPPORTED_MAGIC, position - offset, LogMessages.followerMagic(batch.magic()), result);
            }
            if (frame != RecordBatch.OK)
            {
                return fail(AppendResult.CORRUPT_MESSAGE, position - offset, LogMessages.followerCorrupt(frame), result);
            }
            if (batch.partitionLeaderEpoch() != NO_PARTITION_LEADER_EPOCH && batch.partitionLeaderEpoch() > leaderEpoch)
            {
                break; // Kafka 4.4's hasHigherPartitionLeaderEpoch: this batch and the rest are skipped
            }
            if (!batch.isCrcValid())
            {
                return fail(AppendResult.CORRUPT_MESSAGE, position - offset, LogMessages.followerCrc(batch.crc()), result);
            }
            final int size = batch.sizeInBytes();
            if (size > cfg.segmentBytes) // per batch, as it is placed and rolled; Kafka's check is per fetched set
            {
                return fail(AppendResult.RECORD_TOO_LARGE, position - offset, LogMessages.followerTooLarge(size, cfg.segmentBytes),
                    result);
            }
            final long base = batch.baseOffset();
            if (batch.lastOffsetDelta() < 0)
            {
                return fail(AppendResult.CORRUPT_MESSAGE, position - offset, LogMessages.followerDelta(batch.lastOffsetDelta()),
                    result);
            }
            if (base < expected)
            {
                final int status = position == offset ? AppendResult.UNEXPECTED_APPEND_OFFSET : AppendResult.OFFSETS_OUT_OF_ORDER;
                return fail(status, position - offset, LogMessages.followerOffsets(position == offset, base, expected), result);
            }
            expected = batch.lastOffset() + 1;
            position += size;
        }
        return position;
    }

    private int fail(final int status, final int at, final String what, final AppendResult result)
    {
        result.fail(status, "Follower append to " + log + ", at byte " + at + " of the append: " + what);
        return -1;
    }

    /** Kafka's {@code ProducerAppendInfo.appendDataBatch} check, the one a REPLICATION origin keeps. */
    private boolean checkTxnState(final AppendResult result)
    {
        final long pid = batch.producerId();
        if (pid != NO_PRODUCER_ID && !batch.isControl() && !batch.isTransactional() && producers.openTxnFirstOffset(pid) >= 0)
        {
            result.fail(AppendResult.INVALID_TXN_STATE, LogMessages.followerNotTransactional(pid, batch.baseOffset(), log,
                producers.openTxnFirstOffset(pid)));
            return false;
        }
        return true;
    }

    /** The producer whose ABORT marker the batch is (its open transaction is indexed first), else NO_PRODUCER_ID. */
    private long abortingProducer()
    {
        final long pid = batch.producerId();
        if (!batch.isControl() || pid == NO_PRODUCER_ID)
        {
            return NO_PRODUCER_ID;
        }
        return ControlMarkers.type(batch, controlRecord) == ControlRecords.ABORT ? pid : NO_PRODUCER_ID;
    }
}
