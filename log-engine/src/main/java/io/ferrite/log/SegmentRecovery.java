package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;

import java.io.IOException;

/** The recovery walk over one segment: scan, check, rebuild the indexes, cut at the first bad byte. */
final class SegmentRecovery
{
    private SegmentRecovery()
    {
    }

    /**
     * Rebuilds the segment's indexes from its log, checking each batch (frame, magic, CRC, offsets
     * following on from {@code nextOffset}), and cuts the log at the first byte that does not check:
     * Kafka's {@code LogSegment.recover}, except that the transaction index is not rebuilt here: the
     * loader empties it before the walk and rebuilds it from the ABORT markers the visitor is shown
     * ({@code LogLoader.recover}); for {@code LogLoader.repair} the entries at or above the cut are dropped. What follows the cut in later segments is kept (the loader's
     * rule: damage costs the damaged bytes only).
     *
     * <p>A segment a cleaner replaced ({@link SegmentReplacer}), or a follower's that took its leader's gaps
     * ({@link FollowerAppender}, which rolls after one), has gaps between its batches (the first
     * may start above its base offset): for a sealed segment, {@code gapsBelow} is the next segment's
     * base offset, and a batch may start above the offset expected when it ends below that (Kafka's
     * recovery checks no more than that offsets increase). The active segment is never cleaned: for
     * it ({@code gapsBelow} -1) offsets must run on exactly, which is what catches a damaged base offset
     * (outside the CRC) there.
     *
     * @param visitor sees each valid batch (producer state is rebuilt from them)
     * @return the log end offset after the last valid batch
     */
    static long recover(final Segment segment, final long nextOffset, final int limit, final long gapsBelow,
        final BatchVisitor visitor) throws IOException
    {
        segment.resetForRecovery();
        final RecordBatch batch = new RecordBatch();
        long expected = nextOffset;
        int p = 0;
        while (p < limit)
        {
            batch.wrap(segment.log.view(), p);
            // offsets run on without a gap (but where a cleaner left one): the base offset is outside
            // the CRC, so this is what catches a damaged one
            if (batch.check(limit - p) != RecordBatch.OK ||
                !(batch.baseOffset() == expected || batch.baseOffset() > expected && batch.lastOffset() < gapsBelow) ||
                batch.lastOffsetDelta() < 0 ||
                !segment.offsetIndex.canAppendOffset(batch.lastOffset()))
            {
                break;
            }
            final int length = batch.sizeInBytes();
            segment.recovered(p, length, batch.lastOffset(), batch.maxTimestamp());
            visitor.visit(batch);
            expected = batch.lastOffset() + 1;
            p += length;
        }
        segment.recoveredTo(p);
        // the entries of markers the cut took go with them (LogLoader.recover emptied it before the walk; repair keeps the rest)
        segment.txnIndex.truncateTo(expected);
        return expected;
    }

    /** Sees the batches recovery keeps. */
    @FunctionalInterface
    interface BatchVisitor
    {
        void visit(RecordBatch batch);
    }
}
