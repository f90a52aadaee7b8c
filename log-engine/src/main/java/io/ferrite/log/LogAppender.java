package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import org.agrona.MutableDirectBuffer;

import java.io.IOException;

import static io.ferrite.log.SegmentRoller.UNKNOWN_TIME;
import static io.ferrite.wire.record.RecordBatchDescriptor.*;

/**
 * The writer side of one partition log: append, claim/commit/abort, transaction markers — each
 * checked here, then placed at the log end by the {@link BatchPlacer} they share. Owns the writer's
 * state (the batch flyweight, the marker builder) and the {@link WriterGate} that tells close() what
 * of the writer's work to wait for.
 *
 * <p>Single writer; see {@link PartitionLog}. Nothing here allocates, locks or blocks, except a roll.
 */
final class LogAppender
{
    private final PartitionLog log;
    private final LogOffsets offsets;
    private final SegmentList segments;
    private final SegmentRoller roller;
    private final LogFlusher flusher;
    private final ProducerStateManager producers;
    private final BatchValidator validator;
    private final WriteStrategy strategy;
    /** The writer, and what of its work close() waits for before it unmaps. */
    private final WriterGate gate = new WriterGate();
    private final RecordBatch batch = new RecordBatch();
    /** Made at the first marker. */
    private MarkerBatch markers;
    private final BatchPlacer placer;
    private final FollowerAppender follower;

    LogAppender(final PartitionLog log, final LogOffsets offsets, final SegmentList segments, final SegmentRoller roller,
        final LogFlusher flusher, final ProducerStateManager producers, final BatchValidator validator,
        final WriteStrategy strategy, final LogEpochs epochs)
    {
        this.log = log;
        this.offsets = offsets;
        this.segments = segments;
        this.roller = roller;
        this.flusher = flusher;
        this.producers = producers;
        this.validator = validator;
        this.strategy = strategy;
        this.placer = new BatchPlacer(log, offsets, roller, flusher, producers, batch, epochs);
        this.follower = new FollowerAppender(log, this, offsets, producers, placer, segments, roller);
    }

    /** A follower's append of its leader's batches, through this writer's gate and placer. */
    FollowerAppender follower()
    {
        return follower;
    }

    void leaderEpoch(final int epoch)
    {
        gate.recordWriter();
        assert gate.onWriterThread() : LogMessages.secondWriter(log);
        placer.leaderEpoch(epoch);
    }

    /** See {@link PartitionLog#claimWriter}. */
    void claimWriter()
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

    /** See {@link PartitionLog#append} and {@link LogTransactions#append}. */
    void append(final MutableDirectBuffer buffer, final int offset, final int length, final long verification,
        final AppendResult result)
    {
        if (!beginAppend(result))
        {
            return;
        }
        try
        {
            appendChecked(buffer, offset, length, verification, result, false);
        }
        finally
        {
            gate.endAppend();
        }
    }

    /** See {@link LogTransactions#appendAsCoordinator}. */
    void appendAsCoordinator(final MutableDirectBuffer buffer, final int offset, final int length, final AppendResult result)
    {
        if (!beginAppend(result))
        {
            return;
        }
        try
        {
            appendChecked(buffer, offset, length, LogTransactions.VERIFICATION_NOT_REQUIRED, result, true);
        }
        finally
        {
            gate.endAppend();
        }
    }

    /** The gate close() waits on: writer-only work outside the append path ({@link LogTransactions#removeExpiredProducers}) enters it too. */
    WriterGate gate()
    {
        return gate;
    }

    /** The writer's entry to an append or a marker: false (the result says why) when the log is closing. */
    boolean beginAppend(final AppendResult result)
    {
        gate.recordWriter();
        assert gate.onWriterThread() : LogMessages.secondWriter(log);
        result.reset();
        requireNoOpenClaim();
        if (!gate.beginAppend())
        {
            result.fail(AppendResult.LOG_CLOSED, LogMessages.closed(log));
            return false;
        }
        return true;
    }

    /** See {@link LogTransactions#appendMarker}. */
    void appendMarker(final long producerId, final short producerEpoch, final int coordinatorEpoch, final boolean commit,
        final boolean epochBump, final AppendResult result)
    {
        if (!beginAppend(result))
        {
            return;
        }
        try
        {
            if (fsyncFailed(result))
            {
                return;
            }
            result.logStartOffset = offsets.logStartOffset();
            final int status = producers.checkMarker(producerId, producerEpoch, coordinatorEpoch, epochBump,
                offsets.logEndOffsetOpaque(), result);
            if (status != AppendResult.OK)
            {
                result.status = status;
                return;
            }
            if (markers == null)
            {
                markers = new MarkerBatch();
            }
            final long now = validator.readClock();
            final int length = markers.build(producerId, producerEpoch, coordinatorEpoch, commit, now);
            batch.wrap(markers.buffer, 0);
            // an ABORT that ends an open transaction is indexed before its bytes are placed (see place)
            placer.place(markers.buffer, 0, length, log.config(), now, commit ? NO_PRODUCER_ID : producerId, result);
        }
        finally
        {
            gate.endAppend();
        }
    }

    /** Every writer, the broker's log threads and the group coordinator alike, stops at a failed fsync (see PartitionLog.fsyncFailure). */
    boolean fsyncFailed(final AppendResult result)
    {
        if (flusher.fsyncFailure() != null)
        {
            result.fail(AppendResult.STORAGE_ERROR, LogMessages.fsyncFailed(log, flusher.fsyncFailure()));
            return true;
        }
        return false;
    }

    /** The append once close() knows of it: it waits for this to end before it unmaps anything. */
    private void appendChecked(final MutableDirectBuffer buffer, final int offset, final int length, final long verification,
        final AppendResult result, final boolean coordinator)
    {
        if (fsyncFailed(result))
        {
            return;
        }
        final LogConfig cfg = log.config();
        result.logStartOffset = offsets.logStartOffset();
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
        if (!validator.checkRecords(batch, cfg, now, result) || !checkProducer(verification, now, result, coordinator))
        {
            return;
        }
        placer.place(buffer, offset, length, cfg, now, NO_PRODUCER_ID, result);
    }

    // ------------------------------------------------------------------------------------------
    // claim, build in place, commit
    // ------------------------------------------------------------------------------------------

    /** See {@link PartitionLog#claim}. */
    boolean claim(final int maxLength, final BatchClaim claim, final AppendResult result)
    {
        gate.recordWriter();
        assert gate.onWriterThread() : LogMessages.secondWriter(log);
        result.reset();
        requireNoOpenClaim();
        if (claim.isOpen())
        {
            throw LogMessages.claimState("the claim is still open on ", claim.log);
        }
        // either this claim sees the close coming, or the close waits for it to end (WriterGate)
        if (!gate.beginClaim(claim))
        {
            result.fail(AppendResult.LOG_CLOSED, LogMessages.closed(log));
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
        if (fsyncFailed(result))
        {
            return false;
        }
        final LogConfig cfg = log.config();
        result.logStartOffset = offsets.logStartOffset();
        if (maxLength < HEADER_LENGTH)
        {
            result.fail(AppendResult.INVALID_RECORD, LogMessages.claimTooSmall(maxLength, HEADER_LENGTH));
            return false;
        }
        if (maxLength > cfg.maxMessageBytes)
        {
            result.fail(AppendResult.RECORD_TOO_LARGE, validator.tooLarge(maxLength, cfg));
            return false;
        }
        Segment active = segments.active();
        int position = -1;
        if (strategy == WriteStrategy.MAPPED)
        {
            try
            {
                final int size = active.size();
                if (size > 0 && size > cfg.segmentBytes - maxLength)
                {
                    roller.roll(offsets.logEndOffsetOpaque(), validator.readClock());
                    active = segments.active();
                }
                position = active.claim(maxLength, claim.buffer);
            }
            catch (final IOException ex)
            {
                result.fail(AppendResult.STORAGE_ERROR, LogMessages.cannotClaim(maxLength, log, ex));
                return false;
            }
        }
        if (position < 0)
        {
            claim.buffer.wrap(claim.scratch(maxLength), 0, maxLength);
            claim.opened(log, null, 0, maxLength);
        }
        else
        {
            claim.opened(log, active, position, maxLength);
        }
        return true;
    }

    /** See {@link PartitionLog#commit}. */
    void commit(final BatchClaim claim, final int length, final AppendResult result)
    {
        gate.recordWriter();
        assert gate.onWriterThread() : LogMessages.secondWriter(log);
        result.reset();
        requireOpen(claim);
        try
        {
            commitOpen(claim, length, result);
        }
        finally
        {
            if (claim.log == log)
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
            result.fail(AppendResult.LOG_CLOSED, LogMessages.closed(log));
            return;
        }
        final LogConfig cfg = log.config();
        result.logStartOffset = offsets.logStartOffset();
        if (length < 0 || length > claim.capacity)
        {
            result.fail(AppendResult.INVALID_RECORD, LogMessages.batchOverClaim(length, claim.capacity));
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
            !validator.checkTrustedTimestamps(batch, cfg, result) ||
            !checkProducer(LogTransactions.VERIFICATION_NOT_REQUIRED, 0, result, false)) // no verification: no clock
        {
            return;
        }
        // not checked in production (the point of a claim); a batch changed after build() fails here in tests
        assert batch.isCrcValid() : LogMessages.changedAfterCrc(log);
        final long now = cfg.logAppendTime ? validator.readClock() : UNKNOWN_TIME;
        final Segment active = segments.active();
        final long base = offsets.logEndOffsetOpaque();
        final long last = base + batch.lastOffsetDelta();
        if (claim.segment == active && !roller.rollDue(cfg, active, length, base, last, batch.maxTimestamp(), now))
        {
            placer.patch(buffer, 0, base, cfg, now, result);
            try
            {
                active.commitClaimed(claim.position, length, last, batch.maxTimestamp());
            }
            catch (final IOException ex)
            {
                result.fail(AppendResult.STORAGE_ERROR, LogMessages.failed("cannot write to ", log, ex));
                return;
            }
            claim.segment = null; // published: from here on nothing may zero it
            placer.published(cfg, base, last, result);
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
            result.fail(AppendResult.LOG_CLOSED, LogMessages.closed(log));
            return;
        }
        try
        {
            batch.wrap(copy, 0);
            placer.place(copy, 0, length, cfg, now, NO_PRODUCER_ID, result);
        }
        finally
        {
            gate.endAppend();
        }
    }

    /** See {@link PartitionLog#abort}. */
    void abort(final BatchClaim claim)
    {
        gate.recordWriter();
        assert gate.onWriterThread() : LogMessages.secondWriter(log);
        requireOpen(claim);
        endClaim(claim, true);
    }

    private void requireOpen(final BatchClaim claim)
    {
        if (claim.log != log || gate.openClaim() != claim)
        {
            throw LogMessages.claimState("the claim is not open on ", log);
        }
    }

    private void endClaim(final BatchClaim claim, final boolean zero)
    {
        if (zero && claim.segment != null && !segments.isClosed())
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
            throw LogMessages.claimOpen(log);
        }
    }

    /**
     * {@code coordinator}: Kafka's origin COORDINATOR, the epoch checked alone (see {@link LogTransactions#appendAsCoordinator}):
     * neither sequences nor the produce verification.
     */
    private boolean checkProducer(final long verification, final long nowMs, final AppendResult result, final boolean coordinator)
    {
        if (batch.producerId() != NO_PRODUCER_ID)
        {
            final int status = coordinator ? checkCoordinatorEpoch(result) : producers.check(batch, verification, nowMs, result);
            if (status != AppendResult.OK)
            {
                result.status = status;
                return false;
            }
        }
        return true;
    }

    /** Kafka's {@code ProducerAppendInfo.checkProducerEpoch}, all a COORDINATOR append is checked for. */
    private int checkCoordinatorEpoch(final AppendResult result)
    {
        final ProducerState state = producers.producer(batch.producerId());
        if (state != null && batch.producerEpoch() < state.epoch)
        {
            result.message = LogMessages.epochOf(batch, state.epoch);
            return AppendResult.INVALID_PRODUCER_EPOCH;
        }
        return AppendResult.OK;
    }

    // ------------------------------------------------------------------------------------------
    // close
    // ------------------------------------------------------------------------------------------

    /** Whether a close has begun (it may be waiting for an append or an open claim to end). */
    boolean isClosing()
    {
        return gate.closing();
    }

    /**
     * Shuts the writer out for a close: no append starts and no claim opens from now on; then waits
     * for the writer to leave the mappings before they go — for an append in progress to end
     * (within microseconds; a roll within milliseconds), and for an open claim to end (its writer
     * may be building in one). The writer itself closing its log aborts its claim. Gives up after
     * {@link #CLOSE_WAIT_MS}, closing nothing: a writer that never ends its claim (or an append
     * stuck on a failing disk) keeps the log open rather than crash on an unmapped page; appends
     * and claims answer LOG_CLOSED from then on all the same.
     */
    void shutOut() throws IOException
    {
        gate.beginClose();
        final BatchClaim open = gate.openClaimVolatile();
        if (open != null && gate.onWriterThread())
        {
            endClaim(open, true);
        }
        if (!gate.awaitWriterOut(System.nanoTime() + CLOSE_WAIT_MS * 1_000_000L))
        {
            throw new IOException("log " + log + " still has " + (gate.openClaimVolatile() != null ? "a claim open" :
                "an append in progress") + " after " + CLOSE_WAIT_MS + " ms: its writer must end it before the log can close");
        }
    }

    private static final long CLOSE_WAIT_MS = 10_000;
}
