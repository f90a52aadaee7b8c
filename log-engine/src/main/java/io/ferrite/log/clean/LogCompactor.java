package io.ferrite.log.clean;

import io.ferrite.log.AbortedTxnSink;
import io.ferrite.log.BatchRewriter;
import io.ferrite.log.CleanerTiming;
import io.ferrite.log.LogClosedException;
import io.ferrite.log.LogTransactions;
import io.ferrite.log.PartitionLog;
import io.ferrite.log.SegmentReplacer;
import io.ferrite.log.SegmentsView;
import io.ferrite.wire.compress.Codecs;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordReader;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;

/**
 * One clean of one log, as Kafka 4.4's {@code Cleaner.doClean}: the {@link OffsetMap} built over
 * {@code [firstDirty, firstUncleanable)} segment by segment (stopping where it fills up: the next clean starts at
 * {@code map.latestOffset() + 1}, what {@link #clean} answers), then the log's segments from its start up to that
 * offset grouped as Kafka's {@code groupSegmentsBySize} ({@link SegmentGroups}), each group rewritten through the
 * log's {@link SegmentReplacer} with this as the {@link BatchRewriter}: {@link BatchFilter} under the cleaner's
 * {@link CleanerRetention} (keys deduplicated, tombstones and empty transactions' markers removed once their
 * batch's delete horizon — KIP-534, set by the clean that first keeps them — has passed, aborted data removed,
 * every live producer's last batch kept). The kept aborted transactions' {@code .txnindex} entries are the
 * replacer's ({@code CleanedSegments}: an entry stays with its kept marker).
 *
 * <p>One difference from Kafka 4.4, on purpose: the map is built up to {@code firstUncleanable} exactly, also
 * inside the last dirty segment. Kafka's {@code buildOffsetMapForSegment} reads that segment to its end — putting
 * keys written past the first uncleanable offset, e.g. past a last stable offset inside an inactive segment — and
 * then sets the map's latest offset to {@code end - 1}; so it removes older values of keys rewritten there, such as
 * by a transaction still open, and loses the committed value if that transaction is aborted. Ferrite keeps those
 * values until the next clean past the decided transaction ({@code LogCompactorTest}'s
 * {@code aValueRewrittenPastTheFirstUncleanableOffsetInAnInactiveSegmentStays}).
 *
 * <p>One per cleaner thread, reused for every clean; the map's memory is the caller's
 * ({@code log.cleaner.dedupe.buffer.size} / {@code log.cleaner.threads}). Nothing is allocated per batch or per
 * record once the filter's buffers have grown to the largest batch; a clean allocates per group (the replacer's
 * files) and once for the producer state's copy ({@code LogTransactions.lastBatchesOfProducers}, whose reads go
 * through the throttle and {@link CleanStats#producerStateBytesRead} as the map's do).
 */
public final class LogCompactor implements LogCompaction, BatchRewriter, AbortedTxnSink, LogTransactions.ReadListener
{
    /** Bytes read or written between two calls of the throttle: Kafka calls it per read buffer (64 KiB to 1 MiB). */
    private static final int THROTTLE_CHUNK = 64 * 1024;

    private final OffsetMap map;
    private final CleanerThrottle throttle;
    private final OffsetMapLoader loader;
    private final CleanerRetention retention;
    private final BatchFilter filter;
    private final SegmentsView view = new SegmentsView();
    private final SegmentGroups groups = new SegmentGroups();
    private final RecordBatch batch = new RecordBatch();
    private final RecordBatch rewritten = new RecordBatch();
    /** The transaction index walks' (at least one 34-byte entry; 4 KiB reads about a hundred a system call). */
    private final ByteBuffer txnScratch = ByteBuffer.allocateDirect(4096);

    // the clean in hand
    private PartitionLog log;
    private CleanStats stats;
    private CleanedTransactions abortedInto;
    private int segment;
    private int groupEnd;
    private long unthrottled;

    /**
     * @param map                  the dedupe buffer, the caller's (closed by it)
     * @param throttle             {@code log.cleaner.io.max.bytes.per.second}, shared by the node's cleaner threads
     * @param maxDecompressedBytes the bound on one batch's decompressed records (Kafka's max record body size)
     */
    public LogCompactor(final OffsetMap map, final CleanerThrottle throttle, final int maxDecompressedBytes)
    {
        this.map = map;
        this.throttle = throttle;
        // each reader its own codecs: a codec keeps a view of the buffer it last read (see BatchFilter)
        this.loader = new OffsetMapLoader(map, new CleanedTransactions(new RecordReader(new Codecs(), maxDecompressedBytes)),
            new RecordReader(new Codecs(), maxDecompressedBytes));
        this.retention = new CleanerRetention(loader, new CleanedTransactions(new RecordReader(new Codecs(), maxDecompressedBytes)));
        this.filter = new BatchFilter(new Codecs(), maxDecompressedBytes);
    }

    @Override
    public long clean(final PartitionLog log, final long firstDirtyOffset, final long firstUncleanableOffset,
        final long deleteRetentionMs, final long nowMs, final CleanStats stats) throws IOException, InterruptedException
    {
        if (firstDirtyOffset >= firstUncleanableOffset)
        {
            return firstDirtyOffset; // nothing dirty to map: nothing this clean could remove
        }
        this.log = log;
        this.stats = stats;
        unthrottled = 0;
        try
        {
            view.take(log);
            // never into the segment active when the view was taken (Kafka's first uncleanable offset is at most
            // the active segment's base; a caller's above it would map it and, if it rolled meanwhile, group it)
            final long uncleanable = Math.min(firstUncleanableOffset, view.baseOffset(view.count() - 1));
            if (firstDirtyOffset >= uncleanable)
            {
                return firstDirtyOffset;
            }
            final boolean mapped = buildOffsetMap(firstDirtyOffset, uncleanable);
            CleanerTiming.mark(CleanerTiming.Stage.MAP);
            if (!mapped)
            {
                return ABANDONED;
            }
            final long endOffset = map.latestOffset() + 1;
            if (endOffset <= firstDirtyOffset)
            {
                throw new IllegalStateException(log + ": the offset map (" + map.slots() + " slots) cannot hold the keys of " +
                    "the batch at " + firstDirtyOffset + ": raise log.cleaner.dedupe.buffer.size");
            }
            retention.reset(nowMs, deleteRetentionMs, log.highWatermark());
            log.transactions().lastBatchesOfProducers(this, retention.activeProducers());
            groups.group(view, log.config().segmentBytes, log.config().segmentIndexBytes, endOffset, uncleanable,
                loader.loadedOffsets());
            CleanerTiming.mark(CleanerTiming.Stage.PRODUCER_STATE);
            for (int g = 0; g < groups.count(); g++)
            {
                if (!cleanGroup(groups.first(g), groups.size(g)))
                {
                    return ABANDONED;
                }
            }
            throttle.maybeThrottle(unthrottled);
            return endOffset;
        }
        catch (final LogClosedException closed)
        {
            return ABANDONED;
        }
        catch (final UncheckedIOException ex)
        {
            if (log.isClosed())
            {
                return ABANDONED; // closed or deleted meanwhile (its files gone under the copy or an index read)
            }
            throw stoppedOr(ex.getCause());
        }
        catch (final IOException ex)
        {
            if (log.isClosed())
            {
                return ABANDONED;
            }
            throw stoppedOr(ex);
        }
        catch (final Stopped stopped)
        {
            throw new InterruptedException("cleaner stopped while cleaning " + log);
        }
        finally
        {
            view.clear();
            this.log = null;
            this.stats = null;
        }
    }

    /**
     * A stop that landed outside the throttle (the thread interrupted between two calls) makes the clean's next
     * file work fail (a transaction index read, the replacer's writes: an interruptible channel); that is a stop,
     * not a failure of the log, so it is said as one — with the interrupt consumed, as Java's convention for
     * {@link InterruptedException} — and the caller does not mark the log uncleanable. The replacer has abandoned
     * its files by then.
     */
    private IOException stoppedOr(final IOException failure) throws InterruptedException
    {
        if (Thread.interrupted())
        {
            final InterruptedException stop = new InterruptedException("cleaner stopped while cleaning " + log);
            stop.initCause(failure);
            throw stop;
        }
        return failure;
    }

    /** Kafka's {@code buildOffsetMap}: false when the log moved under it (its start passed the dirty range). */
    private boolean buildOffsetMap(final long start, final long end) throws IOException, InterruptedException
    {
        map.clear();
        final CleanedTransactions txns = loader.transactions();
        txns.clear();
        collectAborted(txns, start, end);
        for (int i = 0; i < view.count() && view.baseOffset(i) < end; i++)
        {
            final long next = i + 1 < view.count() ? Math.min(view.baseOffset(i + 1), end) : end;
            if (next <= start)
            {
                continue; // below the dirty section
            }
            long offset = Math.max(start, view.baseOffset(i));
            while (true)
            {
                final int read = log.readBatch(offset, next, batch);
                if (read == PartitionLog.OFFSET_OUT_OF_RANGE)
                {
                    return false;
                }
                if (read != PartitionLog.READ_OK)
                {
                    break; // the segment's last batch read
                }
                final int size = batch.sizeInBytes();
                stats.mapBytesRead += size;
                stats.mapBatchesRead++;
                maybeThrottle(size);
                if (!loader.load(batch, start))
                {
                    return true; // the map is full: what it holds ends at its latest offset
                }
                offset = batch.lastOffset() + 1;
            }
            map.updateLatestOffset(next - 1);
        }
        return true;
    }

    /** One group through the replacer; false when abandoned (the run or the log gone). */
    private boolean cleanGroup(final int first, final int count) throws IOException
    {
        segment = first;
        groupEnd = first + count;
        final CleanedTransactions txns = retention.transactions();
        collectAborted(txns, view.baseOffset(first), view.baseOffset(first + 1));
        final int answer = log.segmentReplacer().replace(view.baseOffset(first), count, this);
        switch (answer)
        {
            case SegmentReplacer.REPLACED:
                stats.segmentsReplaced += count;
                return true;
            case SegmentReplacer.RUN_GONE:
            case SegmentReplacer.LOG_CLOSED:
            case SegmentReplacer.BUSY: // one cleaner per log: another replacement means the log is not ours to clean now
                return false;
            default:
                throw new IOException(log + ": segments from " + view.baseOffset(first) + " not replaced (" +
                    (answer == SegmentReplacer.DAMAGED ? "a damaged batch" : "an earlier replacement failed") + ")");
        }
    }

    /** Each batch of the group in offset order ({@link SegmentReplacer}'s call): what the cleaner keeps of it. */
    @Override
    public RecordBatch rewrite(final RecordBatch in)
    {
        while (segment + 1 < groupEnd && in.baseOffset() >= view.baseOffset(segment + 1))
        {
            segment++; // Kafka adds each segment's aborted transactions before reading it
            collectAborted(retention.transactions(), view.baseOffset(segment), view.baseOffset(segment + 1));
        }
        final int size = in.sizeInBytes();
        final int written = filter.filter(in, retention);
        stats.bytesRead += size;
        stats.recordsRead += in.recordCount();
        stats.recordsKept += filter.recordsKept();
        stats.bytesWritten += written;
        try
        {
            maybeThrottle(size + written);
        }
        catch (final InterruptedException ex)
        {
            // the interrupt is not set again: the replacer's abandon deletes the .cleaned files, and an interrupted
            // thread's file channel operations would fail (leaving files the replacer then refuses to go on after);
            // clean() throws InterruptedException, which says it as Java's convention does
            throw Stopped.INSTANCE;
        }
        if (written == 0)
        {
            return null;
        }
        if (filter.wroteOriginal())
        {
            return in;
        }
        return rewritten.wrap(filter.output(), 0);
    }

    /** The aborted transactions of {@code [from, to)} from the log's transaction indexes, into {@code txns}. */
    private void collectAborted(final CleanedTransactions txns, final long from, final long to)
    {
        abortedInto = txns;
        if (log.transactions().collectAbortedTransactions(from, to, txnScratch, this) != PartitionLog.READ_OK)
        {
            throw new UncheckedIOException(new IOException(log + ": a transaction index of [" + from + ", " + to +
                ") could not be read"));
        }
    }

    /** {@link AbortedTxnSink}: one aborted transaction (its marker's offset matters only to the replacer's index). */
    @Override
    public void abortedTransaction(final long producerId, final long firstOffset)
    {
        abortedInto.addAbortedTransaction(producerId, firstOffset, -1, -1);
    }

    /** {@link LogTransactions.ReadListener}: a batch the producer state's copy read, counted and throttled as the map's. */
    @Override
    public void batchRead(final int bytes) throws InterruptedException
    {
        stats.producerStateBytesRead += bytes;
        maybeThrottle(bytes);
    }

    private void maybeThrottle(final int bytes) throws InterruptedException
    {
        unthrottled += bytes;
        if (unthrottled >= THROTTLE_CHUNK)
        {
            final long n = unthrottled;
            unthrottled = 0;
            throttle.maybeThrottle(n);
        }
    }

    /** The cleaner thread was interrupted inside a replacement: unwinds through it (preallocated, no stack). */
    private static final class Stopped extends RuntimeException
    {
        private static final long serialVersionUID = 1L;
        static final Stopped INSTANCE = new Stopped();

        private Stopped()
        {
            super("cleaner stopped", null, false, false);
        }
    }
}
