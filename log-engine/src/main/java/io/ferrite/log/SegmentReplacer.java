package io.ferrite.log;

import io.ferrite.log.config.DurableFile;
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
 * <li>under the segments lock, after checking that the log is open and the run still in it (retention,
 *     DeleteRecords or a close may have taken it meanwhile: then the replacement is abandoned and its
 *     {@code .cleaned} files deleted), every file renamed to {@code .swap}, the last segment first, but the
 *     first one's {@code .log}; then the commit: that {@code .log.cleaned} renamed to {@code .swap}; then the replaced
 *     segments' files deleted (their mappings and channels stay for readers), the {@code .swap} files
 *     renamed to their final names, the new segments opened, and the segment list without the old run
 *     and with the new one published, then the old segments retired, so that a tailer on one finds the new
 *     ones in the list and goes on there at its next offset;</li>
 * <li>the directory fsynced, and the old segments closed after {@code file.delete.delay.ms}, as
 *     retention's are.</li>
 * </ol>
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
     * an abandoned one; until the log is reopened (which settles what is on disk, {@link SwapRecovery}) no other
     * replacement may commit, since the open goes by the {@code .swap} and {@code .cleaned} files it finds.
     */
    public static final int FAILED = -5;

    private static final Logger LOG = LoggerFactory.getLogger(SegmentReplacer.class);

    private final PartitionLog log;
    private final SegmentList segments;
    private final WriteStrategy strategy;
    private final EpochClock clock;
    private final LogEnvironment env;
    private final AtomicBoolean busy = new AtomicBoolean();
    /** Set, for good, by a replacement that failed after its commit or left files it could not delete ({@link #FAILED}). */
    private volatile boolean failed;

    SegmentReplacer(final PartitionLog log, final SegmentList segments, final WriteStrategy strategy, final EpochClock clock,
        final LogEnvironment env)
    {
        this.log = log;
        this.segments = segments;
        this.strategy = strategy;
        this.clock = clock;
        this.env = env;
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
     * @throws IOException when a file could not be written (the replacement is abandoned), or, after the
     *     commit, renamed or opened (the next open of the log completes it)
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
            if (failed)
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
        final CleanedSegments cleaned = new CleanedSegments(log.dir(), log.config(), clock.time(), abortedTxns);
        boolean committed = false;
        try
        {
            final int written = write(run, rewriter, cleaned);
            if (written != REPLACED)
            {
                return written;
            }
            final Segment[] fresh;
            segments.lock();
            try
            {
                final int gone = segments.isClosed() ? LOG_CLOSED : stillThere(run) ? REPLACED : RUN_GONE;
                if (gone != REPLACED)
                {
                    return gone; // no .swap file made: an abandoned run leaves .cleaned files only
                }
                cleaned.prepareSwap(); // renames only, after the check
                cleaned.commit();
                committed = true;
                try
                {
                    for (final Segment s : run)
                    {
                        s.deleteFiles(); // the mappings and channels stay for readers until the delay passed
                    }
                    cleaned.completeSwap();
                    fresh = open(cleaned.bases());
                }
                catch (final IOException | RuntimeException ex)
                {
                    failed = true;
                    // the old segments stay in the list, read through their mappings; their files are deleted once
                    // (Segment.deleteFiles), so retention cannot reach the new ones by those names; the open completes it
                    LOG.error("{}: segment replacement from {} failed after its commit; the next open completes it", log,
                        run[0].baseOffset, ex);
                    throw ex;
                }
                segments.replace(run, fresh);
            }
            finally
            {
                segments.unlock();
            }
            for (final Segment s : run)
            {
                env.closeLater(s, log.config().fileDeleteDelayMs);
            }
            DurableFile.fsyncDirectory(log.dir());
            return REPLACED;
        }
        finally
        {
            if (!committed && !cleaned.abandon())
            {
                failed = true; // a leftover .cleaned would make the open take a later committed swap for uncommitted
                LOG.error("{}: an abandoned segment replacement from {} left files; no replacement until the log is reopened",
                    log, run[0].baseOffset);
            }
        }
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
                    // the batch as read (its CRC checked above, in a read-only mapping), or one the rewriter made
                    check(out, out.buffer() == s.log.view() && out.offset() == p, base, last, cleaned.lastWritten());
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
     * What the rewriter answered: a batch it built itself is checked whole, its CRC included — a cleaner's bug must
     * not write a batch consumers (which check CRCs) and the next unclean open (which cuts the segment there) reject.
     */
    private static void check(final RecordBatch out, final boolean asRead, final long base, final long last,
        final long lastWritten)
    {
        final int available = out.buffer().capacity() - out.offset();
        final int checked = asRead ? out.checkFrame(available) : out.check(available);
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
    private static ByteBuffer abortedTxns(final Segment[] run) throws IOException
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
