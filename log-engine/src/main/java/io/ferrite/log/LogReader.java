package io.ferrite.log;

import io.ferrite.wire.compress.Codecs;
import io.ferrite.wire.record.CorruptRecordException;
import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordReader;

import java.nio.ByteBuffer;

import static io.ferrite.log.PartitionLog.NO_BATCH;
import static io.ferrite.log.PartitionLog.OFFSET_OUT_OF_RANGE;
import static io.ferrite.log.PartitionLog.READ_FAILED;
import static io.ferrite.log.PartitionLog.READ_OK;
import static io.ferrite.wire.record.RecordBatchDescriptor.NO_TIMESTAMP;

/**
 * The reads of one partition log, from any thread and without a lock: fetch regions, in-place
 * batches, and ListOffsets by timestamp. Each takes the segment list once and the log end once,
 * so it answers from one consistent view even while the writer appends and retention deletes.
 *
 * <p>A read racing a close of its log reads valid memory (a close leaves the mappings to the GC,
 * {@link SegmentFile#close}); each checks the closed flag after it has its answer and throws
 * {@link LogClosedException} instead of giving one that the close may have overtaken — a region
 * whose channel the close shut, a batch of a log that is gone.
 */
final class LogReader
{
    /**
     * The record reader of the timestamp lookups, one per calling thread (the network threads): a reader and codecs made
     * per lookup left their decompression buffer (direct memory, freed only by a collection) and a zstd batch's native
     * contexts (never freed) behind them: resident memory grew by 90-110 KiB a lookup of a zstd batch (lots11 review H1,
     * {@code TimestampLookupNativeMemoryTest}).
     */
    private static final ThreadLocal<LookupReader> LOOKUP_READERS = ThreadLocal.withInitial(LookupReader::new);

    /** A thread's reader for timestamp lookups, made again only for a log whose decompression bound differs. */
    private static final class LookupReader
    {
        private final Codecs codecs = new Codecs();
        private RecordReader reader;
        private int maxDecompressedBytes;

        RecordReader of(final int maxDecompressedBytes)
        {
            if (reader == null || this.maxDecompressedBytes != maxDecompressedBytes)
            {
                reader = new RecordReader(codecs, maxDecompressedBytes);
                this.maxDecompressedBytes = maxDecompressedBytes;
            }
            return reader;
        }
    }

    private final PartitionLog log;
    private final LogOffsets offsets;
    private final SegmentList segments;

    LogReader(final PartitionLog log, final LogOffsets offsets, final SegmentList segments)
    {
        this.log = log;
        this.offsets = offsets;
        this.segments = segments;
    }

    /** See {@link PartitionLog#read}. */
    int read(final long startOffset, final int maxBytes, final long maxOffset, final boolean minOneBatch, final FileRegion out)
    {
        final int answer = readRegion(startOffset, maxBytes, maxOffset, minOneBatch, out);
        segments.checkOpen();
        return answer;
    }

    private int readRegion(final long startOffset, final int maxBytes, final long maxOffset, final boolean minOneBatch, final FileRegion out)
    {
        final long end = offsets.logEndOffset();
        if (startOffset < offsets.logStartOffset() || startOffset > end)
        {
            out.empty(startOffset);
            return OFFSET_OUT_OF_RANGE;
        }
        final long bound = Math.min(maxOffset, end);
        out.empty(startOffset);
        if (startOffset >= bound)
        {
            return READ_OK;
        }
        final Segment[] segs = segments.array();
        for (int i = SegmentList.floor(segs, startOffset); i < segs.length; i++)
        {
            final Segment seg = segs[i];
            final int size = seg.size();
            final int start = seg.positionOf(startOffset, size);
            if (start < 0)
            {
                continue;
            }
            int p = start;
            long next = startOffset;
            // jump through the index to the last indexed batch that still fits: every batch before
            // it is in the region when it starts at or below the offset bound
            final int jump = seg.offsetIndex.positionAtOrBelow((int)Math.min(size, (long)start + maxBytes));
            if (jump > start && seg.frameEnd(jump, size) >= 0 && seg.batchBaseOffset(jump) <= bound)
            {
                p = jump;
                next = seg.batchBaseOffset(jump);
            }
            while (p < size)
            {
                // a damaged frame ends the region: the read after it goes on at the next segment
                final int batchEnd = seg.frameEnd(p, size);
                if (batchEnd < 0 || seg.batchLastOffset(p) >= bound)
                {
                    break;
                }
                if (p - start > maxBytes - (batchEnd - p) && !(minOneBatch && p == start))
                {
                    break;
                }
                next = seg.batchLastOffset(p) + 1;
                p = batchEnd;
            }
            if (p > start)
            {
                out.channel = seg.log.channel();
                out.bytes.wrap(seg.log.view(), start, p - start);
                out.position = start;
                out.length = p - start;
                out.firstBatchOffset = seg.batchBaseOffset(start);
                out.nextOffset = next;
            }
            return READ_OK;
        }
        return READ_OK;
    }

    /** See {@link PartitionLog#readBatch}. */
    int readBatch(final long offset, final long maxOffset, final RecordBatch batch)
    {
        final int answer = wrapBatch(offset, maxOffset, batch);
        segments.checkOpen();
        return answer;
    }

    private int wrapBatch(final long offset, final long maxOffset, final RecordBatch batch)
    {
        final long end = offsets.logEndOffset();
        if (offset < offsets.logStartOffset() || offset > end)
        {
            return OFFSET_OUT_OF_RANGE;
        }
        if (offset >= Math.min(maxOffset, end))
        {
            return NO_BATCH;
        }
        final Segment[] segs = segments.array();
        for (int i = SegmentList.floor(segs, offset); i < segs.length; i++)
        {
            final Segment seg = segs[i];
            final int size = seg.size();
            final int position = seg.positionOf(offset, size);
            if (position >= 0)
            {
                if (seg.batchLastOffset(position) >= maxOffset)
                {
                    return NO_BATCH;
                }
                batch.wrap(seg.log.view(), position);
                return READ_OK;
            }
        }
        return NO_BATCH;
    }

    /** See {@link LogTransactions#collectAbortedTransactions}. */
    int collectAbortedTransactions(final long fetchOffset, final long upperBoundOffset, final ByteBuffer scratch,
        final AbortedTxnSink sink)
    {
        if (scratch.capacity() < AbortedTxnDescriptor.ENTRY_LENGTH)
        {
            throw LogMessages.scratchTooSmall(scratch.capacity());
        }
        final int answer = walkAbortedTxns(fetchOffset, upperBoundOffset, scratch, sink);
        segments.checkOpen();
        return answer;
    }

    /**
     * Kafka's {@code LocalLog.collectAbortedTransactions}: the transaction index of the segment holding
     * {@code fetchOffset}, then of each later one, until one holds the entry that ends the walk.
     */
    private int walkAbortedTxns(final long fetchOffset, final long upperBoundOffset, final ByteBuffer scratch,
        final AbortedTxnSink sink)
    {
        final Segment[] segs = segments.array();
        for (int i = SegmentList.floor(segs, fetchOffset); i < segs.length; i++)
        {
            final int found = segs[i].txnIndex.collect(fetchOffset, upperBoundOffset, scratch, sink);
            if (found == TransactionIndex.COMPLETE)
            {
                break;
            }
            if (found == TransactionIndex.FAILED)
            {
                return READ_FAILED;
            }
        }
        return READ_OK;
    }

    /** See {@link PartitionLog#offsetForTimestamp}. */
    TimestampOffset offsetForTimestamp(final long timestamp, final TimestampOffset out)
    {
        final TimestampOffset answer = lookUpTimestamp(timestamp, out);
        segments.checkOpen();
        return answer;
    }

    /**
     * Kafka 4.4's search ({@code LogSegment.findOffsetByTimestamp}, {@code FileRecords.searchForTimestamp}): from the
     * batch the time and offset indexes point at, the first batch whose max timestamp reaches {@code timestamp}, then
     * its first record at or after it. A batch's records are read without its CRC, as Kafka reads them: a batch whose
     * value bytes were damaged at rest is still answered from (its header and the records' timestamps hold), and the
     * consumer that seeks there meets the damage through its own CRC check, as against Kafka. Where Ferrite answers
     * otherwise, and why (Kafka's answer there is an error for ever, or none, though later records are served):
     * records that do not hold together pass the rest of their batch over, where Kafka answers INVALID_RECORD each
     * time; a damaged frame goes on at the next batch the offset index knows of, as a fetch does, where Kafka's walk
     * ends (no offset) or fails (CORRUPT_MESSAGE); a segment with no answer goes on to the next one.
     */
    private TimestampOffset lookUpTimestamp(final long timestamp, final TimestampOffset out)
    {
        out.set(-1, -1);
        final long start = offsets.logStartOffset();
        final long end = offsets.logEndOffset();
        final RecordReader reader = LOOKUP_READERS.get().of(log.config().maxDecompressedMessageBytes);
        final RecordBatch b = new RecordBatch();
        for (final Segment seg : segments.array())
        {
            if (seg.maxTimestamp() < timestamp)
            {
                continue;
            }
            final int size = seg.size();
            final long from = Math.max(start, seg.timeIndex.lookup(timestamp));
            int p = seg.offsetIndex.lookup(from);
            if (p != 0 && !seg.plausibleBatchAt(p, from, size))
            {
                p = 0; // indexes carry no checksum: one that points at no batch is ignored
            }
            while (p >= 0 && p < size)
            {
                final int batchEnd = seg.frameEnd(p, size);
                if (batchEnd < 0)
                {
                    p = seg.indexedBatchAfter(p, size); // damage: on at the next indexed batch, as a fetch goes on
                    continue;
                }
                if (seg.batchMaxTimestamp(p) >= timestamp && seg.batchLastOffset(p) >= start &&
                    firstRecordAtOrAfter(reader, b.wrap(seg.log.view(), p), timestamp, start, end, out))
                {
                    return out;
                }
                p = batchEnd;
            }
        }
        return out;
    }

    /**
     * Into {@code out}, the first record of batch {@code b} (read by {@code reader}) whose timestamp is at least {@code
     * timestamp} and whose offset lies in [{@code start}, {@code end}); false when there is none, or when the records
     * stop holding together before it (damage: the rest of the batch cannot be read).
     */
    private static boolean firstRecordAtOrAfter(final RecordReader reader, final RecordBatch b, final long timestamp, final long start,
        final long end, final TimestampOffset out)
    {
        try
        {
            reader.reset(b);
            while (reader.hasNext())
            {
                final Record r = reader.next();
                if (r.timestamp() >= timestamp && r.offset() >= start && r.offset() < end)
                {
                    out.set(r.timestamp(), r.offset(), b.partitionLeaderEpoch());
                    return true;
                }
            }
        }
        catch (final CorruptRecordException damaged)
        {
            // the rest of the batch cannot be read: none found in it
        }
        return false;
    }

    /** See {@link PartitionLog#maxTimestampOffset}. */
    TimestampOffset maxTimestampOffset(final TimestampOffset out)
    {
        final TimestampOffset answer = lookUpMaxTimestamp(out);
        segments.checkOpen();
        return answer;
    }

    private TimestampOffset lookUpMaxTimestamp(final TimestampOffset out)
    {
        out.set(-1, -1);
        Segment best = null;
        for (final Segment seg : segments.array())
        {
            if (seg.maxTimestamp() != NO_TIMESTAMP && (best == null || seg.maxTimestamp() > best.maxTimestamp()))
            {
                best = seg;
            }
        }
        if (best == null)
        {
            return out;
        }
        final long max = best.maxTimestamp();
        final int p = best.positionOf(best.offsetOfMaxTimestamp(), best.size());
        if (p < 0)
        {
            return out;
        }
        // the first record with the max timestamp, its batch read without the CRC as Kafka's offsetOfMaxTimestamp reads
        // it; records that do not hold together (Kafka answers INVALID_RECORD each time) answer the batch's last offset
        final RecordBatch b = new RecordBatch().wrap(best.log.view(), p);
        final RecordReader reader = LOOKUP_READERS.get().of(log.config().maxDecompressedMessageBytes);
        try
        {
            reader.reset(b);
            while (reader.hasNext())
            {
                final Record r = reader.next();
                if (r.timestamp() == max)
                {
                    return out.set(max, r.offset(), b.partitionLeaderEpoch());
                }
            }
        }
        catch (final CorruptRecordException damaged)
        {
            // the rest of the batch cannot be read: its last offset, as when no record carries the max
        }
        return out.set(max, b.lastOffset(), b.partitionLeaderEpoch());
    }
}
