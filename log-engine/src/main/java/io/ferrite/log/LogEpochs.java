package io.ferrite.log;

import io.ferrite.log.epoch.LeaderEpochCache;
import io.ferrite.log.epoch.LeaderEpochCheckpoint;
import io.ferrite.wire.record.RecordBatch;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import static io.ferrite.log.epoch.LeaderEpochCache.UNDEFINED_EPOCH;

/**
 * The leader epochs of one partition log: its {@link LeaderEpochCache} and the
 * {@code leader-epoch-checkpoint} that keeps it ({@link LeaderEpochCheckpoint}).
 *
 * <ul>
 *   <li><b>Append</b> ({@link #placed}, from {@link BatchPlacer#published}, where every placed batch
 *       passes — an append, a claim's commit, a marker, and a follower's batch placed with the
 *       leader's offsets): a batch whose partition leader epoch is not the latest assigns
 *       {@code (epoch, baseOffset)}, as Kafka's {@code UnifiedLog.append}; one volatile read and a
 *       compare per batch, arrays made only when the epoch changes. A batch without an epoch
 *       ({@code NO_PARTITION_LEADER_EPOCH}, -1) assigns nothing, as Kafka's segment recovery.</li>
 *   <li><b>The file</b> is written by the flush ({@link LogFlusher}) before it moves the recovery point,
 *       by the close (which flushes), and by a truncation ({@link LogTruncation}, on the writer thread, inside the
 *       writer's gate): an entry below the recovery point is in the file; one above it is in a batch the next unclean
 *       open re-reads.</li>
 *   <li><b>The log start</b> moving (retention, DeleteRecords) moves the first entry up, as Kafka's
 *       {@code truncateFromStart}; the file follows at the next flush.</li>
 *   <li><b>Open</b>: the file read ({@link #open}), then the batches recovery re-reads assign epochs
 *       above the latest ({@link #recovered}, Kafka's {@code LogSegment.recover}), then the entries are
 *       cut to the recovered log end and to the log start ({@link #loaded}). A log with no file — one
 *       written before Ferrite kept one, whose batches carry the epoch 0 the writer stamped — is
 *       rebuilt from every batch's header once ({@link #rebuild}) and written at the next flush.</li>
 *   <li><b>The current epoch</b> ({@link #current}): the one the writer stamps on the batches it appends and the
 *       partition's leader epoch on a single node (Metadata, ListOffsets, the Fetch check). Set when the writer becomes
 *       leader ({@link #becameLeader}, a cluster's controller naming it), else at the open: the newest epoch the log's
 *       file and batches knew, before the entries past the log end were cut (a Kafka leader's {@code (epoch, log end)}
 *       entry with no batch yet is still the epoch it led at), 0 for a log that never had one. A single node keeps it
 *       across its restarts: no other replica can hold divergent records and no zombie leader needs fencing, which
 *       is all a Kafka restart's new epoch is for. {@link #endOffsetFor} answers it as ending at the log end while
 *       no batch carries it yet, as Kafka's leader answers once its makeLeader assigned it there.</li>
 * </ul>
 */
final class LogEpochs
{
    private final LeaderEpochCheckpoint checkpoint;
    private final boolean fromFile;
    /** See the class comment: written at the open (before the log is published) and by the writer, read by any thread. */
    private volatile int current;

    private LogEpochs(final LeaderEpochCache cache, final boolean fromFile)
    {
        this.checkpoint = new LeaderEpochCheckpoint(cache, fromFile);
        this.fromFile = fromFile;
    }

    /** A new partition's: empty, no file yet (the first flush after the first epoch writes it). */
    static LogEpochs empty()
    {
        return new LogEpochs(new LeaderEpochCache(), false);
    }

    /** What {@code dir}'s file holds, or empty when it has none; a damaged file fails the open (Kafka's message). */
    static LogEpochs open(final Path dir) throws IOException
    {
        final LeaderEpochCache read = LeaderEpochCheckpoint.read(dir);
        return read == null ? empty() : new LogEpochs(read, true);
    }

    LeaderEpochCache cache()
    {
        return checkpoint.cache();
    }

    /** Whether the cache came from a file (else an open rebuilds it from the batches). */
    boolean fromFile()
    {
        return fromFile;
    }

    /** The epoch the writer stamps on what it appends, the partition's leader epoch on a single node (any thread). */
    int current()
    {
        return current;
    }

    /**
     * Kafka's {@code endOffsetFor(requested, logEnd)} from the cache, as the leader at {@link #current} answers: while
     * no entry carries it yet (the cache's latest is older or absent), {@code (current, logEnd)} is taken as the last
     * entry — what Kafka's makeLeader would have assigned. Any thread; allocates nothing.
     */
    LeaderEpochCache.EpochOffset endOffsetFor(final int requested, final long logEnd, final LeaderEpochCache.EpochOffset out)
    {
        final int epoch = current;
        final LeaderEpochCache cache = checkpoint.cache();
        final int latest = cache.latestEpoch();
        if (latest >= epoch || requested < 0)
        {
            return cache.endOffsetFor(requested, logEnd, out);
        }
        if (requested >= epoch)
        {
            out.epoch = requested == epoch ? epoch : UNDEFINED_EPOCH;
            out.endOffset = requested == epoch ? logEnd : LeaderEpochCache.UNDEFINED_EPOCH_OFFSET;
            return out;
        }
        cache.endOffsetFor(requested, logEnd, out);
        if (requested >= latest)
        {
            // the latest entry ends where the current epoch starts: at the log end, no batch of it written yet
            out.epoch = latest == UNDEFINED_EPOCH ? requested : latest;
            out.endOffset = logEnd;
        }
        return out;
    }

    /**
     * The epoch of the entry whose range holds {@code offset} (Kafka's {@code epochForOffset}), with {@link #current}
     * from the log end on while no entry carries it; {@link LeaderEpochCache#UNDEFINED_EPOCH} below the first entry.
     */
    int epochForOffset(final long offset, final long logEnd)
    {
        final int epoch = current;
        final LeaderEpochCache cache = checkpoint.cache();
        return cache.latestEpoch() < epoch && offset >= logEnd ? epoch : cache.epochForOffset(offset);
    }

    /** The writer placed {@code batch} at {@code base} (single writer; allocates nothing unless the epoch changes). */
    void placed(final RecordBatch batch, final long base)
    {
        final int epoch = batch.partitionLeaderEpoch();
        if (epoch != checkpoint.cache().latestEpoch() && epoch >= 0)
        {
            checkpoint.cache().assign(epoch, base);
        }
    }

    /** The writer became leader at {@code epoch} with the log ending at {@code logEnd} (see {@link BatchPlacer#leaderEpoch}). */
    void becameLeader(final int epoch, final long logEnd)
    {
        current = epoch;
        if (epoch >= 0)
        {
            checkpoint.cache().assign(epoch, logEnd);
        }
    }

    /** A batch recovery re-read: its epoch assigned when above the latest (Kafka's {@code LogSegment.recover}). */
    void recovered(final RecordBatch batch)
    {
        final int epoch = batch.partitionLeaderEpoch();
        final int latest = checkpoint.cache().latestEpoch();
        if (epoch >= 0 && (latest == UNDEFINED_EPOCH || epoch > latest))
        {
            checkpoint.cache().assign(epoch, batch.baseOffset());
        }
    }

    /** A log with no file: every batch's epoch, from the first segment (headers only, once). */
    void rebuild(final List<Segment> segments)
    {
        final RecordBatch batch = new RecordBatch();
        for (final Segment s : segments)
        {
            final int size = s.size();
            for (int p = 0; p >= 0 && p < size; p = s.frameEnd(p, size))
            {
                batch.wrap(s.log.view(), p);
                recovered(batch);
            }
        }
    }

    /** The open's end: entries past the recovered log end or below the log start go. */
    void loaded(final long logStart, final long logEnd)
    {
        current = Math.max(0, checkpoint.cache().latestEpoch()); // before the cut: see the class comment
        checkpoint.cache().truncateFromEnd(logEnd);
        checkpoint.cache().truncateFromStart(logStart);
    }

    /** The log start moved up to {@code logStart} (retention, DeleteRecords; under the segments lock). */
    void logStartMoved(final long logStart)
    {
        checkpoint.cache().truncateFromStart(logStart);
    }

    /** Writes the file when the cache changed since it was written (the flush, before the recovery point moves). */
    void writeIfChanged(final Path dir) throws IOException
    {
        if (checkpoint.changed())
        {
            checkpoint.writeIfChanged(dir);
        }
    }
}
