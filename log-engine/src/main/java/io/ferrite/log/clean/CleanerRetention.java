package io.ferrite.log.clean;

import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchDescriptor;
import org.agrona.DirectBuffer;

/**
 * The log cleaner's rules, as Kafka 4.4's {@code Cleaner.cleanInto} filter applies them to a v2 log:
 * <ul>
 *   <li>a record stays when it is past the map's latest offset (not deduplicated in this pass), or when it is
 *   its key's latest offset in the {@link OffsetMap} and it has a value or its batch's delete horizon has not
 *   passed (a tombstone stays until then); a record without a key goes; a record the map's load put is answered
 *   from what that load learned ({@link LoadedOffsets}), without hashing its key again;</li>
 *   <li>an aborted transaction's data batch goes as a whole ({@link CleanedTransactions#onBatchRead});</li>
 *   <li>a transaction marker with no data of its transaction left keeps its record until the batch's delete
 *   horizon, which the first clean that finds it so sets ({@link RecordRetention#MARKER_FOR_EMPTY_TXN}), then
 *   goes;</li>
 *   <li>a batch left with no record is kept as an empty batch when it is the last batch of a producer still in
 *   the producer state ({@link ActiveProducers}) or the batch just before the high watermark, else dropped.</li>
 * </ul>
 * Set the clean's inputs with {@link #reset} (and {@link #activeProducers()}, {@link #transactions()}), then hand
 * this to {@link BatchFilter} batch by batch in offset order. The map itself is loaded before, by an
 * {@link OffsetMapLoader}. Allocation-free per batch and per record; one thread.
 */
public final class CleanerRetention implements RecordRetention
{
    private final OffsetMap map;
    private final LoadedOffsets loaded;
    private final ActiveProducers activeProducers = new ActiveProducers();
    private final CleanedTransactions transactions;

    private long currentTimeMs;
    private long deleteRetentionMs;
    private long highWatermark;
    private boolean discardBatchRecords;

    /**
     * @param loader       the loader of the map this filters by: what its load learned of each dirty offset
     *                     ({@link LoadedOffsets}) answers the records it put without hashing or probing again
     * @param transactions this filter's own (not the loader's)
     */
    public CleanerRetention(final OffsetMapLoader loader, final CleanedTransactions transactions)
    {
        this.map = loader.map();
        this.loaded = loader.loadedOffsets();
        this.transactions = transactions;
    }

    /**
     * Starts a clean: clears the active producers and the transactions, to be filled again.
     *
     * @param currentTimeMs     the clean's time (one reading for the whole clean, as Kafka's)
     * @param deleteRetentionMs the topic's {@code delete.retention.ms}
     * @param highWatermark     the partition's high watermark
     */
    public CleanerRetention reset(final long currentTimeMs, final long deleteRetentionMs, final long highWatermark)
    {
        this.currentTimeMs = currentTimeMs;
        this.deleteRetentionMs = deleteRetentionMs;
        this.highWatermark = highWatermark;
        activeProducers.clear();
        transactions.clear();
        return this;
    }

    public ActiveProducers activeProducers()
    {
        return activeProducers;
    }

    public CleanedTransactions transactions()
    {
        return transactions;
    }

    @Override
    public int checkBatch(final RecordBatch batch)
    {
        final boolean control = batch.isControl();
        final boolean canDiscardBatch = control ? transactions.onControlBatchRead(batch) : transactions.onBatchRead(batch);
        if (control)
        {
            discardBatchRecords = canDiscardBatch && batch.hasDeleteHorizon() && batch.baseTimestamp() <= currentTimeMs;
        }
        else
        {
            discardBatchRecords = canDiscardBatch;
        }
        final int retention;
        if (batch.producerId() > RecordBatchDescriptor.NO_PRODUCER_ID && activeProducers.isLastBatchOfProducer(batch))
        {
            retention = RETAIN_EMPTY;
        }
        else if (batch.lastOffset() + 1 == highWatermark)
        {
            retention = RETAIN_EMPTY;
        }
        else if (discardBatchRecords)
        {
            retention = DELETE;
        }
        else
        {
            retention = DELETE_EMPTY;
        }
        return canDiscardBatch && control ? retention | MARKER_FOR_EMPTY_TXN : retention;
    }

    @Override
    public boolean retainRecord(
        final RecordBatch batch, final long offset, final DirectBuffer key, final int keyOffset, final int keyLength,
        final boolean hasValue)
    {
        if (discardBatchRecords)
        {
            return false;
        }
        if (batch.isControl())
        {
            return true;
        }
        if (offset > map.latestOffset())
        {
            return true;
        }
        if (keyLength < 0)
        {
            return false; // Kafka counts it as an invalid message: a compacted topic's records have keys
        }
        final int known = loaded.answer(offset);
        final boolean latestForKey = known == LoadedOffsets.UNKNOWN ? offset >= map.get(key, keyOffset, keyLength) :
            known == LoadedOffsets.LATEST;
        assert known == LoadedOffsets.UNKNOWN || latestForKey == offset >= map.get(key, keyOffset, keyLength) :
            "the load's answer for offset " + offset + " is not the map's";
        final boolean retainDeletes = !batch.hasDeleteHorizon() || currentTimeMs < batch.baseTimestamp();
        return latestForKey && (hasValue || retainDeletes);
    }

    /**
     * A data batch every record of which the load put and a later put replaced ({@link LoadedOffsets}): each is
     * within the map and not its key's latest, so {@link #retainRecord} would drop each (tombstones too). In a
     * dirty log of many updates to few keys most batches are such; their records are then not decompressed or
     * parsed a second time.
     */
    @Override
    public boolean keepsNoRecord(final RecordBatch batch)
    {
        return !batch.isControl() && batch.lastOffset() <= map.latestOffset() &&
            loaded.wholeBatchSuperseded(batch.baseOffset(), batch.lastOffset(), batch.recordCount());
    }

    @Override
    public long newDeleteHorizonMs()
    {
        return currentTimeMs + deleteRetentionMs;
    }
}
