package io.ferrite.log;

import io.ferrite.index.CorruptIndexException;
import io.ferrite.wire.record.RecordBatch;
import org.agrona.concurrent.EpochClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Opens a partition's directory. The recovery philosophy, as Kafka's: after a clean shutdown the
 * files are trusted (indexes and the bytes after each segment's last index entry still get a cheap
 * check); otherwise every segment from the one holding the recovery point (the last offset known to
 * be on disk) to the end is scanned — frame, magic, CRC and offset order of each batch — its
 * indexes are rebuilt and it is cut at the first byte that does not check. Recovery time therefore
 * grows with the data not yet flushed, not with the size of the log. Producer state comes from the
 * newest snapshot at or below where recovery starts, plus the batches replayed after it: the open
 * transactions with it (a snapshot entry's current txn first offset, then the transactional
 * batches and markers replayed), the aborted ones the replay ends told to the log's
 * {@link AbortedTxnListener}.
 *
 * <p>Damage costs the damaged bytes only: a segment cut short keeps the segments after it, and the
 * log has a gap of offsets there (a segment's base offset above the end of the one before it), as
 * Kafka's logs may. Reads of an offset in a gap answer with the next batch. (Kafka's own recovery
 * deletes every unflushed segment after one it had to cut; Ferrite does not: a gap is better than a
 * loss.)
 */
final class LogLoader
{
    private static final Logger LOG = LoggerFactory.getLogger(LogLoader.class);

    private LogLoader()
    {
    }

    /**
     * A new partition's log in {@code dir}, a directory just made and empty: its first segment at
     * offset 0 and nothing to list, recover or delete (what {@link #load} would find out with three
     * walks of the directory and a stat per file, per partition).
     */
    static PartitionLog create(final String topic, final int partition, final Path dir, final LogConfig config,
        final WriteStrategy strategy, final EpochClock clock, final LogEnvironment env) throws IOException
    {
        final ProducerStateManager producers = new ProducerStateManager(dir);
        final PartitionLog log = new PartitionLog(topic, partition, dir, config, strategy, clock, env, producers, LogEpochs.empty());
        final Segment first = SegmentOpener.open(dir, 0, config, strategy, true, 0, clock.time(), false);
        producers.clear(0);
        log.loaded(new Segment[] {first}, 0, 0, 0, true); // the creation fsyncs the directory before publishing
        return log;
    }

    static PartitionLog load(
        final String topic, final int partition, final Path dir, final LogConfig config, final WriteStrategy strategy,
        final EpochClock clock, final LogEnvironment env, final boolean cleanShutdown, final long checkpointedRecoveryPoint,
        final long checkpointedLogStart) throws IOException
    {
        return load(topic, partition, dir, config, strategy, clock, env, cleanShutdown, checkpointedRecoveryPoint,
            checkpointedLogStart, AbortedTxnListener.NONE);
    }

    /**
     * {@link #load}, telling {@code abortedTxns} of each aborted transaction whose marker the replay
     * after the producer snapshot or recovery passes (for the {@code .txnindex}); it stays the log's.
     */
    static PartitionLog load(
        final String topic, final int partition, final Path dir, final LogConfig config, final WriteStrategy strategy,
        final EpochClock clock, final LogEnvironment env, final boolean cleanShutdown, final long checkpointedRecoveryPoint,
        final long checkpointedLogStart, final AbortedTxnListener abortedTxns) throws IOException
    {
        Files.createDirectories(dir);
        SwapRecovery.complete(dir); // before anything is listed: a replacement's leftovers settled, as Kafka's loader does
        final Set<Long> txnIndexes = removeStrayFiles(dir);
        final long now = clock.time();
        final long expiryMs = env.producerIdExpirationMs();
        final List<Long> bases = segmentBases(dir);
        final ProducerStateManager producers = new ProducerStateManager(dir);
        final List<Segment> segments = new ArrayList<>();
        final IndexRebuild rebuild = new IndexRebuild(abortedTxns);
        producers.abortedTxnListener(rebuild); // the log's own (abortedTxns) once loaded
        final LogEpochs epochs = LogEpochs.open(dir);
        final PartitionLog log = new PartitionLog(topic, partition, dir, config, strategy, clock, env, producers, epochs);
        if (bases.isEmpty())
        {
            final long start = Math.max(0, checkpointedLogStart);
            final Segment first = SegmentOpener.create(dir, start, config, strategy, now);
            producers.clear(start);
            ProducerSnapshots.deleteSnapshotsAbove(dir, start);
            epochs.loaded(start, start);
            log.loaded(new Segment[] {first}, start, start, start, false); // a file made here: its name not yet durable
            producers.abortedTxnListener(abortedTxns);
            return log;
        }

        final List<Segment> damaged = new ArrayList<>();
        int recoverFrom = recoverFrom(bases, cleanShutdown, checkpointedRecoveryPoint);
        try
        {
            for (int i = 0; i < bases.size(); i++)
            {
                final long base = bases.get(i);
                final boolean last = i == bases.size() - 1;
                if (i >= recoverFrom)
                {
                    // scanned and re-indexed below anyway: the old indexes are not read at all. After an
                    // unclean stop the active segment's are still preallocated, and a check of the
                    // zeros there mapped and touched pages (most of a 48 s start at 1 000 partitions)
                    Files.deleteIfExists(dir.resolve(Segment.fileName(base, Segment.INDEX_SUFFIX)));
                    Files.deleteIfExists(dir.resolve(Segment.fileName(base, Segment.TIME_INDEX_SUFFIX)));
                }
                final boolean indexesMissing = !wholeEntries(dir.resolve(Segment.fileName(base, Segment.INDEX_SUFFIX)), 8) ||
                    !wholeEntries(dir.resolve(Segment.fileName(base, Segment.TIME_INDEX_SUFFIX)), 12);
                final int fileSize = (int)Math.min(Integer.MAX_VALUE, Files.size(dir.resolve(Segment.fileName(base, Segment.LOG_SUFFIX))));
                final Segment s = SegmentOpener.open(dir, base, config, strategy, last, fileSize, now, txnIndexes.contains(base));
                segments.add(s);
                if (i < recoverFrom && (indexesMissing || !indexesSane(s) || !tailIntact(s)))
                {
                    LOG.warn("{}: segment {} has indexes missing or failing the sanity check, or a batch cut short; " +
                        "recovering it", dir.getFileName(), base);
                    damaged.add(s);
                }
            }
            boolean repaired = false;
            for (final Segment s : damaged)
            {
                final int i = segments.indexOf(s);
                if (i == segments.size() - 1)
                {
                    recoverFrom = Math.min(recoverFrom, i); // the active one: the scan also sets it up for appends
                }
                else if (i < recoverFrom)
                {
                    // on its own, not the segments after it: they are not what is damaged. Producer
                    // state is replayed over it afterwards, from what it keeps
                    repair(dir, s, segments.get(i + 1).baseOffset);
                    repaired = true;
                }
            }

            if (!epochs.fromFile())
            {
                epochs.rebuild(segments.subList(0, Math.min(recoverFrom, segments.size()))); // recovery assigns the rest
            }
            final long logEnd;
            if (recoverFrom < segments.size())
            {
                logEnd = recover(dir, segments, recoverFrom, producers, rebuild, now, expiryMs, epochs);
            }
            else
            {
                logEnd = nextOffset(segments.get(segments.size() - 1));
                final long snapshot = producers.loadSnapshot(logEnd, now, expiryMs);
                if (snapshot < logEnd)
                {
                    replay(segments, Math.max(0, snapshot), logEnd, producers, rebuild);
                }
            }
            ProducerSnapshots.deleteSnapshotsAbove(dir, logEnd);
            for (final Segment s : segments)
            {
                s.releaseIndexMappings();
            }
            // never above the log end: a kill after a truncation below the checkpointed start (the segments renamed,
            // the new one made) and before the log-start checkpoint's write leaves start > end on disk
            final long logStart = Math.min(logEnd, Math.max(checkpointedLogStart, segments.get(0).baseOffset));
            epochs.loaded(logStart, logEnd);
            final boolean recovered = recoverFrom < bases.size();
            // after an unclean stop what recovery kept is in the page cache, not proven on disk: the
            // recovery point stays where the checkpoint had it (the next unclean start scans the same
            // bytes again), as Kafka's recovery leaves it, and nothing is fsynced here — an fsync per
            // partition made a start after SIGKILL at 1 000 partitions take 48 s. In fsync durability the
            // high watermark follows the durable offset, so there the kept bytes are fsynced first
            final boolean flushNow = repaired || (recovered && config.fsyncDurability);
            final long recoveryPoint = recovered && !flushNow ?
                Math.min(logEnd, Math.max(logStart, checkpointedRecoveryPoint)) : logEnd;
            // the replay after the snapshot may bring back producers already expired by their timestamps: they stay
            // until the first check, as in Kafka (a retry right after the restart is still recognised as a duplicate)
            // after an unclean stop a name found may be in the page cache only (a roll the kill cut short of its flush)
            log.loaded(segments.toArray(new Segment[0]), logStart, logEnd, recoveryPoint, cleanShutdown);
            if (flushNow)
            {
                log.flush(); // what recovery kept or repaired is now on disk: the recovery point can move to the log end
            }
            producers.abortedTxnListener(abortedTxns); // from here the marker's append writes its entry (BatchPlacer.place)
            return log;
        }
        catch (final IOException | RuntimeException ex)
        {
            for (final Segment s : segments)
            {
                try
                {
                    s.close();
                }
                catch (final IOException suppressed)
                {
                    ex.addSuppressed(suppressed);
                }
            }
            throw ex;
        }
    }

    /**
     * The first segment recovery scans: none after a clean stop, else the one holding the recovery
     * point (the last one at or below it), or the first when the recovery point lies below them all.
     */
    private static int recoverFrom(final List<Long> bases, final boolean cleanShutdown, final long recoveryPoint)
    {
        if (cleanShutdown)
        {
            return bases.size();
        }
        int from = 0;
        for (int i = 0; i < bases.size(); i++)
        {
            if (bases.get(i) <= recoveryPoint)
            {
                from = i;
            }
        }
        return from;
    }

    /** Whether an index file exists and holds whole entries (else it is replaced and rebuilt). */
    private static boolean wholeEntries(final Path file, final int entrySize) throws IOException
    {
        return Files.exists(file) && Files.size(file) % entrySize == 0;
    }

    private static boolean indexesSane(final Segment s)
    {
        try
        {
            s.offsetIndex.sanityCheck();
            s.timeIndex.sanityCheck();
            return lastIndexEntryMatches(s);
        }
        catch (final CorruptIndexException ex)
        {
            return false;
        }
    }

    /** Whether the last offset-index entry points at the batch it names (a cheap check on open). */
    private static boolean lastIndexEntryMatches(final Segment s)
    {
        final int n = s.offsetIndex.entries();
        if (n == 0)
        {
            return true;
        }
        final int p = s.offsetIndex.position(n - 1);
        final long offset = s.baseOffset + s.offsetIndex.relativeOffset(n - 1);
        return s.plausibleBatchAt(p, offset, s.size()) && s.batchLastOffset(p) == offset;
    }

    /**
     * Whether the bytes from the last offset-index entry to the end are whole frames: cheap on open
     * (about {@code index.interval.bytes} of headers per segment), and it finds a segment cut short
     * mid-batch while the log was closed, which the index sanity check does not when every entry
     * lies before the cut.
     */
    private static boolean tailIntact(final Segment s)
    {
        final int size = s.size();
        final int n = s.offsetIndex.entries();
        // the active segment's frames are walked whole: appends go on after its end, so damage before
        // its last index entry would strand every later batch — readers give up at a bad frame and
        // go to the next segment, which the active one does not have (headers only: a few ms per GB)
        int p = n == 0 || s.isActive() ? 0 : s.offsetIndex.position(n - 1);
        while (p >= 0 && p < size)
        {
            p = s.frameEnd(p, size);
        }
        return p == size;
    }

    /** Scans one rolled segment, rebuilds its indexes and cuts it at its first bad byte; the segments after it stay. */
    private static void repair(final Path dir, final Segment s, final long gapsBelow) throws IOException
    {
        final int before = s.size();
        SegmentRecovery.recover(s, s.baseOffset, before, gapsBelow, batch ->
        {
        });
        if (s.size() < before)
        {
            LOG.warn("{}: segment {} cut from {} to {} bytes; the segments after it are kept (a gap of offsets)",
                dir.getFileName(), s.baseOffset, before, s.size());
        }
    }

    /**
     * The listener of a loading log: an ABORT marker that recovery or the replay after the producer
     * snapshot passes is indexed in the segment being walked — the one that holds it, which with
     * overlapping segments (tolerated here) is not always the last one whose base is at or below the
     * marker — unless that index has it already (a segment recovery did not scan keeps its entries:
     * they were fsynced with it), then told to {@code observer}.
     */
    private static final class IndexRebuild implements AbortedTxnListener
    {
        private final AbortedTxnListener observer;
        /** The segment recovery or the replay is walking: set before its first batch. */
        Segment walking;

        IndexRebuild(final AbortedTxnListener observer)
        {
            this.observer = observer;
        }

        @Override
        public void onAbortedTxn(final long producerId, final long firstOffset, final long lastOffset, final long lastStableOffset)
        {
            if (lastOffset > walking.txnIndex.lastOffset())
            {
                try
                {
                    walking.appendAbortedTxn(producerId, firstOffset, lastOffset, lastStableOffset);
                }
                catch (final IOException ex)
                {
                    throw new UncheckedIOException(ex); // the load fails, as for any of its writes
                }
            }
            observer.onAbortedTxn(producerId, firstOffset, lastOffset, lastStableOffset);
        }
    }

    /** Recovers segments from {@code from} to the end, each on its own (a gap between two is kept); returns the log end offset. */
    private static long recover(final Path dir, final List<Segment> segments, final int from, final ProducerStateManager producers,
        final IndexRebuild rebuild, final long now, final long expiryMs, final LogEpochs epochs) throws IOException
    {
        final long start = segments.get(from).baseOffset;
        final long snapshot = producers.loadSnapshot(start, now, expiryMs);
        replay(segments, Math.max(0, snapshot), start, producers, rebuild);
        long next = start;
        for (int i = from; i < segments.size(); i++)
        {
            final Segment s = segments.get(i);
            if (s.baseOffset < next)
            {
                // not made by this log (a segment holds what was appended before the next one was
                // created): both are kept, and reads of the offsets they share go to the later one
                LOG.warn("{}: segment {} starts below the end of the one before it ({})", dir.getFileName(), s.baseOffset, next);
            }
            final int before = s.size();
            final int limit = s.isActive() ? s.log.capacity() : before;
            // its aborted transactions' index is rebuilt from the ABORT markers the scan passes (the
            // load's listener, rebuilding), as Kafka's LogSegment.recover rebuilds it: an entry the crash
            // lost comes back, one left past what the scan keeps goes
            s.txnIndex.truncateTo(s.baseOffset);
            rebuild.walking = s;
            final long gapsBelow = i < segments.size() - 1 ? segments.get(i + 1).baseOffset : -1; // a cleaned segment's gaps
            next = SegmentRecovery.recover(s, s.baseOffset, limit, gapsBelow, batch ->
            {
                producers.update(batch);
                epochs.recovered(batch); // as Kafka's LogSegment.recover
            });
            if (s.size() < before && !s.isActive())
            {
                LOG.warn("{}: segment {} cut from {} to {} bytes; the segments after it are kept (a gap of offsets)",
                    dir.getFileName(), s.baseOffset, before, s.size());
            }
        }
        return next;
    }

    /** Rebuilds producer state from the batches in {@code [from, to)} of segments not being recovered. */
    private static void replay(final List<Segment> segments, final long from, final long to, final ProducerStateManager producers,
        final IndexRebuild rebuild)
    {
        final RecordBatch batch = new RecordBatch();
        for (final Segment s : segments)
        {
            if (s.baseOffset >= to)
            {
                break;
            }
            final int size = s.size();
            rebuild.walking = s;
            for (int p = s.positionOf(from, size); p >= 0 && p < size; p = s.frameEnd(p, size))
            {
                batch.wrap(s.log.view(), p);
                if (batch.lastOffset() >= to)
                {
                    return;
                }
                if (batch.lastOffset() >= from)
                {
                    producers.update(batch);
                }
            }
        }
    }

    /** The offset after the last batch of {@code s} (its base offset when empty), from its index and a short scan. */
    static long nextOffset(final Segment s)
    {
        final int size = s.size();
        int p = s.offsetIndex.lookup(Long.MAX_VALUE);
        long next = s.baseOffset;
        while (p >= 0 && p < size)
        {
            final int end = s.frameEnd(p, size);
            if (end >= 0)
            {
                next = s.batchLastOffset(p) + 1;
            }
            p = end;
        }
        return next;
    }

    static List<Long> segmentBases(final Path dir) throws IOException
    {
        final List<Long> bases = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir))
        {
            files.map(p -> p.getFileName().toString())
                .filter(n -> n.endsWith(Segment.LOG_SUFFIX) && n.length() == 20 + Segment.LOG_SUFFIX.length())
                .forEach(n -> bases.add(Long.parseLong(n.substring(0, 20))));
        }
        bases.sort(Long::compare);
        return bases;
    }

    /**
     * Leftovers of interrupted work: temporary files, and indexes whose log is gone.
     *
     * @return the base offsets of the segments with a transaction index (found in the same listing)
     */
    private static Set<Long> removeStrayFiles(final Path dir) throws IOException
    {
        final Set<Long> txnIndexes = new HashSet<>();
        try (Stream<Path> files = Files.list(dir))
        {
            for (final Path p : (Iterable<Path>)files::iterator)
            {
                final String name = p.getFileName().toString();
                if (name.endsWith(".tmp") || name.endsWith(".deleted") || name.endsWith(".cleaned") || name.endsWith(".swap"))
                {
                    Files.deleteIfExists(p);
                }
                else if ((name.endsWith(Segment.INDEX_SUFFIX) || name.endsWith(Segment.TIME_INDEX_SUFFIX)) &&
                    !Files.exists(dir.resolve(name.substring(0, 20) + Segment.LOG_SUFFIX)))
                {
                    Files.deleteIfExists(p);
                }
                else if (name.endsWith(TransactionIndex.SUFFIX) && name.length() == 20 + TransactionIndex.SUFFIX.length())
                {
                    if (Files.exists(dir.resolve(name.substring(0, 20) + Segment.LOG_SUFFIX)))
                    {
                        txnIndexes.add(Long.parseLong(name.substring(0, 20)));
                    }
                    else
                    {
                        Files.deleteIfExists(p);
                    }
                }
            }
        }
        return txnIndexes;
    }
}
