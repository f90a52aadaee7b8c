package io.ferrite.log;

import io.ferrite.index.OffsetIndex;
import io.ferrite.index.TimeIndex;
import io.ferrite.wire.record.RecordBatchDescriptor;
import org.agrona.DirectBuffer;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * One segment: {@code <base offset>.log} with its {@code .index} and {@code .timeindex}, and a
 * {@code .txnindex} once an aborted transaction's marker lands in it ({@link TransactionIndex}), named
 * as Kafka names them (20-digit zero-padded base offset).
 *
 * <p>One writer appends; readers use {@link #size()} (acquire), which is published (release)
 * after the bytes are written and before the index entries that point at them. Its files are
 * created and opened by {@link SegmentOpener}; {@link SegmentRecovery} walks it after an unclean stop; its
 * writer's index bookkeeping (when an index entry is due, the largest timestamp) is {@link SegmentIndexer}'s.
 */
final class Segment implements AutoCloseable
{
    static final String LOG_SUFFIX = ".log";
    static final String INDEX_SUFFIX = ".index";
    static final String TIME_INDEX_SUFFIX = ".timeindex";

    private static final VarHandle SIZE;

    static
    {
        try
        {
            SIZE = MethodHandles.lookup().findVarHandle(Segment.class, "size", int.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    final long baseOffset;
    final SegmentFile log;
    final OffsetIndex offsetIndex;
    final TimeIndex timeIndex;
    final TransactionIndex txnIndex;
    private final int indexIntervalBytes;
    private final int maxIndexBytes;
    /** The writer's index bookkeeping. */
    private final SegmentIndexer indexer;
    @SuppressWarnings("unused") // through SIZE
    private volatile int size;

    private final long createdMs;
    private volatile boolean active;
    /** Set before retention drops the segment from the log and before it closes: from then on no tailer starts a read in it. */
    private volatile boolean retired;
    /** Its files are being deleted or its directory renamed ({@link #forDeletion}): nothing reaches them by path any more. */
    private volatile boolean deleted;
    /** What its close runs last: the unlink of the files a replacement renamed away ({@link SegmentDeletion}). */
    private volatile CloseSteps.Step afterClose;
    private int flushedSize;

    Segment(final long baseOffset, final SegmentFile log, final OffsetIndex offsetIndex, final TimeIndex timeIndex,
        final TransactionIndex txnIndex, final LogConfig config, final int size, final boolean active, final long createdMs)
    {
        this.baseOffset = baseOffset;
        this.log = log;
        this.offsetIndex = offsetIndex;
        this.timeIndex = timeIndex;
        this.txnIndex = txnIndex;
        this.indexIntervalBytes = config.indexIntervalBytes;
        this.maxIndexBytes = config.segmentIndexBytes;
        this.active = active;
        this.createdMs = createdMs;
        this.indexer = new SegmentIndexer(offsetIndex, timeIndex, indexIntervalBytes);
        SIZE.setRelease(this, size);
    }

    static String fileName(final long baseOffset, final String suffix)
    {
        // %020d by hand: the first String.format of a JVM loads the Formatter and locale data
        // (a good part of the first topic creation's time)
        final String digits = Long.toString(baseOffset);
        if (baseOffset < 0 || digits.length() >= 20)
        {
            return String.format("%020d%s", baseOffset, suffix);
        }
        return "0".repeat(20 - digits.length()) + digits + suffix;
    }

    /** Bytes of data readers may read (acquire). */
    int size()
    {
        return (int)SIZE.getAcquire(this);
    }

    boolean isActive()
    {
        return active;
    }

    long maxTimestamp()
    {
        return indexer.maxTimestamp();
    }

    long offsetOfMaxTimestamp()
    {
        return indexer.offsetOfMaxTimestamp();
    }

    /**
     * How long the segment has been open for segment.ms, as Kafka counts it: from the first batch's
     * max timestamp to the incoming batch's, or from the segment's creation when it has no timestamp.
     */
    long timeWaitedForRoll(final long nowMs, final long incomingMaxTimestamp)
    {
        return indexer.timeWaitedForRoll(nowMs, incomingMaxTimestamp, createdMs);
    }

    /** The last offset appended to this segment, or -1 for an empty one (writer state). */
    long lastOffset()
    {
        return indexer.lastOffset();
    }

    /**
     * Indexes the transaction an ABORT marker in this segment ended (the partition's writer, before the
     * marker's bytes are placed, {@link BatchPlacer#place}; or the loader's rebuild in recovery and the replay): Kafka's
     * {@code LogSegment.updateTxnIndex}. See {@link TransactionIndex#append}.
     */
    void appendAbortedTxn(final long producerId, final long firstOffset, final long lastOffset, final long lastStableOffset)
        throws IOException
    {
        txnIndex.append(producerId, firstOffset, lastOffset, lastStableOffset);
    }

    /** Whether the indexes have room for one more entry and the closing time-index entry. */
    boolean indexesFull()
    {
        return offsetIndex.entries() >= offsetIndex.maxEntries() - 1 || timeIndex.entries() >= timeIndex.maxEntries() - 1;
    }

    /**
     * Appends one batch (single writer): the bytes, then the published size, then index entries
     * Kafka's way — one when more than {@code index.interval.bytes} were written since the last.
     *
     * @return the batch's position in the file
     */
    int append(final DirectBuffer src, final int offset, final int length, final long batchLastOffset,
        final long batchMaxTimestamp) throws IOException
    {
        final int position = size();
        indexer.ensureRoom();
        log.write(src, offset, length, position);
        publish(position, length, batchLastOffset, batchMaxTimestamp);
        return position;
    }

    /** Makes a batch whose bytes are in place at {@code position} readable: the size (release), then its index entries. */
    private void publish(final int position, final int length, final long batchLastOffset, final long batchMaxTimestamp)
    {
        SIZE.setRelease(this, position + length);
        indexer.indexed(position, length, batchLastOffset, batchMaxTimestamp);
    }

    /**
     * Claims {@code length} bytes at the end of data for a batch built in place in the mapping
     * (writer only; mapped strategy).
     *
     * @return their position, {@code into} wrapping them; or -1 when they cannot be had in place
     */
    int claim(final int length, final org.agrona.concurrent.UnsafeBuffer into) throws IOException
    {
        final int position = size();
        return active && log.claim(position, length, into) ? position : -1;
    }

    /**
     * Publishes a batch built in place at {@code position} (the end of data, from {@link #claim}):
     * as {@link #append} does after its copy — index room, then the size, then the index entries.
     */
    void commitClaimed(final int position, final int length, final long batchLastOffset, final long batchMaxTimestamp)
        throws IOException
    {
        if (position != size())
        {
            throw LogMessages.claimMisplaced(position, size());
        }
        indexer.ensureRoom();
        publish(position, length, batchLastOffset, batchMaxTimestamp);
    }

    /** Whether the time-based roll counts from the first batch's timestamp (else from the segment's creation). */
    boolean rollsByBatchTimestamps()
    {
        return indexer.rollsByBatchTimestamps();
    }

    /** Allocates ahead of the write position (mapped strategy); safe from the preallocator thread. */
    void preallocate() throws IOException
    {
        if (active && !deleted)
        {
            log.allocateAhead(size());
            offsetIndex.allocateAhead();
            timeIndex.allocateAhead();
        }
    }

    /**
     * The preallocator's, within its budget of file creations per cycle: an active segment near its
     * first index entry (past half an index interval of log) gets its index files made here, not by
     * the writer at the entry (a file creation can cost a millisecond, and every partition of that
     * log thread waits behind it); an idle partition's never need them while it is active.
     *
     * @return the files made (0 to 2); one volatile read once the segment has an index entry
     */
    int makeIndexFilesAhead() throws IOException
    {
        if (!active || deleted || offsetIndex.entries() > 0)
        {
            return 0;
        }
        final int size = size();
        if (size == 0 || size < indexIntervalBytes / 2)
        {
            return 0;
        }
        return (offsetIndex.makeFile() ? 1 : 0) + (timeIndex.makeFile() ? 1 : 0);
    }

    /**
     * Stops taking appends: the file cut to its data first (on a full disk that gives back the
     * preallocated space the rest needs), then the closing time-index entry (so the segment's
     * largest timestamp survives a restart), then the indexes cut to theirs.
     */
    void deactivate() throws IOException
    {
        log.trim(size());
        indexer.closingTimeEntry();
        offsetIndex.trimToValidSize();
        timeIndex.trimToValidSize();
        active = false;
    }

    /** Makes the index files not made yet (before a roll changes anything: a creation can fail). */
    void makeIndexFiles() throws IOException
    {
        offsetIndex.makeFile();
        timeIndex.makeFile();
    }

    /** Gives back the indexes' mappings, checked on open, until next used (only at the open: no reader holds them yet). */
    void releaseIndexMappings()
    {
        offsetIndex.releaseMapping();
        timeIndex.releaseMapping();
    }

    /** fsync of the log and the transaction index, and, for a segment that no longer takes appends, its other indexes. */
    void flush() throws IOException
    {
        final int s = size();
        if (s != flushedSize)
        {
            log.flush();
            flushedSize = s;
        }
        txnIndex.flush();
        if (!active)
        {
            offsetIndex.flush();
            timeIndex.flush();
        }
    }

    // ---- reads ----

    long batchBaseOffset(final int position)
    {
        return log.view().getLong(position + RecordBatchDescriptor.BASE_OFFSET_OFFSET, BIG_ENDIAN);
    }

    int batchSize(final int position)
    {
        return RecordBatchDescriptor.LOG_OVERHEAD + log.view().getInt(position + RecordBatchDescriptor.BATCH_LENGTH_OFFSET, BIG_ENDIAN);
    }

    long batchLastOffset(final int position)
    {
        return batchBaseOffset(position) + log.view().getInt(position + RecordBatchDescriptor.LAST_OFFSET_DELTA_OFFSET, BIG_ENDIAN);
    }

    byte magicAt(final int position)
    {
        return log.view().getByte(position + RecordBatchDescriptor.MAGIC_OFFSET);
    }

    long batchMaxTimestamp(final int position)
    {
        return log.view().getLong(position + RecordBatchDescriptor.MAX_TIMESTAMP_OFFSET, BIG_ENDIAN);
    }

    /**
     * The position of the first batch whose last offset is at least {@code target}, scanning from
     * the offset index's answer; -1 when the segment has no such batch below {@code limit}
     * ({@link SegmentSearch}).
     */
    int positionOf(final long target, final int limit)
    {
        return SegmentSearch.positionOf(this, offsetIndex, target, limit);
    }

    /** {@link BatchFrame#end} in this segment: where the whole frame at {@code position} ends, or -1. */
    int frameEnd(final int position, final int limit)
    {
        return BatchFrame.end(log.view(), position, limit);
    }

    /** The first batch the offset index points at past the damaged frame at {@code damaged}, whole below {@code limit}; or -1. */
    int indexedBatchAfter(final int damaged, final int limit)
    {
        return SegmentSearch.indexedBatchAfter(this, offsetIndex, damaged, limit);
    }

    /** Whether a batch header that could hold offsets up to {@code target} starts at {@code p}. */
    boolean plausibleBatchAt(final int p, final long target, final int limit)
    {
        return SegmentSearch.plausibleBatchAt(this, p, target, limit);
    }

    // ---- recovery ----

    /**
     * Recovery starts over ({@link SegmentRecovery}): no reader holds the indexes yet, so they get
     * room to be rebuilt whole, and the writer state is forgotten.
     */
    void resetForRecovery() throws IOException
    {
        offsetIndex.resize(maxIndexBytes);
        timeIndex.resize(maxIndexBytes);
        offsetIndex.reset();
        timeIndex.reset();
        indexer.reset();
    }

    /** Recovery kept the batch at {@code position}: its index bookkeeping, as an append's. */
    void recovered(final int position, final int length, final long batchLastOffset, final long batchMaxTimestamp)
    {
        indexer.indexed(position, length, batchLastOffset, batchMaxTimestamp);
    }

    /** Recovery ends: the log cut at {@code end} (also giving back what lies past it), a sealed segment deactivated. */
    void recoveredTo(final int end) throws IOException
    {
        if (end != size() || end < log.capacity())
        {
            log.truncateTo(end);
        }
        SIZE.setRelease(this, end);
        if (!active)
        {
            deactivate();
        }
    }

    /** Drops batches from {@code offset} on (the log is being truncated there). */
    void truncateTo(final long offset) throws IOException
    {
        final int p = positionOf(offset, size());
        if (p < 0)
        {
            return;
        }
        offsetIndex.truncateTo(offset);
        timeIndex.truncateTo(offset);
        txnIndex.truncateTo(offset);
        log.truncateTo(p);
        SIZE.setRelease(this, p);
    }

    /** Marks the segment as no longer part of its log (retention, close): tailers leave it. */
    void retire()
    {
        retired = true;
    }

    boolean isRetired()
    {
        return retired;
    }

    /** Closes the files (deactivating an active segment), leaving the mappings to the GC: see {@link SegmentFile#close}. */
    @Override
    public void close() throws IOException
    {
        retired = true;
        try
        {
            if (active && !deleted) // a deleted one is not trimmed: through its paths, that could cut another partition's files
            {
                deactivate();
            }
        }
        finally
        {
            CloseSteps.all(offsetIndex::close, timeIndex::close, txnIndex::close, log::close, // each, even when one throws
                () -> { if (afterClose != null) afterClose.run(); });
        }
    }

    /**
     * {@link #close} and unmap at once: for a deleted segment once {@code file.delete.delay.ms} has
     * passed (readers must be done with it by then), so that its files' blocks go back to the disk.
     */
    void closeAndUnmap() throws IOException
    {
        try
        {
            close();
        }
        finally
        {
            // each, even when one throws: a deleted log's close trims its indexes through a path that is gone
            CloseSteps.all(offsetIndex::unmapNow, timeIndex::unmapNow, log::unmapNow);
        }
    }

    /**
     * Readies the segment for the deletion of its files or the rename of its directory: its indexes
     * mapped for the readers that found it ({@link CloseSteps#indexesForDeletion}), and none of its
     * files reached through its path from now on — its close neither trims nor flushes — since the
     * path may name another partition's file by then. The mappings and open channels stay for
     * readers until the close.
     */
    void forDeletion()
    {
        deleted = true;
        CloseSteps.indexesForDeletion(this);
    }

    /** Whether {@link #forDeletion} was called: its files are deleted (or going) and reached by path no more. */
    boolean isForDeletion()
    {
        return deleted;
    }

    void afterClose(final CloseSteps.Step step)
    {
        afterClose = step;
    }

    @Override
    public String toString()
    {
        return "Segment(" + log.path() + ", size " + size() + ")";
    }
}
