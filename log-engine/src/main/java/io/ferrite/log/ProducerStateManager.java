package io.ferrite.log;

import io.ferrite.wire.record.ControlRecords;
import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchDescriptor;
import org.agrona.collections.Long2ObjectHashMap;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Producer state of one partition: validation of epochs and sequences (Kafka's rules), duplicate
 * detection, each producer's open transaction ({@link OngoingTxns}: what the last stable offset
 * comes from), the checks of transaction markers, and taking and loading its snapshots (the
 * {@code <offset>.snapshot} files, Kafka's layout, are {@link ProducerSnapshots}').
 * A snapshot keeps each producer's last batch; the other cached batches come back from the log
 * tail replayed on recovery; an entry whose current txn first offset is set opens that transaction
 * again. Single writer (the partition's appender), but for {@link #lastStableOffset}.
 */
final class ProducerStateManager
{
    private final Long2ObjectHashMap<ProducerState> producers = new Long2ObjectHashMap<>();
    private final OngoingTxns txns = new OngoingTxns();
    private volatile long lsoCap = Long.MAX_VALUE;
    private final TxnVerifications verifications = new TxnVerifications();
    /** Reads a marker's control record in place. */
    private final Record controlRecord = new Record();
    /** Told of each aborted transaction: the loader's index rebuild while loading, then the log's (see {@link AbortedTxnListener}). */
    private AbortedTxnListener abortedTxns = AbortedTxnListener.NONE;
    /** The partition's directory; moved once if the partition is deleted (its directory renamed). */
    private volatile Path dir;
    private long mapEndOffset;

    ProducerStateManager(final Path dir)
    {
        this.dir = dir;
    }

    /** Set before the log is loaded or shared (the loader's index rebuild, then the log's own). */
    void abortedTxnListener(final AbortedTxnListener listener)
    {
        this.abortedTxns = listener;
    }

    /** The partition's directory was renamed (its deletion): a snapshot from now on goes there. */
    void movedTo(final Path renamed)
    {
        this.dir = renamed;
    }

    /** The offset up to which the state reflects the log. */
    long mapEndOffset()
    {
        return mapEndOffset;
    }

    int producerCount()
    {
        return producers.size();
    }

    ProducerState producer(final long producerId)
    {
        return producers.get(producerId);
    }

    /** The first offset of the producer's open transaction on this partition, or -1 (writer). */
    long openTxnFirstOffset(final long producerId)
    {
        final ProducerState s = producers.get(producerId);
        return s != null && s.hasOpenTxn() ? s.currentTxnFirstOffset : -1;
    }

    /** The last stable offset an ABORT marker of the producer at {@code markerOffset} records in its index entry (writer). */
    long abortedTxnLastStableOffset(final long producerId, final long markerOffset)
    {
        return txns.lastStableOffsetAfter(producerId, markerOffset);
    }

    /** Any thread: see {@link OngoingTxns#lastStableOffset}, no higher than a truncation's {@link #capLastStableOffset}. */
    long lastStableOffset(final long highWatermark, final long logStartOffset)
    {
        final long lso = txns.lastStableOffset(highWatermark, logStartOffset);
        return Math.min(lso, lsoCap); // read after the state: a cap set before a reload's clear is seen with it
    }

    /**
     * Holds the last stable offset at or below {@code cap} while a truncation rebuilds this state (writer;
     * {@code Long.MAX_VALUE} ends it): between the clear and the replay that re-opens a transaction the state has none
     * open, and a read_committed fetch must not take that for stable (Kafka publishes its first unstable offset only
     * after the rebuild).
     */
    void capLastStableOffset(final long cap)
    {
        lsoCap = cap;
    }

    /** Kafka's {@code UnifiedLog.hasOngoingTransaction}: the producer has a transaction open here with this epoch. */
    boolean hasOngoingTransaction(final long producerId, final short epoch)
    {
        final ProducerState s = producers.get(producerId);
        return s != null && s.hasOpenTxn() && s.epoch == epoch;
    }

    /** Each producer the partition remembers, for DescribeProducers (writer thread). */
    void forEachProducer(final ProducerVisitor visitor)
    {
        for (final ProducerState s : producers.values())
        {
            visitor.visit(s.producerId, s.epoch, s.lastSequence(), s.lastTimestamp, s.coordinatorEpoch, s.currentTxnFirstOffset);
        }
    }

    /**
     * Checks a client's idempotent batch against the producer's state.
     *
     * @return {@link AppendResult#OK}, {@link AppendResult#DUPLICATE} (with the original offsets filled in),
     *         {@link AppendResult#INVALID_PRODUCER_EPOCH}, {@link AppendResult#OUT_OF_ORDER_SEQUENCE} or
     *         {@link AppendResult#INVALID_TXN_STATE} (a non-transactional batch while the producer's transaction is open,
     *         or a verified one whose transaction ended meanwhile), {@link AppendResult#VERIFICATION_NEEDED}
     * @param verification {@link LogTransactions#VERIFICATION_NOT_REQUIRED} or what {@link TxnVerifications#check} takes
     */
    int check(final RecordBatch batch, final long verification, final long nowMs, final AppendResult result)
    {
        final ProducerState state = producers.get(batch.producerId());
        final short epoch = batch.producerEpoch();
        if (state != null && epoch < state.epoch)
        {
            result.message = LogMessages.smallerEpoch(batch.producerId(), epoch, state.epoch);
            return AppendResult.INVALID_PRODUCER_EPOCH;
        }
        if (batch.isTransactional() && verification != LogTransactions.VERIFICATION_NOT_REQUIRED &&
            (state == null || !state.hasOpenTxn() || state.epoch != epoch))
        {
            final int verified = verifications.check(batch, state, verification, nowMs, result); // it would open a transaction
            if (verified != AppendResult.OK)
            {
                return verified;
            }
        }
        if (state == null)
        {
            return AppendResult.OK; // a producer this partition has not seen (or has forgotten): any sequence
        }
        final int first = batch.baseSequence();
        if (epoch == state.epoch)
        {
            final int duplicate = state.findDuplicate(first, batch.lastSequence());
            if (duplicate >= 0)
            {
                result.lastOffset = state.cachedLastOffset(duplicate);
                result.firstOffset = result.lastOffset - state.cachedOffsetDelta(duplicate);
                result.logAppendTime = -1;
                return AppendResult.DUPLICATE;
            }
            // no cached batch but a known epoch (a marker bumped or set it, a snapshot entry with none): the last sequence
            // is -1, so the next must be 0, as Kafka's ProducerAppendInfo.checkSequence takes it
            final int last = state.lastSequence();
            if (state.epoch != RecordBatchDescriptor.NO_PRODUCER_EPOCH && !inSequence(last, first))
            {
                result.message = LogMessages.outOfOrder(batch.producerId(), first, last, " (current end sequence number)");
                return AppendResult.OUT_OF_ORDER_SEQUENCE;
            }
        }
        else if (first != 0 && state.epoch != RecordBatchDescriptor.NO_PRODUCER_EPOCH)
        {
            result.message = LogMessages.newEpochSequence(batch.producerId(), epoch, first, state.epoch);
            return AppendResult.OUT_OF_ORDER_SEQUENCE;
        }
        if (state.currentTxnFirstOffset >= 0 && !batch.isTransactional())
        {
            // Kafka's ProducerAppendInfo.appendDataBatch, after the epoch and sequence checks
            result.message = LogMessages.expectedTransactional(batch.producerId(), state.currentTxnFirstOffset);
            return AppendResult.INVALID_TXN_STATE;
        }
        return AppendResult.OK;
    }

    /**
     * Checks a transaction marker for {@code producerId} as Kafka's {@code ProducerAppendInfo.appendEndTxnMarker}
     * does for the coordinator's: with transaction version 2 ({@code epochBump}) the marker's epoch
     * must be above the producer's, but for a retry (the same epoch with no transaction open, or
     * epoch {@value Short#MAX_VALUE}); before it, not below; and its coordinator epoch not below the
     * producer's last one.
     *
     * @param offset the offset the marker would get (for the message)
     * @return {@link AppendResult#OK}, {@link AppendResult#INVALID_PRODUCER_EPOCH} or
     *         {@link AppendResult#TRANSACTION_COORDINATOR_FENCED} (with {@link AppendResult#refusedMarkerOpenTxnFirstOffset}
     *         and {@link AppendResult#refusedMarkerCoordinatorEpoch} set)
     */
    int checkMarker(final long producerId, final short epoch, final int coordinatorEpoch, final boolean epochBump,
        final long offset, final AppendResult result)
    {
        final ProducerState state = producers.get(producerId);
        final short current = state == null ? RecordBatchDescriptor.NO_PRODUCER_EPOCH : state.epoch;
        if (epochBump ? epoch <= current : epoch < current)
        {
            final boolean retry = epochBump && epoch == current && (state == null || !state.hasOpenTxn() || epoch == Short.MAX_VALUE);
            if (!retry)
            {
                result.message = LogMessages.markerEpoch(producerId, offset, epoch, epochBump, current);
                return refused(state, AppendResult.INVALID_PRODUCER_EPOCH, result);
            }
        }
        if (state != null && state.coordinatorEpoch > coordinatorEpoch)
        {
            result.message = LogMessages.zombieCoordinator(producerId, offset, coordinatorEpoch, state.coordinatorEpoch);
            return refused(state, AppendResult.TRANSACTION_COORDINATOR_FENCED, result);
        }
        return AppendResult.OK;
    }

    /** A refused marker's status, with what the partition holds of the producer's transaction (its sender decides by it). */
    private static int refused(final ProducerState state, final int status, final AppendResult result)
    {
        result.refusedMarkerOpenTxnFirstOffset = state == null ? -1 : state.currentTxnFirstOffset;
        result.refusedMarkerCoordinatorEpoch = state == null ? -1 : state.coordinatorEpoch;
        return status;
    }

    /** {@code sequence - decrement}, wrapping below zero to Integer.MAX_VALUE as Kafka's sequences do. */
    static int decrementSequence(final int sequence, final int decrement)
    {
        return sequence < decrement ? Integer.MAX_VALUE - (decrement - sequence) + 1 : sequence - decrement;
    }

    static boolean inSequence(final int last, final int next)
    {
        return next == last + 1L || (next == 0 && last == Integer.MAX_VALUE);
    }

    /** Records a recovered batch (while the log loads: what it holds is taken as replicated); advances the map end. */
    void update(final RecordBatch batch)
    {
        update(batch, Long.MAX_VALUE);
    }

    /**
     * Records an appended (or recovered) batch carrying a producer id, opening or ending its
     * transaction; advances the map end. A non-transactional batch costs no more than before: its
     * flag is looked at once.
     *
     * @param highWatermark the writer's view of the high watermark (a transaction a marker ends
     *     stays unstable until the high watermark passes the marker)
     */
    void update(final RecordBatch batch, final long highWatermark)
    {
        final long pid = batch.producerId();
        if (pid != RecordBatchDescriptor.NO_PRODUCER_ID)
        {
            ProducerState state = producers.get(pid);
            if (state == null)
            {
                state = new ProducerState(pid);
                producers.put(pid, state);
            }
            if (!batch.isControl())
            {
                state.addBatch(batch.producerEpoch(), batch.baseSequence(), batch.lastSequence(), batch.lastOffset(),
                    batch.lastOffsetDelta(), batch.maxTimestamp());
                if (batch.isTransactional())
                {
                    verifications.appended(batch);
                    if (!state.hasOpenTxn())
                    {
                        txns.open(state, batch.baseOffset());
                    }
                }
            }
            else
            {
                verifications.appended(batch);
                endTxn(state, batch, highWatermark);
            }
        }
        mapEndOffset = batch.lastOffset() + 1;
    }

    /** A marker: the producer's open transaction (if any) ends; an ABORT is told to the listener. */
    private void endTxn(final ProducerState state, final RecordBatch batch, final long highWatermark)
    {
        final short type = ControlMarkers.type(batch, controlRecord);
        if (type == ControlRecords.UNKNOWN)
        {
            return; // not a marker: nothing of the producer's changes
        }
        final int coordinatorEpoch = ControlRecords.coordinatorEpoch(controlRecord);
        final long marker = batch.baseOffset();
        if (state.hasOpenTxn())
        {
            if (type == ControlRecords.ABORT)
            {
                abortedTxns.onAbortedTxn(state.producerId, state.currentTxnFirstOffset, marker,
                    txns.lastStableOffsetAfter(state.producerId, marker));
            }
            txns.close(state, marker, highWatermark);
        }
        state.endTxn(batch.producerEpoch(), coordinatorEpoch, batch.maxTimestamp());
    }

    /** No producer and no verification remembered: nothing to expire (writer thread). */
    boolean isEmpty()
    {
        return producers.isEmpty() && verifications.size() == 0;
    }

    /**
     * Kafka's {@code removeExpiredProducers}: forgets the producers whose last batch or marker is
     * {@code expiryMs} or more older than {@code nowMs} and that have no transaction open here
     * ({@code isProducerExpired}), and the produce verifications started that long ago. Writer thread;
     * allocates nothing (the map's iterators are its own, reused).
     *
     * @return how many producers it forgot
     */
    int expire(final long nowMs, final long expiryMs)
    {
        int removed = 0;
        final Long2ObjectHashMap<ProducerState>.ValueIterator states = producers.values().iterator();
        while (states.hasNext())
        {
            if (expired(states.next(), -1, nowMs, expiryMs))
            {
                states.remove();
                removed++;
            }
        }
        verifications.expire(nowMs, expiryMs);
        return removed;
    }

    /**
     * Kafka's {@code isProducerExpired}: no transaction open ({@code txnFirstOffset}, or the state's own) and the
     * last timestamp {@code expiryMs} or more before {@code nowMs}. A producer whose batches carried no
     * timestamp (-1) is as old as can be, as in Kafka.
     */
    private static boolean expired(final ProducerState s, final long txnFirstOffset, final long nowMs, final long expiryMs)
    {
        return txnFirstOffset < 0 && !s.hasOpenTxn() && nowMs - s.lastTimestamp >= expiryMs;
    }

    /** Producers with a produce verification under way (tests). */
    int verifying()
    {
        return verifications.size();
    }

    /** The state now covers the log up to {@code offset} (a truncation's replay ended there, Kafka's {@code updateMapEndOffset}). */
    void mapEndOffset(final long offset)
    {
        mapEndOffset = offset;
    }

    void clear(final long offset)
    {
        txns.clear();
        producers.clear();
        mapEndOffset = offset;
    }

    // ---- snapshots (the files: ProducerSnapshots) ----

    /**
     * Writes {@code <mapEndOffset>.snapshot} through a temporary file and a rename (on roll and on
     * close); forced only for a roll ({@link RollSnapshots}): a close's is made durable by the
     * close's own flush of the directory or not at all (a missing one only lengthens the replay).
     *
     * @return the snapshot file
     */
    Path takeSnapshot() throws IOException
    {
        return ProducerSnapshots.write(dir, mapEndOffset, producers.values());
    }

    /**
     * Loads the newest valid snapshot at or below {@code maxOffset}, deleting damaged ones; its producers
     * expired by {@code nowMs} are left out, as Kafka's {@code loadFromSnapshot} leaves them (a restart
     * does not bring back a producer the expiry forgot, nor one that became expired while the log was shut).
     *
     * @return the snapshot's offset (the state's map end), or -1 when there is none (state empty)
     */
    long loadSnapshot(final long maxOffset, final long nowMs, final long expiryMs) throws IOException
    {
        return loadSnapshot(maxOffset, nowMs, expiryMs, true);
    }

    /**
     * As {@link #loadSnapshot(long, long, long)}; with {@code deleteDamaged} false a damaged snapshot, or one deleted
     * meanwhile (retention's), is passed over and left as it is: a copy of the state made off the writer's thread
     * ({@link ProducerStateCopy}) changes nothing in the directory.
     */
    long loadSnapshot(final long maxOffset, final long nowMs, final long expiryMs, final boolean deleteDamaged) throws IOException
    {
        final ProducerSnapshots.EntrySink load = (s, txnFirstOffset) ->
        {
            if (!expired(s, txnFirstOffset, nowMs, expiryMs))
            {
                loadEntry(s, txnFirstOffset);
            }
        };
        clear(0);
        for (final long offset : ProducerSnapshots.snapshotOffsets(dir))
        {
            if (offset > maxOffset)
            {
                continue;
            }
            final Path file = ProducerSnapshots.snapshotFile(dir, offset);
            if (deleteDamaged)
            {
                if (ProducerSnapshots.read(file, load))
                {
                    mapEndOffset = offset;
                    return offset;
                }
                Files.deleteIfExists(file);
            }
            else if (readIfThere(file, load))
            {
                mapEndOffset = offset;
                return offset;
            }
        }
        return -1;
    }

    private static boolean readIfThere(final Path file, final ProducerSnapshots.EntrySink load) throws IOException
    {
        try
        {
            return ProducerSnapshots.read(file, load);
        }
        catch (final java.nio.file.NoSuchFileException deleted)
        {
            return false;
        }
    }

    /** The directory snapshots go to (any thread). */
    Path dir()
    {
        return dir;
    }

    /** Each producer with the last offset of its last data batch (-1 when none) and its epoch ({@link ProducerStateCopy}'s copy only). */
    void forEachLastBatch(final LogTransactions.LastBatchSink sink)
    {
        for (final ProducerState s : producers.values())
        {
            sink.lastBatch(s.producerId, s.lastOffset(), s.epoch);
        }
    }

    /** A snapshot's entry: the producer, and its open transaction again (Kafka's loadProducerEntry). */
    private void loadEntry(final ProducerState s, final long txnFirstOffset)
    {
        producers.put(s.producerId, s);
        if (txnFirstOffset >= 0)
        {
            txns.open(s, txnFirstOffset);
        }
    }
}
