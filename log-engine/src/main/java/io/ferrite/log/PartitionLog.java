package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.EpochClock;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The log of one partition: an ordered list of {@link Segment}s in {@code <log.dirs>/<topic>-<partition>/}.
 *
 * <p><b>Threading.</b> Single writer: one thread appends and claims, recorded by its first append
 * or claim (or {@link #claimWriter}) and checked by an {@code assert} that only compares; any
 * number of threads read. A {@link #close} from another thread waits for an append in progress or
 * an open claim to end, and an append or claim that starts after it began answers LOG_CLOSED
 * ({@link WriterGate}); it never unmaps under a reader (the mappings are the GC's), and a read
 * that a close overtook throws {@link LogClosedException}. Offsets and segment sizes are published with release semantics after
 * the bytes, so readers never see a partial batch. The segment list is copy-on-write; the writer
 * (roll) and the retention task change it under a lock that readers never take.
 *
 * <p><b>Append</b> takes one RecordBatch v2 in a mutable (normally off-heap) buffer, checks it as
 * Kafka's validator does, assigns offsets by patching the base offset (and partition leader epoch)
 * in place, and copies the bytes to the active segment. The CRC is rewritten only for
 * LogAppendTime. Nothing allocates on this path. An in-process writer can instead
 * {@link #claim} room at the end of the log, build its batch there (in the mapping itself with the
 * mapped strategy) and {@link #commit} it: no copy, and no second pass over bytes it built itself.
 *
 * <p><b>Inside</b>, as Kafka splits {@code UnifiedLog} from {@code LocalLog}, this is a facade over
 * one owner per concern: {@link LogOffsets} (log end, log start, high watermark, durable offset,
 * recovery point), {@link SegmentList} (the segments and their lock), {@link LogAppender} (append,
 * claim, commit: the writer's state and its {@link WriterGate}), {@link SegmentRoller},
 * {@link LogFlusher}, {@link LogReader}, {@link LogRetention}, {@link LogCloser} and
 * {@link LogTransactions} (markers, producer state, the last stable offset). Each is a
 * {@code final} field of a final class, so the calls through this facade are static and inlined:
 * the split costs the hot path no lock, no allocation and no megamorphic call.
 */
public final class PartitionLog implements AutoCloseable
{
    /** {@link #read} status: the offset is below the log start or above the log end. */
    public static final int OFFSET_OUT_OF_RANGE = -1;
    public static final int READ_OK = 0;
    /** {@link #readBatch} result: no batch below the bound at that offset yet. */
    public static final int NO_BATCH = 1;
    /**
     * {@link LogTransactions#collectAbortedTransactions} status: a transaction index could not be read (an I/O error,
     * or a segment retention deleted and closed under a read that outlasted {@code file.delete.delay.ms}).
     */
    public static final int READ_FAILED = -2;

    private final String topic;
    private final int partition;
    /** Its directory: renamed once, when the partition is deleted ({@link #movedTo}). */
    private volatile Path dir;
    private volatile LogConfig config;
    private final ProducerStateManager producers;
    private final LogEpochs epochs;
    private final RollSnapshots rollSnapshots = new RollSnapshots();

    private final LogOffsets offsets = new LogOffsets();
    private final SegmentList segments = new SegmentList();
    private final LogFlusher flusher;
    private final LogAppender appender;
    private final LogReader reader;
    private final LogRetention retention;
    private final RetentionRoll retentionRoll;
    private final LogCloser closer;
    private final LogTransactions transactions;
    private final SegmentReplacer replacer;
    private final LogTruncation truncation;

    PartitionLog(final String topic, final int partition, final Path dir, final LogConfig config, final WriteStrategy strategy,
        final EpochClock clock, final LogEnvironment env, final ProducerStateManager producers, final LogEpochs epochs)
    {
        this.topic = topic;
        this.partition = partition;
        this.dir = dir;
        this.config = config;
        this.producers = producers;
        this.epochs = epochs;
        final BatchValidator validator = new BatchValidator(topic + "-" + partition, clock, config.maxDecompressedMessageBytes);
        final SegmentRoller roller = new SegmentRoller(this, strategy, segments, producers, rollSnapshots, validator, env);
        this.flusher = new LogFlusher(this, offsets, segments, clock, env, epochs);
        this.appender = new LogAppender(this, offsets, segments, roller, flusher, producers, validator, strategy, epochs);
        this.reader = new LogReader(this, offsets, segments);
        this.retention = new LogRetention(this, offsets, segments, clock, env, epochs, flusher);
        this.retentionRoll = new RetentionRoll(this, segments, offsets, appender.gate(), roller, clock, env);
        this.closer = new LogCloser(this, segments, appender, flusher, producers, env);
        this.transactions = new LogTransactions(offsets, appender, reader, producers, clock, env.producerIdExpirationMs());
        this.replacer = new SegmentReplacer(this, segments, strategy, clock, env, flusher);
        this.truncation = new LogTruncation(this, offsets, segments, appender, flusher, producers, epochs, strategy, clock, env,
            replacer);
    }

    /**
     * Sets the state recovery found, once, before the log is shared. {@code namesDurable}: the segments' file names are
     * known durable (a clean stop's close flushed the directory, or the creation fsyncs it); else the first flush does.
     */
    void loaded(final Segment[] segments, final long logStartOffset, final long logEndOffset, final long recoveryPoint,
        final boolean namesDurable)
    {
        this.segments.loaded(segments);
        offsets.loaded(logStartOffset, logEndOffset, recoveryPoint);
        flusher.namesDurableWith(namesDurable ? segments[segments.length - 1] : null);
    }

    public String topic()
    {
        return topic;
    }

    public int partition()
    {
        return partition;
    }

    /** The partition's directory: {@code <topic>-<partition>}, or the {@code -delete} name a deletion renamed it to. */
    public Path dir()
    {
        return dir;
    }

    /** Renamed by the partition's deletion ({@link #closeForDeletion}): never the old path again, a new log's by then. */
    void movedTo(final Path renamed)
    {
        producers.movedTo(renamed);
        this.dir = renamed;
    }

    public LogConfig config()
    {
        return config;
    }

    void updateConfig(final LogConfig newConfig)
    {
        this.config = newConfig;
    }

    // ---- offsets ----

    /** The offset the next append gets (acquire). */
    public long logEndOffset()
    {
        return offsets.logEndOffset();
    }

    public long logStartOffset()
    {
        return offsets.logStartOffset();
    }

    /** Appends at or above this offset may still be lost in a crash of the machine (fsync durability). */
    public long durableOffset()
    {
        return offsets.durableOffset();
    }

    /** The first fsync that failed (no more appends: what was not durable then never will be; a restart recovers), or null. */
    public Throwable fsyncFailure()
    {
        return flusher.fsyncFailure();
    }

    public long recoveryPoint()
    {
        return offsets.recoveryPoint();
    }

    /** Set by the owner (the broker: the log end on one node, or what replication agrees). */
    public long highWatermark()
    {
        return offsets.highWatermark();
    }

    /** The owner's store of the high watermark, the only one after the load ({@link LogOffsets#highWatermark(long)}). */
    public void highWatermark(final long offset)
    {
        offsets.highWatermark(offset);
    }

    /**
     * The transaction surface, its one home: markers (single writer, as {@link #append}), producer state, the last
     * stable offset and the aborted transactions of a fetch (any thread; allocates nothing).
     */
    public LogTransactions transactions()
    {
        return transactions;
    }

    // ---- segments ----

    /** A log cleaner's: replacing runs of inactive segments by cleaned ones ({@link SegmentReplacer}). */
    public SegmentReplacer segmentReplacer()
    {
        return replacer;
    }

    public int segmentCount()
    {
        return segments.count();
    }

    public long sizeInBytes()
    {
        return segments.sizeInBytes();
    }

    Segment[] segments()
    {
        return segments.array();
    }

    /** @throws LogClosedException when the log is closed */
    void checkOpen()
    {
        segments.checkOpen();
    }

    /** Appends that allocated disk blocks themselves, the preallocator behind (mapped strategy): each a latency spike. */
    public long allocationStalls()
    {
        return segments.active().log.stalls();
    }

    /** Allocates the active segment's next blocks ahead of the writer (mapped strategy): the preallocator's, an idle writer's. */
    public void preallocate()
    {
        segments.preallocateActive();
    }

    /** The preallocator's: {@link Segment#makeIndexFilesAhead}; returns the files made. */
    int makeIndexFilesAhead()
    {
        return segments.makeIndexFilesAhead();
    }

    // ---- the writer ----

    /**
     * Becoming leader at {@code epoch} (single writer): stamped on appended batches, assigned at the log end
     * ({@link BatchPlacer#leaderEpoch}).
     */
    public void leaderEpoch(final int epoch)
    {
        appender.leaderEpoch(epoch);
    }

    /** The leader-epoch cache (KIP-101): OffsetForLeaderEpoch's answers, a follower's truncation point ({@link LogEpochs}). */
    public io.ferrite.log.epoch.LeaderEpochCache leaderEpochCache()
    {
        return epochs.cache();
    }

    /**
     * The epoch the writer stamps on what it appends: the one it became leader at, else (a single node) the newest epoch
     * of the log when it was opened, 0 for a log that never had one ({@link LogEpochs}). Any thread, one volatile read.
     */
    public int leaderEpoch()
    {
        return epochs.current();
    }

    /** OffsetForLeaderEpoch's answer for {@code requested}, as the leader at {@link #leaderEpoch()} gives it (allocates nothing). */
    public io.ferrite.log.epoch.LeaderEpochCache.EpochOffset endOffsetForEpoch(final int requested,
        final io.ferrite.log.epoch.LeaderEpochCache.EpochOffset out)
    {
        return epochs.endOffsetFor(requested, logEndOffset(), out); // the log end first: an epoch assigned after ends no later
    }

    /** The leader epoch {@code offset} was written in (Kafka's {@code epochForOffset}), -1 below the first epoch known. */
    public int epochForOffset(final long offset)
    {
        return epochs.epochForOffset(offset, logEndOffset());
    }

    /** Hands the single-writer role to the calling thread (a log moving between threads); a claim left open is aborted. */
    public void claimWriter()
    {
        appender.claimWriter();
    }

    /** Appends one batch (single writer); on success the buffer holds it as written (offsets, epoch, LogAppendTime, CRC). */
    public void append(final MutableDirectBuffer buffer, final int offset, final int length, final AppendResult result)
    {
        appender.append(buffer, offset, length, LogTransactions.VERIFICATION_NOT_REQUIRED, result);
    }

    /**
     * A follower's append (single writer, as {@link #append}): the leader's batches, whole, from {@code offset},
     * kept as the leader wrote them ({@link FollowerAppender}); {@code leaderEpoch} is the follower's current one.
     */
    public void appendAsFollower(final MutableDirectBuffer buffer, final int offset, final int length, final int leaderEpoch,
        final AppendResult result)
    {
        appender.follower().append(buffer, offset, length, leaderEpoch, result);
    }

    /**
     * A follower's truncation to {@code targetOffset} (single writer, as {@link #appendAsFollower}), Kafka's
     * {@code UnifiedLog.truncateTo} ({@link LogTruncation#truncateTo}). Returns whether anything was removed.
     */
    public boolean truncateTo(final long targetOffset) throws IOException
    {
        return truncation.truncateTo(targetOffset);
    }

    /** For tests: the truncation's seams. */
    LogTruncation truncation()
    {
        return truncation;
    }

    /** Every segment deleted and the log restarted, empty, at {@code newOffset} (single writer; {@link LogTruncation}). */
    public void truncateFullyAndStartAt(final long newOffset) throws IOException
    {
        truncation.truncateFullyAndStartAt(newOffset);
    }

    /**
     * Claims room for one batch of at most {@code maxLength} bytes at the end of the log, for the
     * writer to build in place and then {@link #commit} or {@link #abort} (see {@link BatchClaim}).
     * Rolls the segment first when the room would not fit in it. Nothing may be appended or claimed
     * while the claim is open.
     *
     * @return whether the claim is open; if not, {@code result} says why (too large, storage error,
     *     closed)
     * @throws IllegalStateException when a claim is already open on this log or {@code claim} is open
     */
    public boolean claim(final int maxLength, final BatchClaim claim, final AppendResult result)
    {
        return appender.claim(maxLength, claim, result);
    }

    /**
     * Appends the batch built in {@code claim}'s buffer, {@code length} bytes from index 0, and
     * closes the claim whatever the outcome (on failure as {@link #abort} does). Trusted as this process's own
     * work: checked as {@link #append} checks, but for its CRC and (mostly) its records ({@link BatchClaim}).
     */
    public void commit(final BatchClaim claim, final int length, final AppendResult result)
    {
        appender.commit(claim, length, result);
    }

    /** Gives the claimed room back: nothing of it is published, and in the mapping it is zeroed. */
    public void abort(final BatchClaim claim)
    {
        appender.abort(claim);
    }

    // ---- durability ----

    /**
     * Fsyncs everything appended so far (from a flushing thread, not the writer), moves the durable
     * offset and the recovery point, and tells the durability listener. Flushes of one log are
     * serialised (the group committer, a rolled segment's background flush and close may meet), so
     * the listener sees durable offsets in order, from one thread at a time.
     */
    void flush() throws IOException
    {
        flusher.flush();
    }

    /** A roll's background flush, first: {@link RollSnapshots#forceAll}. */
    void forceRolledSnapshots() throws IOException
    {
        rollSnapshots.forceAll();
    }

    /** {@link #flush()}, or with {@code rolled} {@link LogFlusher#flushRolled}, for background callers: a deleted segment is no error. */
    void flushQuietly(final boolean rolled)
    {
        flusher.flushQuietly(rolled);
    }

    /** Whether flush.ms has passed since the last flush with appends not yet flushed. */
    boolean flushDue(final long nowMs)
    {
        return flusher.flushDue(nowMs);
    }

    /** Blocks until an fsync covers {@code offset} (exclusive) or the timeout passes (embedded, fsync durability): covered? */
    public boolean awaitDurable(final long offset, final long timeoutMs) throws InterruptedException
    {
        return flusher.awaitDurable(offset, timeoutMs);
    }

    // ---- reads ----

    /**
     * Finds whole batches from the one holding {@code startOffset} (or the first after it, in a gap
     * damage left): at most {@code maxBytes} (but at least one batch when {@code minOneBatch}), none
     * with an offset at or above {@code maxOffset} (the high watermark or last stable offset). Safe
     * from any thread; allocates nothing.
     *
     * @return {@link #READ_OK} (the region may be empty) or {@link #OFFSET_OUT_OF_RANGE}
     * @throws LogClosedException when the log is closed, or its close overtook the read (the
     *     region's channel may be shut); a read racing a close never touches unmapped memory
     */
    public int read(final long startOffset, final int maxBytes, final long maxOffset, final boolean minOneBatch, final FileRegion out)
    {
        return reader.read(startOffset, maxBytes, maxOffset, minOneBatch, out);
    }

    /**
     * Wraps {@code batch} around the whole batch holding {@code offset} (the first batch after it when
     * damage left a gap there), in place in its segment's mapping: no copy and no system call — the read of an
     * in-process tailer. Its frame is checked, its CRC is the caller's to check. The bytes stay valid while the segment
     * exists and for {@code file.delete.delay.ms} after retention (or a deletion, or truncation) takes it out. Safe
     * from any thread; allocates nothing.
     *
     * @param maxOffset the bound (the high watermark for a reader that must see only committed data)
     * @return {@link #READ_OK}, {@link #NO_BATCH} (nothing at that offset below the bound yet) or {@link #OFFSET_OUT_OF_RANGE}
     * @throws LogClosedException when the log is closed (a batch wrapped before it stays readable: the GC unmaps)
     */
    public int readBatch(final long offset, final long maxOffset, final RecordBatch batch)
    {
        return reader.readBatch(offset, maxOffset, batch);
    }

    /**
     * ListOffsets by timestamp, as Kafka answers it: the first record whose timestamp is at least
     * {@code timestamp}, found through the time index and the first batch whose max timestamp reaches
     * it, its records read without the CRC as Kafka reads them (damage: {@link LogReader}). Not for the hot path (may decompress).
     *
     * @throws LogClosedException when the log is closed
     */
    public TimestampOffset offsetForTimestamp(final long timestamp, final TimestampOffset out)
    {
        return reader.offsetForTimestamp(timestamp, out);
    }

    /** ListOffsets MAX_TIMESTAMP: the largest timestamp in the log and its first record's offset ({@link LogClosedException}: closed). */
    public TimestampOffset maxTimestampOffset(final TimestampOffset out)
    {
        return reader.maxTimestampOffset(out);
    }

    // ---- retention ----

    /**
     * Deletes whole segments past retention.ms or beyond retention.bytes, or wholly below the log start offset, and
     * wholly below the high watermark; moves the log start offset to the first kept one. A nonempty active segment
     * that would go too is rolled by the writer first ({@link #retentionRoll()}) and goes in the pass after.
     *
     * @return the number of segments deleted
     */
    public int deleteOldSegments(final long nowMs) throws IOException
    {
        return retention.deleteOldSegments(nowMs);
    }

    /** The writer's roll of an active segment past retention ({@link RetentionRoll}). */
    public RetentionRoll retentionRoll()
    {
        return retentionRoll;
    }

    /**
     * DeleteRecords: makes {@code offset} the log start offset (it may not pass the high watermark) and deletes
     * the segments wholly below it — at the next retention pass when a cleaner thread holds the log now, never beside a clean.
     *
     * @return the new log start offset, or -1 when {@code offset} is above the high watermark
     * @throws LogClosedException when the log is closed (its partition deleted): its start stays
     */
    public long deleteRecordsBefore(final long offset) throws IOException
    {
        return retention.deleteRecordsBefore(offset);
    }

    // ---- lifecycle ----

    public boolean isClosed()
    {
        return segments.isClosed();
    }

    /** Whether a close has begun (it may be waiting for an append or an open claim to end). */
    boolean isClosing()
    {
        return appender.isClosing();
    }

    /** Flushes, trims, closes the files, snapshots producer state ({@link LogCloser#close}). */
    @Override
    public void close() throws IOException
    {
        closer.close(false);
    }

    /** Closes the log to be deleted: nothing flushed, segments unmapped after the delay ({@link LogCloser#close}). */
    void closeForDeletion() throws IOException
    {
        closer.close(true);
    }

    @Override
    public String toString()
    {
        return topic + "-" + partition;
    }
}
