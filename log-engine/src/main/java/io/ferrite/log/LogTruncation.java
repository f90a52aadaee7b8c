package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import org.agrona.concurrent.EpochClock;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * A follower's truncation of its log (KIP-101/279: OffsetForLeaderEpoch found it diverged from the leader's), Kafka's
 * {@code UnifiedLog.truncateTo} and {@code truncateFullyAndStartAt}. Run by the partition's single writer (the log
 * thread, as {@link FollowerAppender}), through the writer's gate: a close waits for it, and it answers
 * {@link LogClosedException} once a close began.
 *
 * <p><b>No file is cut under a reader.</b> Fetches and {@link LogTailer}s read segments through their mappings;
 * shrinking a mapped file under one is a SIGBUS. So nothing is cut in place: the segment holding the target keeps its
 * prefix in a new file, written from its batches ({@link CleanedSegments}, as a cleaner's replacement: indexes built
 * as the writer builds them, the {@code .txnindex} entries of aborted transactions whose marker is kept) and swapped in
 * by renames; segments wholly at or above the target are renamed {@code .deleted}; every segment taken out of the log
 * is retired and closed (unmapped, its files unlinked) only after {@code file.delete.delay.ms}, as retention's. A new
 * empty active segment starts at the target.
 *
 * <p><b>Crash safety.</b> The steps, each leaving a log whose open ({@link SwapRecovery}, {@link LogLoader}) is a prefix
 * of the log before (at least up to the target): the prefix written to {@code .cleaned} files and fsynced (an open
 * deletes them); under the segments lock, the segments at or above the target renamed {@code .deleted}, the last one
 * first (an open deletes them: what is left ends lower, a prefix), and the directory fsynced, so no later step's
 * rename can be durable without them; the swap's commit ({@code .log.cleaned} to {@code .log.swap}: an open completes
 * it, deleting the old segment at that base); the old segment renamed {@code .deleted}, the {@code .swap} files to their
 * final names; the new active segment made; the directory fsynced again. Then the log directory's recovery points and
 * log starts are written at once ({@link LogEnvironment#truncated}, as Kafka's {@code LogManager.truncateTo}): an unclean
 * open must not take a recovery point above the truncation and skip the batches appended there since (their leader
 * epochs with them). Offsets above the target never survive next to
 * a hole below them: every segment above the cut one goes before the cut one changes.
 */
final class LogTruncation
{
    private final PartitionLog log;
    private final LogOffsets offsets;
    private final SegmentList segments;
    private final LogAppender appender;
    private final LogFlusher flusher;
    private final ProducerStateManager producers;
    private final LogEpochs epochs;
    private final WriteStrategy strategy;
    private final EpochClock clock;
    private final LogEnvironment env;
    private final SegmentReplacer replacer;
    private final AppendResult gateResult = new AppendResult();
    /** The writer's: this truncation published its new offsets (the checkpoints must follow, whatever fails next). */
    private boolean published;

    LogTruncation(final PartitionLog log, final LogOffsets offsets, final SegmentList segments, final LogAppender appender,
        final LogFlusher flusher, final ProducerStateManager producers, final LogEpochs epochs, final WriteStrategy strategy,
        final EpochClock clock, final LogEnvironment env, final SegmentReplacer replacer)
    {
        this.replacer = replacer;
        this.log = log;
        this.offsets = offsets;
        this.segments = segments;
        this.appender = appender;
        this.flusher = flusher;
        this.producers = producers;
        this.epochs = epochs;
        this.strategy = strategy;
        this.clock = clock;
        this.env = env;
    }

    /**
     * {@link PartitionLog#truncateTo}: nothing at or above the log end (but the epoch cache trimmed at it); below the
     * log start {@link #truncateFullyAndStartAt}; else every batch with offsets at or above the target goes (a batch
     * across it whole), the log end becomes the target, the other offsets, producer state and leader epochs follow.
     */
    boolean truncateTo(final long target) throws IOException
    {
        if (target < 0)
        {
            throw new IllegalArgumentException("cannot truncate " + log + " to a negative offset " + target);
        }
        published = false;
        try
        {
            return truncateInGate(target);
        }
        finally
        {
            checkpointIfPublished();
        }
    }

    private boolean truncateInGate(final long target) throws IOException
    {
        enterGate();
        boolean paused = false;
        try
        {
            if (target >= offsets.logEndOffset())
            {
                // Kafka 4.4 too: a former leader may have assigned an epoch at the log end and appended nothing under it.
                // Nothing else changes: no clean is stopped (Kafka aborts none here either)
                epochs.cache().truncateFromEnd(offsets.logEndOffset());
                epochs.writeIfChanged(log.dir());
                return false;
            }
            holdOthersOut();
            paused = true;
            if (target < offsets.logStartOffset())
            {
                startAt(target);
            }
            else
            {
                cut(target);
                epochs.cache().truncateFromEnd(target);
                epochs.writeIfChanged(log.dir());
            }
        }
        finally
        {
            exit(paused);
        }
        return true;
    }

    /**
     * After the writer's gate (the write is the whole directory's, under the log manager's checkpoint lock, and needs
     * nothing the gate guards): the directory's recovery points and log starts ({@link LogEnvironment#truncated}) once the
     * new offsets are out — after a later step's failure too (the epoch file's write, the producer state's reload):
     * a recovery point left above the new log end would make an unclean open skip the batches appended there since.
     */
    private void checkpointIfPublished() throws IOException
    {
        if (published)
        {
            published = false;
            env.truncated(log);
        }
    }

    /** See {@link PartitionLog#truncateFullyAndStartAt}. */
    void truncateFullyAndStartAt(final long newOffset) throws IOException
    {
        if (newOffset < 0)
        {
            throw new IllegalArgumentException("cannot start " + log + " at a negative offset " + newOffset);
        }
        published = false;
        try
        {
            startInGate(newOffset);
        }
        finally
        {
            checkpointIfPublished();
        }
    }

    private void startInGate(final long newOffset) throws IOException
    {
        enterGate();
        try
        {
            holdOthersOut();
        }
        catch (final RuntimeException ex)
        {
            appender.gate().endAppend();
            throw ex;
        }
        try
        {
            startAt(newOffset);
        }
        finally
        {
            exit(true);
        }
    }

    /** The writer's entry, as an append's: the writer recorded and checked, no open claim, not closing. */
    private void enterGate()
    {
        if (!appender.beginAppend(gateResult))
        {
            throw new LogClosedException(LogMessages.text("log ", log, " is closed: not truncated"));
        }
    }

    /**
     * The cleaner and replacements out, for a truncation that changes the log (not for a no-op). Kafka's
     * abortAndPauseCleaning: a clean's copy of the producer state (rebuilt in place here, even for a cut inside the
     * active segment) or its replacement must not straddle this.
     */
    private void holdOthersOut()
    {
        env.abortAndPauseCleaning(log);
        replacer.holdForTruncation(); // and a replacement from elsewhere: its .cleaned names would be the prefix's
    }

    private void exit(final boolean paused)
    {
        if (paused)
        {
            replacer.releaseAfterTruncation();
            env.resumeCleaning(log);
        }
        appender.gate().endAppend();
    }

    private void startAt(final long newOffset) throws IOException
    {
        replaceTail(0, null, newOffset, true);
        producers.clear(newOffset);
        ProducerSnapshots.deleteSnapshotsAbove(log.dir(), -1); // all: none describes the new log
        epochs.cache().clear();
        epochs.writeIfChanged(log.dir());
    }

    /**
     * Cuts the log to {@code target} (log start &lt;= target &lt; log end), under the segments lock from the choice of the
     * segment holding it to the publication of the new list: retention and DeleteRecords take that lock to remove
     * segments or move the log start, so none shifts the list under the choice, unmaps a segment the prefix is read
     * from, or moves the log start above the new log end (a DeleteRecords waiting for the lock then finds the lowered
     * high watermark: out of range).
     */
    private void cut(final long target) throws IOException
    {
        segments.lock();
        try
        {
            cutLocked(target);
            reloadProducers(target); // reads the segments: none unmapped by a retention meanwhile
        }
        finally
        {
            segments.unlock();
        }
    }

    private void cutLocked(final long target) throws IOException
    {
        final Segment[] segs = segments.array();
        int holding = segs.length - 1;
        while (holding > 0 && segs[holding].baseOffset >= target)
        {
            holding--; // the last segment with offsets below the target (or the first one)
        }
        final Segment s = segs[holding];
        final int size = s.size();
        final int p = s.baseOffset >= target ? 0 : s.positionOf(target, size); // a batch across the target goes whole
        final int keep = p < 0 ? size : p;
        if (keep == 0)
        {
            replaceTail(holding, null, target, false); // none of it is kept (with the first segment the log start stays)
            return;
        }
        if (keep == size)
        {
            replaceTail(holding + 1, null, target, false); // the cut falls after this segment's last batch
            return;
        }
        final CleanedSegments prefix = writePrefix(s, keep);
        prefixWritten.run();
        replaceTail(holding, prefix, target, false);
    }

    /** Test seam: runs between a reload's snapshot load and its replay. */
    volatile Runnable producersLoaded = () -> { };

    /** Test seam: runs between the prefix's write and its swap, the segments lock held. */
    volatile Runnable prefixWritten = () -> { };

    /**
     * {@code s}'s batches below position {@code keep} into new {@code .cleaned} files (fsynced), with its kept aborted
     * transactions.
     */
    private CleanedSegments writePrefix(final Segment s, final int keep) throws IOException
    {
        final ByteBuffer aborted = SegmentReplacer.abortedTxns(new Segment[] {s});
        if (aborted == null)
        {
            throw new IOException(log + ": the transaction index of segment " + s.baseOffset + " went during a truncation");
        }
        final CleanedSegments prefix = new CleanedSegments(log.dir(), segments, log.config(), clock.time(), aborted);
        boolean written = false;
        try
        {
            final RecordBatch batch = new RecordBatch();
            prefix.start(s.baseOffset);
            for (int p = 0; p < keep; p += batch.sizeInBytes())
            {
                batch.wrap(s.log.view(), p);
                prefix.append(batch);
            }
            prefix.finish(s.log.path().toFile().lastModified());
            written = true;
            return prefix;
        }
        finally
        {
            if (!written)
            {
                prefix.abandon();
            }
        }
    }

    /**
     * Under the segments lock: the segments from index {@code from} on out of the log (renamed {@code .deleted}, the last
     * first, the directory fsynced), {@code prefix} (if any) swapped in for the one at {@code from}, a new empty active
     * segment at {@code newEnd}, the list published, the offsets moved; the segments taken out closed after the delay.
     * A failure before the first rename changes nothing ({@code prefix}'s files are deleted, as an abandoned
     * replacement's); one after it fails the log as a failed fsync does ({@link FsyncFailure}: no more appends, which
     * would go to a segment whose files are renamed), and the next open settles the files (a prefix of the log).
     */
    private void replaceTail(final int from, final CleanedSegments prefix, final long newEnd, final boolean fully)
        throws IOException
    {
        final Segment[] gone;
        boolean renamed = false;
        boolean committed = false;
        segments.lock();
        try
        {
            if (segments.isClosed())
            {
                throw new LogClosedException("log " + log + " is closed: not truncated");
            }
            final Segment[] segs = segments.array();
            if (from >= segs.length)
            {
                throw new IllegalStateException(log + ": a truncation below the log end keeps the active segment whole");
            }
            gone = java.util.Arrays.copyOfRange(segs, from, segs.length);
            for (final Segment s : gone)
            {
                if (s.isRetired() || s.isForDeletion())
                {
                    throw new IOException(log + ": segment " + s.baseOffset + " left the log during its truncation");
                }
            }
            renamed = true;
            for (int i = gone.length - 1; i >= (prefix == null ? 0 : 1); i--)
            {
                SegmentDeletion.renameForDeletion(gone[i], segments);
            }
            fsyncDirectory();
            final List<Segment> fresh = new ArrayList<>(2);
            if (prefix != null)
            {
                prefix.prepareSwap();
                prefix.commit();
                committed = true;
                SegmentDeletion.renameForDeletion(gone[0], segments);
                prefix.completeSwap();
                for (final long base : prefix.bases())
                {
                    fresh.add(SegmentOpener.open(log.dir(), base, log.config(), strategy, false, 0, clock.time(),
                        log.dir().resolve(Segment.fileName(base, TransactionIndex.SUFFIX)).toFile().exists()));
                }
            }
            fresh.add(SegmentOpener.create(log.dir(), newEnd, log.config(), strategy, clock.time()));
            fsyncDirectory();
            flusher.truncated(newEnd, fully, () -> segments.replace(gone, fresh.toArray(new Segment[0])));
            published = true;
        }
        catch (final IOException | RuntimeException ex)
        {
            if (renamed)
            {
                throw flusher.fsyncFailed(ex);
            }
            throw ex;
        }
        finally
        {
            if (prefix != null && !committed)
            {
                prefix.abandon(); // before its commit: the open would delete its .cleaned and .swap files too
            }
            segments.unlock();
        }
        for (final Segment s : gone)
        {
            env.closeLater(s, log.config().fileDeleteDelayMs); // mapped for readers until then; their close unlinks the files
        }
    }

    private void fsyncDirectory() throws IOException
    {
        try (FileChannel dir = FileChannel.open(log.dir(), StandardOpenOption.READ))
        {
            dir.force(true);
        }
    }

    /**
     * Kafka's {@code ProducerStateManager.truncateAndReload} and {@code rebuildProducerState}: snapshots above the target
     * deleted, the newest at or below it (and the high watermark) loaded, the batches after it up to the target replayed
     * (ongoing transactions beyond the target forgotten, so the last stable offset is right again).
     */
    private void reloadProducers(final long target) throws IOException
    {
        // a state rebuilt in place: until the replay re-opens the transactions open below the target, the last stable
        // offset stays at or below both what it was and the target (neither the old nor the new one is lower)
        producers.capLastStableOffset(Math.min(log.transactions().lastStableOffset(), target));
        try
        {
            rebuildProducers(target);
        }
        finally
        {
            producers.capLastStableOffset(Long.MAX_VALUE);
        }
    }

    private void rebuildProducers(final long target) throws IOException
    {
        ProducerSnapshots.deleteSnapshotsAbove(log.dir(), target);
        // a snapshot at or below the (lowered) high watermark, not just the target: every transaction ended above it is
        // replayed and so stays unstable until the high watermark passes its marker (a snapshot keeps no ended ones)
        final long from = Math.min(target, offsets.highWatermark());
        final long snapshot = Math.max(offsets.logStartOffset(),
            producers.loadSnapshot(from, clock.time(), env.producerIdExpirationMs()));
        producersLoaded.run();
        final RecordBatch batch = new RecordBatch();
        for (final Segment s : segments.array())
        {
            final int size = s.size();
            for (int p = s.positionOf(snapshot, size); p >= 0 && p < size; p = s.frameEnd(p, size))
            {
                batch.wrap(s.log.view(), p);
                if (batch.lastOffset() >= snapshot && batch.lastOffset() < target)
                {
                    // with the (lowered) high watermark, as Kafka's rebuild: a transaction ended at or above it stays
                    // unstable until the high watermark passes its marker
                    producers.update(batch, offsets.highWatermark());
                }
            }
        }
        producers.mapEndOffset(target);
    }
}
