package io.ferrite.log;

import io.ferrite.wire.compress.Codecs;
import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchDescriptor;
import io.ferrite.wire.record.RecordReader;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.EpochClock;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;

import static io.ferrite.wire.record.RecordBatchDescriptor.*;
import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * The log of one partition: an ordered list of {@link Segment}s in {@code <log.dirs>/<topic>-<partition>/}.
 *
 * <p><b>Threading.</b> Single writer: one thread appends and claims, recorded by its first append
 * or claim (or {@link #claimWriter}) and checked by an {@code assert} that only compares; any
 * number of threads read. A {@link #close} from another thread waits for an append in progress or
 * an open claim to end, and an append or claim that starts after it began answers LOG_CLOSED
 * ({@link WriterGate}). Offsets and segment sizes are published with release semantics after
 * the bytes, so readers never see a partial batch. The segment list is copy-on-write; the writer
 * (roll) and the retention task change it under a lock that readers never take.
 *
 * <p><b>Append</b> takes one RecordBatch v2 in a mutable (normally off-heap) buffer, checks it as
 * Kafka's validator does, assigns offsets by patching the base offset (and partition leader epoch)
 * in place, and copies the bytes to the active segment. The CRC is rewritten only for
 * LogAppendTime. Nothing allocates on this path. An in-process writer can instead
 * {@link #claim} room at the end of the log, build its batch there (in the mapping itself with the
 * mapped strategy) and {@link #commit} it: no copy, and no second pass over bytes it built itself.
 */
public final class PartitionLog implements AutoCloseable
{
    /** {@link #read} status: the offset is below the log start or above the log end. */
    public static final int OFFSET_OUT_OF_RANGE = -1;
    public static final int READ_OK = 0;

    private static final VarHandle LOG_END_OFFSET;
    private static final VarHandle FLUSH_REQUESTED;

    static
    {
        try
        {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            LOG_END_OFFSET = lookup.findVarHandle(PartitionLog.class, "logEndOffset", long.class);
            FLUSH_REQUESTED = lookup.findVarHandle(PartitionLog.class, "flushRequested", int.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final String topic;
    private final int partition;
    private final Path dir;
    private final WriteStrategy strategy;
    private final EpochClock clock;
    private final LogEnvironment env;
    private final ReentrantLock segmentsLock = new ReentrantLock();
    private final Object flushLock = new Object();
    final ProducerStateManager producers;

    private volatile LogConfig config;
    private volatile Segment[] segments;
    @SuppressWarnings("unused") // through LOG_END_OFFSET
    private volatile long logEndOffset;
    private volatile long logStartOffset;
    private volatile long highWatermark;
    private volatile long durableOffset;
    /** Set by the first fsync that failed: the durable offset never moves again (see {@link FsyncFailure}). */
    private final FsyncFailure fsyncFailure = new FsyncFailure();
    private volatile long recoveryPoint;
    private volatile boolean closed;
    @SuppressWarnings("unused") // through FLUSH_REQUESTED
    private volatile int flushRequested;
    private volatile long flushedMessages;
    private volatile long appendedMessages;
    private volatile long lastFlushMs;
    private volatile int durableWaiters;
    /** Sealed segments below this base offset were flushed after they were sealed (under flushLock). */
    private long sealedFlushedBelow = -1;

    // writer state
    /** The writer, and what of its work close() waits for before it unmaps. */
    private final WriterGate gate = new WriterGate();
    private final RecordBatch batch = new RecordBatch();
    private final BatchValidator validator;
    private int leaderEpoch;

    /** No clock reading taken yet for this append: read it only if needed. */
    private static final long UNKNOWN_TIME = Long.MIN_VALUE;

    PartitionLog(final String topic, final int partition, final Path dir, final LogConfig config, final WriteStrategy strategy,
        final EpochClock clock, final LogEnvironment env, final ProducerStateManager producers)
    {
        this.topic = topic;
        this.partition = partition;
        this.dir = dir;
        this.config = config;
        this.strategy = strategy;
        this.clock = clock;
        this.env = env;
        this.producers = producers;
        this.validator = new BatchValidator(topic + "-" + partition, clock, config.maxDecompressedMessageBytes);
        this.lastFlushMs = clock.time();
    }

    /** Sets the state recovery found; called once, before the log is shared. */
    void loaded(final Segment[] segments, final long logStartOffset, final long logEndOffset, final long recoveryPoint)
    {
        this.segments = segments;
        this.logStartOffset = logStartOffset;
        this.recoveryPoint = recoveryPoint;
        this.durableOffset = recoveryPoint;
        this.highWatermark = logEndOffset;
        LOG_END_OFFSET.setRelease(this, logEndOffset);
    }

    public String topic()
    {
        return topic;
    }

    public int partition()
    {
        return partition;
    }

    public Path dir()
    {
        return dir;
    }

    public LogConfig config()
    {
        return config;
    }

    /** The offset the next append gets (acquire). */
    public long logEndOffset()
    {
        return (long)LOG_END_OFFSET.getAcquire(this);
    }

    public long logStartOffset()
    {
        return logStartOffset;
    }

    /** Appends at or above this offset may still be lost in a crash of the machine (fsync durability). */
    public long durableOffset()
    {
        return durableOffset;
    }

    /**
     * Why this log may take no more appends: the first of its fsyncs that failed, or null. Nothing
     * not yet durable when it failed will ever be (the kernel may have dropped those pages); a
     * restart recovers the log from what is on disk.
     */
    public Throwable fsyncFailure()
    {
        return fsyncFailure.cause();
    }

    public long recoveryPoint()
    {
        return recoveryPoint;
    }

    /** Set by the owner (the broker: the log end on one node, or what replication agrees). */
    public long highWatermark()
    {
        return highWatermark;
    }

    public void highWatermark(final long offset)
    {
        this.highWatermark = offset;
    }

    /** The partition leader epoch stamped on appended batches. */
    public void leaderEpoch(final int epoch)
    {
        this.leaderEpoch = epoch;
    }

    public int segmentCount()
    {
        return segments.length;
    }

    public long sizeInBytes()
    {
        long total = 0;
        for (final Segment s : segments)
        {
            total += s.size();
        }
        return total;
    }

    Segment[] segments()
    {
        return segments;
    }

    /**
     * Appends to the active segment that had to allocate disk blocks themselves because the
     * preallocator had not kept ahead (mapped strategy): each is a latency spike.
     */
    public long allocationStalls()
    {
        return segments[segments.length - 1].log.stalls();
    }

    void updateConfig(final LogConfig newConfig)
    {
        this.config = newConfig;
    }

    /**
     * Hands the single-writer role to the calling thread (when a log moves between threads). A claim
     * the previous writer left open is aborted: its writer is gone, and it would hold the log.
     */
    public void claimWriter()
    {
        gate.claimWriter();
        final BatchClaim abandoned = gate.openClaimVolatile();
        if (abandoned != null)
        {
            endClaim(abandoned, true);
        }
    }

    // ------------------------------------------------------------------------------------------
    // append
    // ------------------------------------------------------------------------------------------

    /**
     * Appends one batch (single writer). On success the buffer holds the batch as written: base
     * offset, partition leader epoch and (for LogAppendTime) timestamp type, max timestamp and CRC.
     */
    public void append(final MutableDirectBuffer buffer, final int offset, final int length, final AppendResult result)
    {
        gate.recordWriter();
        assert gate.onWriterThread() : "second writer on " + this + ": " + Thread.currentThread();
        result.reset();
        requireNoOpenClaim();
        if (!gate.beginAppend())
        {
            result.fail(AppendResult.LOG_CLOSED, "log " + this + " is closed");
            return;
        }
        try
        {
            appendChecked(buffer, offset, length, result);
        }
        finally
        {
            gate.endAppend();
        }
    }

    /** The append once close() knows of it: it waits for this to end before it unmaps anything. */
    private void appendChecked(final MutableDirectBuffer buffer, final int offset, final int length, final AppendResult result)
    {
        final LogConfig cfg = config;
        result.logStartOffset = logStartOffset;
        if (length > cfg.maxMessageBytes)
        {
            result.fail(AppendResult.RECORD_TOO_LARGE, validator.tooLarge(length, cfg));
            return;
        }
        batch.wrap(buffer, offset);
        if (!validator.checkBatch(batch, length, cfg, false, result))
        {
            return;
        }
        final long now = validator.readClock();
        if (!validator.checkRecords(batch, cfg, now, result) || !checkProducer(result))
        {
            return;
        }
        place(buffer, offset, length, cfg, now, result);
    }

    // ------------------------------------------------------------------------------------------
    // claim, build in place, commit
    // ------------------------------------------------------------------------------------------

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
        gate.recordWriter();
        assert gate.onWriterThread() : "second writer on " + this + ": " + Thread.currentThread();
        result.reset();
        requireNoOpenClaim();
        if (claim.isOpen())
        {
            throw new IllegalStateException("the claim is still open on " + claim.log);
        }
        // either this claim sees the close coming, or the close waits for it to end (WriterGate)
        if (!gate.beginClaim(claim))
        {
            result.fail(AppendResult.LOG_CLOSED, "log " + this + " is closed");
            return false;
        }
        boolean opened = false;
        try
        {
            opened = openClaim(maxLength, claim, result);
        }
        finally
        {
            if (!opened)
            {
                gate.endClaim(); // refused or thrown (a roll that failed): no claim is left holding the log
            }
        }
        return opened;
    }

    private boolean openClaim(final int maxLength, final BatchClaim claim, final AppendResult result)
    {
        final LogConfig cfg = config;
        result.logStartOffset = logStartOffset;
        if (maxLength < HEADER_LENGTH)
        {
            result.fail(AppendResult.INVALID_RECORD, "A claim of " + maxLength + " bytes cannot hold a record batch (" +
                HEADER_LENGTH + " bytes at least)");
            return false;
        }
        if (maxLength > cfg.maxMessageBytes)
        {
            result.fail(AppendResult.RECORD_TOO_LARGE, validator.tooLarge(maxLength, cfg));
            return false;
        }
        Segment active = segments[segments.length - 1];
        int position = -1;
        if (strategy == WriteStrategy.MAPPED)
        {
            try
            {
                final int size = active.size();
                if (size > 0 && size > cfg.segmentBytes - maxLength)
                {
                    roll((long)LOG_END_OFFSET.getOpaque(this), validator.readClock());
                    active = segments[segments.length - 1];
                }
                position = active.claim(maxLength, claim.buffer);
            }
            catch (final IOException ex)
            {
                result.fail(AppendResult.STORAGE_ERROR, "cannot claim " + maxLength + " bytes in " + this + ": " + ex);
                return false;
            }
        }
        if (position < 0)
        {
            claim.buffer.wrap(claim.scratch(maxLength), 0, maxLength);
            claim.opened(this, null, 0, maxLength);
        }
        else
        {
            claim.opened(this, active, position, maxLength);
        }
        return true;
    }

    /**
     * Appends the batch built in {@code claim}'s buffer, {@code length} bytes from index 0, and
     * closes the claim whatever the outcome (on failure as {@link #abort} does).
     *
     * <p>The batch is trusted as this process's own work: its frame, record count, offsets delta,
     * producer state and timestamps are checked as {@link #append} checks them, but its CRC is not
     * recomputed and its records are not walked when the header shows them within the timestamp
     * window (with the default {@code message.timestamp.before.max.ms}: the batch's max timestamp
     * against the latest clock reading, the clock being read again only when that does not prove
     * it; otherwise, and for the error's record index, every record against a fresh reading). The
     * latest reading stands in for the clock because a wall clock moves forward: one stepped back
     * lets timestamps up to the step further ahead through until it catches up. A batch from
     * elsewhere (a network, a file) goes through {@link #append}.
     */
    public void commit(final BatchClaim claim, final int length, final AppendResult result)
    {
        gate.recordWriter();
        assert gate.onWriterThread() : "second writer on " + this + ": " + Thread.currentThread();
        result.reset();
        requireOpen(claim);
        try
        {
            commitOpen(claim, length, result);
        }
        finally
        {
            if (claim.log == this)
            {
                endClaim(claim, true); // refused, or an exception on the way: given back, zeroed
            }
        }
    }

    /** The claim's commit; it ends the claim only where it publishes the batch (the caller ends it otherwise). */

    private void commitOpen(final BatchClaim claim, final int length, final AppendResult result)
    {
        if (gate.closing())
        {
            result.fail(AppendResult.LOG_CLOSED, "log " + this + " is closed");
            return;
        }
        final LogConfig cfg = config;
        result.logStartOffset = logStartOffset;
        if (length < 0 || length > claim.capacity)
        {
            result.fail(AppendResult.INVALID_RECORD, "A batch of " + length + " bytes in a claim of " + claim.capacity);
            return;
        }
        if (length > cfg.maxMessageBytes)
        {
            result.fail(AppendResult.RECORD_TOO_LARGE, validator.tooLarge(length, cfg));
            return;
        }
        final MutableDirectBuffer buffer = claim.buffer;
        batch.wrap(buffer, 0);
        if (!validator.checkBatch(batch, length, cfg, true, result) || !BatchValidator.checkUncommitted(batch, result) ||
            !validator.checkTrustedTimestamps(batch, cfg, result) || !checkProducer(result))
        {
            return;
        }
        // not checked in production (the point of a claim); a batch changed after build() fails here in tests
        assert batch.isCrcValid() : "the batch in the claim on " + this + " was changed after its CRC was computed";
        final long now = cfg.logAppendTime ? validator.readClock() : UNKNOWN_TIME;
        final Segment active = segments[segments.length - 1];
        final long base = (long)LOG_END_OFFSET.getOpaque(this);
        final long last = base + batch.lastOffsetDelta();
        if (claim.segment == active && !rollDue(cfg, active, length, base, last, batch.maxTimestamp(), now))
        {
            patch(buffer, 0, base, cfg, now, result);
            try
            {
                active.commitClaimed(claim.position, length, last, batch.maxTimestamp());
            }
            catch (final IOException ex)
            {
                result.fail(AppendResult.STORAGE_ERROR, "cannot write to " + this + ": " + ex);
                return;
            }
            claim.segment = null; // published: from here on nothing may zero it
            published(cfg, base, last, result);
            endClaim(claim, false);
            return;
        }
        // built in the claim's own buffer, or a roll is due first: copied in as append copies
        final MutableDirectBuffer copy = claim.scratch(length);
        if (claim.segment != null)
        {
            copy.putBytes(0, buffer, 0, length);
        }
        endClaim(claim, true);
        // from here it is an append: the claim no longer holds close() off, the append's announcement does
        if (!gate.beginAppend())
        {
            result.fail(AppendResult.LOG_CLOSED, "log " + this + " is closed");
            return;
        }
        try
        {
            batch.wrap(copy, 0);
            place(copy, 0, length, cfg, now, result);
        }
        finally
        {
            gate.endAppend();
        }
    }

    /** Gives the claimed room back: nothing of it is published, and in the mapping it is zeroed. */
    public void abort(final BatchClaim claim)
    {
        gate.recordWriter();
        assert gate.onWriterThread() : "second writer on " + this + ": " + Thread.currentThread();
        requireOpen(claim);
        endClaim(claim, true);
    }

    private void requireOpen(final BatchClaim claim)
    {
        if (claim.log != this || gate.openClaim() != claim)
        {
            throw new IllegalStateException("the claim is not open on " + this);
        }
    }

    private void endClaim(final BatchClaim claim, final boolean zero)
    {
        if (zero && claim.segment != null && !closed)
        {
            // a whole batch left past the end must never be taken for one by recovery
            claim.buffer.setMemory(0, claim.capacity, (byte)0);
        }
        gate.endClaim();
        claim.closed();
    }

    private void requireNoOpenClaim()
    {
        if (gate.openClaim() != null)
        {
            throw new IllegalStateException("a claim is open on " + this + ": commit or abort it first");
        }
    }

    // ------------------------------------------------------------------------------------------
    // shared by append and commit
    // ------------------------------------------------------------------------------------------

    /** Assigns offsets, rolls if due, copies the checked batch into the active segment and publishes it. */
    private void place(final MutableDirectBuffer buffer, final int offset, final int length, final LogConfig cfg,
        final long now, final AppendResult result)
    {
        final long base = (long)LOG_END_OFFSET.getOpaque(this);
        final long last = base + batch.lastOffsetDelta();
        final Segment active;
        try
        {
            active = maybeRoll(cfg, length, base, last, batch.maxTimestamp(), now);
        }
        catch (final IOException ex)
        {
            result.fail(AppendResult.STORAGE_ERROR, "cannot roll " + this + ": " + ex);
            return;
        }
        patch(buffer, offset, base, cfg, now, result);
        try
        {
            active.append(buffer, offset, length, last, batch.maxTimestamp());
        }
        catch (final IOException ex)
        {
            result.fail(AppendResult.STORAGE_ERROR, "cannot write to " + this + ": " + ex);
            return;
        }
        published(cfg, base, last, result);
    }

    /** Writes what the log assigns into the batch: base offset, leader epoch and, for LogAppendTime, the time and CRC. */
    private void patch(final MutableDirectBuffer buffer, final int offset, final long base, final LogConfig cfg, final long now,
        final AppendResult result)
    {
        buffer.putLong(offset + BASE_OFFSET_OFFSET, base, BIG_ENDIAN);
        buffer.putInt(offset + PARTITION_LEADER_EPOCH_OFFSET, leaderEpoch, BIG_ENDIAN);
        if (cfg.logAppendTime)
        {
            buffer.putShort(offset + ATTRIBUTES_OFFSET, (short)(batch.attributes() | TIMESTAMP_TYPE_MASK), BIG_ENDIAN);
            buffer.putLong(offset + MAX_TIMESTAMP_OFFSET, now, BIG_ENDIAN);
            buffer.putInt(offset + CRC_OFFSET, batch.computeCrc(), BIG_ENDIAN);
            result.logAppendTime = now;
        }
    }

    /** After the batch's bytes and size are published: producer state, the log end, the result, the flush policy. */
    private void published(final LogConfig cfg, final long base, final long last, final AppendResult result)
    {
        producers.update(batch);
        LOG_END_OFFSET.setRelease(this, last + 1);
        result.firstOffset = base;
        result.lastOffset = last;
        result.status = AppendResult.OK;

        final long appended = appendedMessages + batch.recordCount();
        appendedMessages = appended;
        if (cfg.fsyncDurability || appended - flushedMessages >= cfg.flushMessages)
        {
            requestFlush();
        }
    }

    private boolean checkProducer(final AppendResult result)
    {
        if (batch.producerId() != NO_PRODUCER_ID)
        {
            final int status = producers.check(batch, result);
            if (status != AppendResult.OK)
            {
                result.status = status;
                return false;
            }
        }
        return true;
    }

    /** Rolls first if the batch is due to go in a new segment; returns the segment it goes in. */
    private Segment maybeRoll(final LogConfig cfg, final int length, final long base, final long last, final long maxTimestamp,
        final long now) throws IOException
    {
        final Segment active = segments[segments.length - 1];
        if (!rollDue(cfg, active, length, base, last, maxTimestamp, now))
        {
            return active;
        }
        roll(base, now != UNKNOWN_TIME ? now : validator.readClock());
        return segments[segments.length - 1];
    }

    /**
     * Kafka's roll conditions for a batch about to go in {@code active}: the segment would be too
     * large, its indexes are full, the offsets would overflow its relative offsets, or it is old
     * enough ({@code now} may be {@link #UNKNOWN_TIME}: the clock is read only if the age needs it).
     */
    private boolean rollDue(final LogConfig cfg, final Segment active, final int length, final long base, final long last,
        final long maxTimestamp, final long now)
    {
        final int size = active.size();
        if (size == 0)
        {
            return false;
        }
        if (size > cfg.segmentBytes - length || active.indexesFull() || last - active.baseOffset > Integer.MAX_VALUE)
        {
            return true;
        }
        final long ageNow = now != UNKNOWN_TIME || active.rollsByBatchTimestamps() ? now : validator.readClock();
        return active.timeWaitedForRoll(ageNow, maxTimestamp) > cfg.segmentMs - cfg.segmentJitterMs;
    }

    /** Starts a new active segment at {@code baseOffset} (the log end); the old one is flushed in the background. */
    private void roll(final long baseOffset, final long now) throws IOException
    {
        segmentsLock.lock();
        try
        {
            final Segment[] current = segments;
            final Segment old = current[current.length - 1];
            // what can fail (a full disk) comes before anything that changes the log
            final Segment next = Segment.create(dir, baseOffset, config, strategy, now);
            try
            {
                producers.takeSnapshot();
                old.deactivate();
            }
            catch (final IOException | RuntimeException ex)
            {
                next.deleteFiles();
                next.close();
                throw ex;
            }
            final Segment[] updated = Arrays.copyOf(current, current.length + 1);
            updated[current.length] = next;
            segments = updated;
        }
        finally
        {
            segmentsLock.unlock();
        }
        env.flushInBackground(this);
    }

    /**
     * Allocates the active segment's next blocks ahead of the writer (mapped strategy), so appends
     * never do it: called by the log manager's preallocator thread, or by a writer while idle.
     */
    public void preallocate()
    {
        if (closed)
        {
            return;
        }
        try
        {
            segments[segments.length - 1].preallocate();
        }
        catch (final IOException ignored)
        {
            // the append that needs the space reports it as a storage error
        }
    }

    // ------------------------------------------------------------------------------------------
    // durability
    // ------------------------------------------------------------------------------------------

    private void requestFlush()
    {
        if ((int)FLUSH_REQUESTED.getOpaque(this) == 0 && FLUSH_REQUESTED.compareAndSet(this, 0, 1))
        {
            env.requestFlush(this);
        }
    }

    /**
     * Fsyncs everything appended so far (from a flushing thread, not the writer), moves the durable
     * offset and the recovery point, and tells the durability listener. Flushes of one log are
     * serialised (the group committer, a rolled segment's background flush and close may meet), so
     * the listener sees durable offsets in order, from one thread at a time.
     */
    void flush() throws IOException
    {
        synchronized (flushLock)
        {
            fsyncFailure.throwIfFailed(this);
            FLUSH_REQUESTED.setVolatile(this, 0);
            final long target = logEndOffset();
            final long messages = appendedMessages;
            final Segment[] segs = segments;
            try
            {
                flushSealed(segs);
                segs[segs.length - 1].flush();
            }
            catch (final java.nio.channels.ClosedChannelException deleted)
            {
                throw deleted; // a segment retention deleted meanwhile: not a failed fsync
            }
            catch (final IOException | java.io.UncheckedIOException ex)
            {
                throw fsyncFailure.record(this, ex, env.durabilityListener());
            }
            flushedMessages = messages;
            lastFlushMs = clock.time();
            durableTo(target);
        }
    }

    /**
     * A roll's background flush: fsyncs the sealed segments, not the active one, and moves the
     * durable offset and recovery point to the active segment's base (Kafka flushes up to the new
     * segment's base offset on a roll). Why not the active one: under a writer going flat out its
     * fsync is the longest, and it queued every later background task behind it (retention fell
     * 190 MB behind {@code retention.bytes}); the writer's next pages are the next flush's.
     */
    void flushRolled() throws IOException
    {
        synchronized (flushLock)
        {
            fsyncFailure.throwIfFailed(this);
            final Segment[] segs = segments;
            try
            {
                flushSealed(segs);
            }
            catch (final java.nio.channels.ClosedChannelException deleted)
            {
                throw deleted;
            }
            catch (final IOException | java.io.UncheckedIOException ex)
            {
                throw fsyncFailure.record(this, ex, env.durabilityListener());
            }
            durableTo(segs[segs.length - 1].baseOffset);
        }
    }

    /**
     * Fsyncs the sealed segments not yet flushed since they were sealed (a sealed segment is flushed
     * once — log and indexes — and never changes again), so a flush costs the segments written since
     * the last one, not every segment of the log.
     */
    private void flushSealed(final Segment[] segs) throws IOException
    {
        final long flushedBelow = sealedFlushedBelow;
        int first = segs.length - 1;
        while (first > 0 && segs[first].baseOffset > flushedBelow)
        {
            first--;
        }
        for (int i = first; i < segs.length - 1; i++)
        {
            segs[i].flush();
        }
        sealedFlushedBelow = segs[segs.length - 1].baseOffset;
    }

    private void durableTo(final long target)
    {
        if (target > durableOffset)
        {
            durableOffset = target;
            recoveryPoint = target;
            env.durabilityListener().onDurable(this, target);
            if (durableWaiters > 0)
            {
                synchronized (this)
                {
                    notifyAll();
                }
            }
        }
    }

    /** {@link #flush()} for background callers: a segment deleted meanwhile is not an error. */
    void flushQuietly()
    {
        flushQuietly(false);
    }

    /** {@link #flush()}, or with {@code rolled} {@link #flushRolled()}, for background callers. */
    void flushQuietly(final boolean rolled)
    {
        try
        {
            if (rolled)
            {
                flushRolled();
            }
            else
            {
                flush();
            }
        }
        catch (final java.nio.channels.ClosedChannelException ignored)
        {
            // a segment retention deleted while we flushed; its data is gone on purpose
        }
        catch (final IOException ex)
        {
            if (fsyncFailure.cause() != null)
            {
                return; // logged once where it failed; later flushes of the log all fail the same way
            }
            throw new java.io.UncheckedIOException(ex);
        }
    }

    /** Whether flush.ms has passed since the last flush with appends not yet flushed. */
    boolean flushDue(final long nowMs)
    {
        return appendedMessages != flushedMessages && nowMs - lastFlushMs >= config.flushMs;
    }

    /**
     * Blocks until an fsync covers {@code offset} (exclusive) or the timeout passes: for embedded
     * callers in fsync durability. Returns whether it is covered.
     */
    public boolean awaitDurable(final long offset, final long timeoutMs) throws InterruptedException
    {
        final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        synchronized (this)
        {
            durableWaiters++;
            try
            {
                while (durableOffset < offset)
                {
                    if (fsyncFailure.cause() != null)
                    {
                        return false; // never: see fsyncFailure()
                    }
                    final long left = deadline - System.nanoTime();
                    if (left <= 0)
                    {
                        return false;
                    }
                    wait(Math.max(1, left / 1_000_000L));
                }
                return true;
            }
            finally
            {
                durableWaiters--;
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // reads
    // ------------------------------------------------------------------------------------------

    /**
     * Finds whole batches from the one holding {@code startOffset} (or the first after it, in a gap
     * damage left): at most {@code maxBytes} (but at
     * least one batch when {@code minOneBatch}), none with an offset at or above
     * {@code maxOffset} (the high watermark or last stable offset). Safe from any thread;
     * allocates nothing.
     *
     * @return {@link #READ_OK} (the region may be empty) or {@link #OFFSET_OUT_OF_RANGE}
     */
    public int read(final long startOffset, final int maxBytes, final long maxOffset, final boolean minOneBatch, final FileRegion out)
    {
        final long end = logEndOffset();
        if (startOffset < logStartOffset || startOffset > end)
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
        final Segment[] segs = segments;
        for (int i = floor(segs, startOffset); i < segs.length; i++)
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
                out.position = start;
                out.length = p - start;
                out.firstBatchOffset = seg.batchBaseOffset(start);
                out.nextOffset = next;
            }
            return READ_OK;
        }
        return READ_OK;
    }

    /** {@link #readBatch} result: no batch below the bound at that offset yet. */
    public static final int NO_BATCH = 1;

    /**
     * Wraps {@code batch} around the whole batch holding {@code offset} (the first batch after it when
     * damage left a gap there), in place in its segment's mapping: no copy and no system call — the
     * read of an in-process tailer. The batch's frame is checked, its CRC is the caller's to check.
     * The bytes stay valid while the segment exists and for {@code file.delete.delay.ms} after
     * retention (or the deletion of the partition) deletes it, so a reader must be done with them by
     * then. Safe from any thread; allocates nothing.
     *
     * @param maxOffset the bound (the high watermark for a reader that must see only committed data)
     * @return {@link #READ_OK}, {@link #NO_BATCH} (nothing at that offset below the bound yet) or
     *         {@link #OFFSET_OUT_OF_RANGE}
     */
    public int readBatch(final long offset, final long maxOffset, final RecordBatch batch)
    {
        final long end = logEndOffset();
        if (offset < logStartOffset || offset > end)
        {
            return OFFSET_OUT_OF_RANGE;
        }
        if (offset >= Math.min(maxOffset, end))
        {
            return NO_BATCH;
        }
        final Segment[] segs = segments;
        for (int i = floor(segs, offset); i < segs.length; i++)
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

    /** The index of the last segment whose base offset is at most {@code offset} (0 when none is). */
    static int floor(final Segment[] segs, final long offset)
    {
        int lo = 0;
        int hi = segs.length - 1;
        while (lo < hi)
        {
            final int mid = (lo + hi + 1) >>> 1;
            if (segs[mid].baseOffset <= offset)
            {
                lo = mid;
            }
            else
            {
                hi = mid - 1;
            }
        }
        return lo;
    }

    /**
     * ListOffsets by timestamp, as Kafka answers it: the first record whose timestamp is at least
     * {@code timestamp}, found through the time index and the first batch whose max timestamp reaches
     * it. Not for the hot path (may decompress).
     */
    public TimestampOffset offsetForTimestamp(final long timestamp, final TimestampOffset out)
    {
        out.set(-1, -1);
        final long start = logStartOffset;
        final long end = logEndOffset();
        final RecordReader reader = new RecordReader(new Codecs(), config.maxDecompressedMessageBytes);
        final RecordBatch b = new RecordBatch();
        for (final Segment seg : segments)
        {
            if (seg.maxTimestamp() < timestamp)
            {
                continue;
            }
            final int size = seg.size();
            int p = seg.offsetIndex.lookup(Math.max(start, seg.timeIndex.lookup(timestamp)));
            while (p < size)
            {
                final int batchEnd = seg.frameEnd(p, size);
                if (batchEnd < 0)
                {
                    break; // damage: the rest of this segment cannot be walked
                }
                b.wrap(seg.log.view(), p);
                // a batch failing its CRC is passed over: its records cannot be trusted to decompress
                if (seg.batchMaxTimestamp(p) >= timestamp && seg.batchLastOffset(p) >= start && b.isCrcValid())
                {
                    reader.reset(b);
                    while (reader.hasNext())
                    {
                        final Record r = reader.next();
                        if (r.timestamp() >= timestamp && r.offset() >= start && r.offset() < end)
                        {
                            return out.set(r.timestamp(), r.offset());
                        }
                    }
                }
                p = batchEnd;
            }
        }
        return out;
    }

    /** ListOffsets MAX_TIMESTAMP: the largest timestamp in the log and the offset of its first record. */
    public TimestampOffset maxTimestampOffset(final TimestampOffset out)
    {
        out.set(-1, -1);
        Segment best = null;
        for (final Segment seg : segments)
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
        final RecordBatch b = new RecordBatch().wrap(best.log.view(), p);
        if (!b.isCrcValid())
        {
            return out.set(max, b.lastOffset());
        }
        final RecordReader reader = new RecordReader(new Codecs(), config.maxDecompressedMessageBytes).reset(b);
        while (reader.hasNext())
        {
            final Record r = reader.next();
            if (r.timestamp() == max)
            {
                return out.set(max, r.offset());
            }
        }
        return out.set(max, b.lastOffset());
    }

    // ------------------------------------------------------------------------------------------
    // retention
    // ------------------------------------------------------------------------------------------

    /**
     * Deletes whole segments (never the active one) past retention.ms or beyond retention.bytes,
     * or wholly below the log start offset, and moves the log start offset to the first kept one.
     *
     * @return the number of segments deleted
     */
    public int deleteOldSegments(final long nowMs) throws IOException
    {
        return deleteSegments(nowMs, false);
    }

    private int deleteSegments(final long nowMs, final boolean onlyBelowStart) throws IOException
    {
        final LogConfig cfg = config;
        segmentsLock.lock();
        final Segment[] removed;
        try
        {
            final Segment[] segs = segments;
            long total = 0;
            for (final Segment s : segs)
            {
                total += s.size();
            }
            int n = 0;
            while (n < segs.length - 1)
            {
                final Segment s = segs[n];
                final boolean belowStart = segs[n + 1].baseOffset <= logStartOffset;
                final boolean expired = !onlyBelowStart && cfg.retentionMs >= 0 && nowMs - largestTimestamp(s) > cfg.retentionMs;
                final boolean tooBig = !onlyBelowStart && cfg.retentionBytes >= 0 && total - s.size() >= cfg.retentionBytes;
                if (!(belowStart || expired || tooBig))
                {
                    break;
                }
                total -= s.size();
                n++;
            }
            if (n == 0)
            {
                return 0;
            }
            removed = Arrays.copyOf(segs, n);
            for (final Segment s : removed)
            {
                s.retire(); // before the list without them is published: a tailer on one moves on
            }
            segments = Arrays.copyOfRange(segs, n, segs.length);
            logStartOffset = Math.max(logStartOffset, segments[0].baseOffset);
        }
        finally
        {
            segmentsLock.unlock();
        }
        for (final Segment s : removed)
        {
            s.deleteFiles();
            env.closeLater(s, cfg.fileDeleteDelayMs);
        }
        ProducerStateManager.deleteSnapshotsBelow(dir, logStartOffset);
        return removed.length;
    }

    private static long largestTimestamp(final Segment s)
    {
        final long max = s.maxTimestamp();
        if (max != NO_TIMESTAMP)
        {
            return max;
        }
        return s.log.path().toFile().lastModified();
    }

    /**
     * DeleteRecords: makes {@code offset} the log start offset (it may not pass the high watermark)
     * and deletes the segments wholly below it.
     *
     * @return the new log start offset, or -1 when {@code offset} is above the high watermark
     */
    public long deleteRecordsBefore(final long offset) throws IOException
    {
        if (offset > highWatermark)
        {
            return -1;
        }
        segmentsLock.lock();
        try
        {
            if (offset > logStartOffset)
            {
                logStartOffset = offset;
            }
        }
        finally
        {
            segmentsLock.unlock();
        }
        deleteSegments(clock.time(), true);
        return logStartOffset;
    }

    // ------------------------------------------------------------------------------------------
    // lifecycle
    // ------------------------------------------------------------------------------------------

    public boolean isClosed()
    {
        return closed;
    }

    /** Whether a close has begun (it may be waiting for an append or an open claim to end). */
    boolean isClosing()
    {
        return gate.closing();
    }

    /**
     * Flushes, trims the active segment, closes every file and then snapshots producer state — in
     * that order because trimming gives back the preallocated space a snapshot may need on a full
     * disk. Every step is attempted; the first failure is thrown after all of them (a missing
     * snapshot only lengthens the replay at the next open).
     */
    @Override
    public void close() throws IOException
    {
        close(false);
    }

    /**
     * Closes the log to be deleted: appends and claims answer LOG_CLOSED from now on, and its
     * segments are unmapped only after {@code file.delete.delay.ms}, as retention's are — a fetch or
     * an in-place reader that found the log before it went may still be reading its mappings (an
     * unmapped page under a reader is a SIGSEGV). Nothing is flushed or snapshotted: its files go.
     */
    void closeForDeletion() throws IOException
    {
        close(true);
    }

    private void close(final boolean deleting) throws IOException
    {
        gate.beginClose();
        awaitWriterOut();
        segmentsLock.lock();
        try
        {
            if (closed)
            {
                return;
            }
            closed = true;
            if (deleting)
            {
                for (final Segment s : segments)
                {
                    env.closeLater(s, config.fileDeleteDelayMs);
                }
                return;
            }
            IOException failure = null;
            try
            {
                flush();
            }
            catch (final IOException ex)
            {
                failure = ex;
            }
            for (final Segment s : segments)
            {
                try
                {
                    s.close();
                }
                catch (final IOException ex)
                {
                    failure = failure == null ? ex : failure;
                }
            }
            try
            {
                producers.takeSnapshot();
            }
            catch (final IOException ex)
            {
                failure = failure == null ? ex : failure;
            }
            if (failure != null)
            {
                throw failure;
            }
        }
        finally
        {
            segmentsLock.unlock();
        }
    }

    /**
     * Waits for the writer to leave the mappings before they go: for an append in progress to end
     * (within microseconds; a roll within milliseconds), and for an open claim to end (its writer
     * may be building in one). The writer itself closing its log aborts its claim. Gives up after
     * {@link #CLOSE_WAIT_MS}, closing nothing: a writer that never ends its claim (or an append
     * stuck on a failing disk) keeps the log open rather than crash on an unmapped page; appends
     * and claims answer LOG_CLOSED from then on all the same.
     */
    private void awaitWriterOut() throws IOException
    {
        final BatchClaim open = gate.openClaimVolatile();
        if (open != null && gate.onWriterThread())
        {
            endClaim(open, true);
        }
        if (!gate.awaitWriterOut(System.nanoTime() + CLOSE_WAIT_MS * 1_000_000L))
        {
            throw new IOException("log " + this + " still has " + (gate.openClaimVolatile() != null ? "a claim open" :
                "an append in progress") + " after " + CLOSE_WAIT_MS + " ms: its writer must end it before the log can close");
        }
    }

    private static final long CLOSE_WAIT_MS = 10_000;

    @Override
    public String toString()
    {
        return topic + "-" + partition;
    }
}
