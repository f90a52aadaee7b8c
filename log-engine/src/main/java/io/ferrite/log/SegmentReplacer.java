package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import org.agrona.concurrent.EpochClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Replaces a run of a partition log's inactive segments by new ones written from their batches: the
 * swap a log cleaner ends with, as Kafka's {@code Cleaner.cleanSegments} and
 * {@code LocalLog.replaceSegments} do it, crash-safe and with readers never seeing a segment vanish.
 * For a cleaner thread, not the partition's writer; one replacement of a log at a time
 * ({@link #BUSY} otherwise). Nothing of it is on the append or read paths.
 *
 * <p>The steps ({@link #replace}):
 * <ol>
 * <li>the run's batches, in offset order, each given to the caller's {@link BatchRewriter}, and what it
 *     answers written into {@code <base>.log.cleaned} (with {@code .index}, {@code .timeindex} built
 *     as the writer builds them, and a {@code .txnindex} of the replaced segments' aborted transactions
 *     whose marker is kept), more than one new segment where the writer would roll, each fsynced
 *     ({@link CleanedSegments}); the first one's base offset is the run's;</li>
 * <li>in a hold of the segments lock of its own, every file renamed to {@code .swap}, the last segment first, but
 *     the first one's {@code .log};</li>
 * <li>under the segments lock again (the swap's hold, which a roll waits for), after checking that the log is
 *     open and the run still in it (retention, DeleteRecords or a close may have taken it meanwhile: then the
 *     replacement is abandoned, its {@code .swap} files deleted first and that {@code .log.cleaned} last), the
 *     commit: that {@code .log.cleaned} renamed to {@code .swap}; then the replaced segments' files renamed to
 *     {@code .deleted} (their mappings and channels stay for readers), the {@code .swap} files renamed to their
 *     final names, the new segments opened, and the segment list without the old run and with the new one
 *     published, then the old segments retired, so that a tailer on one finds the new ones in the list and goes
 *     on there at its next offset;</li>
 * <li>the directory fsynced, and the old segments closed after {@code file.delete.delay.ms}, as retention's are;
 *     their close unlinks their {@code .deleted} files ({@link SegmentDeletion#renameForDeletion}).</li>
 * </ol>
 * Every step that reaches a file by its path runs under the segments lock while the log is open (a deletion of the
 * partition renames its directory once its close has taken the lock, and a new log may take the old path): a
 * replacement the close overtakes answers {@link #LOG_CLOSED} and touches no path of the closed log. A failed fsync
 * of a new segment or of the directory is the log's ({@link FsyncFailure}), as a flush's: kept, thrown, and
 * {@link #FAILED} answered from then on.
 * A crash before the commit leaves {@code .cleaned} files, which the next open deletes together with
 * every {@code .swap} at or above them; after it, {@code .swap} files, which the open completes
 * ({@link SwapRecovery}). The new segments cover the run's offset range for that: when what is kept
 * ends below the last replaced segment's base offset, an empty new segment is made at that base, so a
 * recovery by offset range deletes every replaced segment and resurrects none.
 */
public final class SegmentReplacer
{
    /** {@link #replace}: the run was replaced. */
    public static final int REPLACED = 0;
    /** {@link #replace}: a segment of the run is not in the log any more (retention, DeleteRecords), or is the active one. */
    public static final int RUN_GONE = -1;
    /** {@link #replace}: the log is closed. */
    public static final int LOG_CLOSED = -2;
    /** {@link #replace}: another replacement of this log is in progress. */
    public static final int BUSY = -3;
    /** {@link #replace}: a batch of the run failed its frame or CRC check, or its offsets go backwards. */
    public static final int DAMAGED = -4;
    /**
     * {@link #replace}: an earlier replacement of this log failed after its commit, or could not delete the files of
     * an abandoned one, or an fsync of the log failed ({@link PartitionLog#fsyncFailure()}); until the log is reopened (which settles what is on disk, {@link SwapRecovery}) no other
     * replacement may commit, since the open goes by the {@code .swap} and {@code .cleaned} files it finds.
     */
    public static final int FAILED = -5;

    private static final Logger LOG = LoggerFactory.getLogger(SegmentReplacer.class);

    private final PartitionLog log;
    private final SegmentList segments;
    private final WriteStrategy strategy;
    private final EpochClock clock;
    private final LogEnvironment env;
    private final LogFlusher flusher;
    private final AtomicBoolean busy = new AtomicBoolean();
    /** Set, for good, by a replacement that failed after its commit or left files it could not delete ({@link #FAILED}). */
    private volatile boolean failed;
    /** How long the last replacement that committed held the segments lock for its swap, in nanoseconds (a roll waits that long). */
    private volatile long lastSwapLockNanos;
    /** Run once the new segments are written, before the swap's holds of the lock: a test's stop there (set before). */
    Runnable beforeSwap = () -> { };

    SegmentReplacer(final PartitionLog log, final SegmentList segments, final WriteStrategy strategy, final EpochClock clock,
        final LogEnvironment env, final LogFlusher flusher)
    {
        this.log = log;
        this.segments = segments;
        this.strategy = strategy;
        this.clock = clock;
        this.env = env;
        this.flusher = flusher;
    }

    /**
     * Keeps replacements out while a truncation changes the log ({@link LogTruncation}): its prefix's {@code .cleaned}
     * files would have the names of a replacement's from the same segment. The log's clean was stopped first
     * ({@link LogEnvironment#abortAndPauseCleaning}); a replacement from elsewhere in progress is waited for, and one
     * that starts meanwhile answers {@link #BUSY}.
     */
    void holdForTruncation()
    {
        while (!busy.compareAndSet(false, true))
        {
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
        }
    }

    /** Ends {@link #holdForTruncation}. */
    void releaseAfterTruncation()
    {
        busy.set(false);
    }

    /** The base offsets of the segments that may be replaced now: every one but the active one, oldest first. */
    public long[] inactiveSegmentBases()
    {
        final Segment[] segs = segments.array();
        final long[] bases = new long[segs.length - 1];
        for (int i = 0; i < bases.length; i++)
        {
            bases[i] = segs[i].baseOffset;
        }
        return bases;
    }

    /**
     * Replaces the {@code count} segments from the one whose base offset is {@code firstBase} by what
     * {@code rewriter} answers for their batches. Offsets the rewriter drops leave gaps: a read at one
     * goes on at the next batch present.
     *
     * @return {@link #REPLACED}, or why not ({@link #RUN_GONE}, {@link #LOG_CLOSED}, {@link #BUSY},
     *     {@link #DAMAGED}, {@link #FAILED}); the files of an abandoned replacement are deleted
     * @throws IOException when a file could not be written or fsynced (the replacement is abandoned; a failed fsync is
     *     the log's, {@link PartitionLog#fsyncFailure()}), or, after the commit, renamed or opened (the next open of
     *     the log completes it), or the directory could not be fsynced (the log's failed fsync; the swap is done)
     * @throws IllegalArgumentException when the rewriter answers a batch that is not whole, or fails its CRC (one of
     *     its own), or whose offsets leave the batch it replaces or do not follow the one written before (abandoned)
     */
    public int replace(final long firstBase, final int count, final BatchRewriter rewriter) throws IOException
    {
        if (!busy.compareAndSet(false, true))
        {
            return BUSY;
        }
        try
        {
            if (failed || flusher.fsyncFailure() != null)
            {
                return FAILED;
            }
            final Segment[] run = run(segments.array(), firstBase, count);
            if (segments.isClosed())
            {
                return LOG_CLOSED;
            }
            if (run == null)
            {
                return RUN_GONE;
            }
            return replace(run, rewriter);
        }
        finally
        {
            busy.set(false);
        }
    }

    private int replace(final Segment[] run, final BatchRewriter rewriter) throws IOException
    {
        final ByteBuffer abortedTxns = abortedTxns(run);
        if (abortedTxns == null)
        {
            return RUN_GONE; // a .txnindex went with its segment meanwhile
        }
        final CleanedSegments cleaned = new CleanedSegments(log.dir(), segments, log.config(), clock.time(), abortedTxns);
        CleanerTiming.mark(CleanerTiming.Stage.GROUP_SETUP);
        boolean committed = false;
        boolean interrupted = false;
        try
        {
            final int written = write(run, rewriter, cleaned);
            if (written != REPLACED)
            {
                return written;
            }
            // every file but the first one's .log to .swap, in a hold of the lock of its own: the swap's hold below
            // is what a roll waits for. While that .log is .cleaned, an abandon deletes the .swap files first and it
            // last, and an open deletes every .swap at or above it: nothing of this is taken for committed
            beforeSwap.run();
            if (!segments.underOpenLog(cleaned::prepareSwap))
            {
                return LOG_CLOSED;
            }
            CleanerTiming.mark(CleanerTiming.Stage.RENAME);
            // a committed swap must finish, and it is short: an interrupt (a stopping cleaner) must not close a channel
            // of its opening or its directory fsync, which would fail a healthy log; it is given back once done
            interrupted = Thread.interrupted();
            FileChannel dir = null;
            IOException dirFailure = null;
            segments.lock();
            final long locked = System.nanoTime();
            try
            {
                final int gone = segments.isClosed() ? LOG_CLOSED : stillThere(run) ? REPLACED : RUN_GONE;
                if (gone != REPLACED)
                {
                    return gone; // abandoned below: its .swap files deleted first, then its .cleaned ones
                }
                cleaned.commit();
                committed = true;
                swap(run, cleaned);
                try
                {
                    dir = FileChannel.open(log.dir(), StandardOpenOption.READ); // while the log is known open
                }
                catch (final IOException ex)
                {
                    dirFailure = ex; // the swap's names cannot be made durable: reported once the old segments are handed on
                }
            }
            finally
            {
                lastSwapLockNanos = System.nanoTime() - locked;
                segments.unlock();
            }
            for (final Segment s : run)
            {
                env.closeLater(s, log.config().fileDeleteDelayMs); // their close unlinks their files, renamed .deleted
            }
            CleanerTiming.mark(CleanerTiming.Stage.SWAP);
            if (dirFailure != null)
            {
                throw flusher.fsyncFailed(dirFailure);
            }
            fsyncDirectory(dir);
            CleanerTiming.mark(CleanerTiming.Stage.FSYNC_DIR);
            return REPLACED;
        }
        catch (final CleanedSegments.LogClosed closed)
        {
            return LOG_CLOSED; // abandoned below, through no path of the closed log
        }
        catch (final CleanedSegments.FsyncFailed fsync)
        {
            throw flusher.fsyncFailed((Exception)fsync.getCause()); // the log's, as every failed fsync: it takes no more appends
        }
        finally
        {
            if (interrupted)
            {
                Thread.currentThread().interrupt();
            }
            if (!committed && !cleaned.abandon())
            {
                failed = true; // a leftover .cleaned would make the open take a later committed swap for uncommitted
                LOG.error("{}: an abandoned segment replacement from {} left files; no replacement until the log is reopened",
                    log, run[0].baseOffset);
            }
        }
    }

    /**
     * The swap after the commit, under the segments lock: the replaced segments' files renamed {@code .deleted} (the
     * mappings and channels stay for readers until the delay passed), the {@code .swap} files to their final names,
     * the new segments opened and published.
     */
    private void swap(final Segment[] run, final CleanedSegments cleaned) throws IOException
    {
        final Segment[] fresh;
        try
        {
            for (final Segment s : run)
            {
                SegmentDeletion.renameForDeletion(s, segments);
            }
            cleaned.completeSwap();
            fresh = open(cleaned.bases());
        }
        catch (final IOException | RuntimeException ex)
        {
            failed = true;
            // the old segments stay in the list, read through their mappings; they are marked for deletion
            // (SegmentDeletion), so retention cannot reach the new ones by those names; the open completes it
            LOG.error("{}: segment replacement from {} failed after its commit; the next open completes it", log,
                run[0].baseOffset, ex);
            throw ex;
        }
        segments.replace(run, fresh);
    }

    /** The swap's renames made durable; a failure is the log's failed fsync ({@link FsyncFailure}), as a flush's. */
    private void fsyncDirectory(final FileChannel dir) throws IOException
    {
        try (dir)
        {
            dir.force(true);
        }
        catch (final java.nio.channels.ClosedByInterruptException interrupted)
        {
            throw interrupted; // an interrupt that came after the swap's began (see replace): nothing failed on disk
        }
        catch (final IOException ex)
        {
            throw flusher.fsyncFailed(ex);
        }
    }

    /** How long the last committed replacement held the segments lock for its swap, in nanoseconds (0 before one). */
    long lastSwapLockNanos()
    {
        return lastSwapLockNanos;
    }

    /** Writes the new segments; {@link #REPLACED} when all of the run was read. */
    private int write(final Segment[] run, final BatchRewriter rewriter, final CleanedSegments cleaned) throws IOException
    {
        final RecordBatch in = new RecordBatch();
        long lastRead = run[0].baseOffset - 1;
        cleaned.start(run[0].baseOffset);
        for (final Segment s : run)
        {
            final int size = s.size();
            int p = 0;
            while (p < size)
            {
                if (s.isRetired())
                {
                    // before its bytes are read: they stay mapped for file.delete.delay.ms after the retirement
                    return segments.isClosed() ? LOG_CLOSED : RUN_GONE;
                }
                in.wrap(s.log.view(), p);
                if (in.check(size - p) != RecordBatch.OK || in.baseOffset() <= lastRead || in.lastOffset() < in.baseOffset())
                {
                    LOG.warn("{}: segment {} has a damaged batch at {}: not replaced", log, s.baseOffset, p);
                    return DAMAGED;
                }
                final long base = in.baseOffset();
                final long last = in.lastOffset();
                final int length = in.sizeInBytes();
                final RecordBatch out = rewriter.rewrite(in);
                if (out != null)
                {
                    // even the batch as read: a rewriter may have written into it (the mapping of a segment written
                    // with WriteStrategy.MAPPED is writable); a CRC32C on the cleaner's thread is cheap
                    check(out, base, last, cleaned.lastWritten());
                    cleaned.append(out);
                }
                lastRead = last;
                p += length;
            }
        }
        final long lastBase = run[run.length - 1].baseOffset;
        if (cleaned.lastWritten() < lastBase && cleaned.bases().get(cleaned.bases().size() - 1) < lastBase)
        {
            cleaned.start(lastBase); // the new segments cover the run up to its last segment (see the class comment)
        }
        cleaned.finish(run[run.length - 1].log.path().toFile().lastModified());
        return REPLACED;
    }

    /**
     * What the rewriter answered, checked whole, its CRC included — a cleaner's bug must not write a batch consumers
     * (which check CRCs) and the next unclean open (which cuts the segment there) reject.
     */
    private static void check(final RecordBatch out, final long base, final long last, final long lastWritten)
    {
        final int available = out.buffer().capacity() - out.offset();
        final int checked = out.check(available);
        if (checked != RecordBatch.OK || out.baseOffset() < base || out.lastOffset() > last ||
            out.lastOffset() < out.baseOffset() || out.baseOffset() <= lastWritten)
        {
            throw new IllegalArgumentException("the rewriter answered a batch of offsets " + out.baseOffset() + ".." +
                out.lastOffset() + (checked == RecordBatch.OK ? "" : " failing its check (" + checked + ")") +
                " for the batch of " + base + ".." + last + " after " + lastWritten);
        }
    }

    /** The new segments, opened under their final names (under the segments lock). */
    private Segment[] open(final List<Long> bases) throws IOException
    {
        final Segment[] fresh = new Segment[bases.size()];
        try
        {
            for (int i = 0; i < fresh.length; i++)
            {
                final long base = bases.get(i);
                final boolean txnIndex = log.dir().resolve(Segment.fileName(base, TransactionIndex.SUFFIX)).toFile().exists();
                fresh[i] = SegmentOpener.open(log.dir(), base, log.config(), strategy, false, 0, clock.time(), txnIndex);
            }
            return fresh;
        }
        catch (final IOException | RuntimeException ex)
        {
            for (final Segment s : fresh)
            {
                if (s != null)
                {
                    CloseSteps.all(s::close);
                }
            }
            throw ex;
        }
    }

    /**
     * The run as it is in {@code segs}: {@code count} segments from the one at {@code firstBase}, none
     * retired and the last of them not the active one; null when it is not there.
     */
    private static Segment[] run(final Segment[] segs, final long firstBase, final int count)
    {
        int from = -1;
        for (int i = 0; i < segs.length; i++)
        {
            if (segs[i].baseOffset == firstBase)
            {
                from = i;
                break;
            }
        }
        if (count < 1 || from < 0 || from + count > segs.length - 1)
        {
            return null;
        }
        final Segment[] run = new Segment[count];
        for (int i = 0; i < count; i++)
        {
            run[i] = segs[from + i];
            if (run[i].isRetired() || run[i].isActive())
            {
                return null;
            }
        }
        return run;
    }

    /** Whether the run is in the log as it is now, the same segments, none retired (under the segments lock). */
    private boolean stillThere(final Segment[] run)
    {
        final Segment[] now = run(segments.array(), run[0].baseOffset, run.length);
        if (now == null)
        {
            return false;
        }
        for (int i = 0; i < run.length; i++)
        {
            if (now[i] != run[i])
            {
                return false;
            }
        }
        return true;
    }

    /** The run's aborted-transaction index entries, raw, in marker order; null when a file is gone. */
    static ByteBuffer abortedTxns(final Segment[] run) throws IOException
    {
        int total = 0;
        for (final Segment s : run)
        {
            total += s.txnIndex.entries();
        }
        final ByteBuffer entries = ByteBuffer.allocate(total * AbortedTxnDescriptor.ENTRY_LENGTH);
        for (final Segment s : run)
        {
            final int n = s.txnIndex.entries();
            if (n == 0)
            {
                continue;
            }
            try (FileChannel ch = FileChannel.open(s.txnIndex.path(), StandardOpenOption.READ))
            {
                final int start = entries.position();
                entries.limit(start + n * AbortedTxnDescriptor.ENTRY_LENGTH);
                while (entries.hasRemaining())
                {
                    if (ch.read(entries, entries.position() - start) < 0)
                    {
                        return null; // cut meanwhile: not this log's file any more
                    }
                }
            }
            catch (final NoSuchFileException gone)
            {
                return null;
            }
        }
        entries.flip();
        return entries;
    }
}
