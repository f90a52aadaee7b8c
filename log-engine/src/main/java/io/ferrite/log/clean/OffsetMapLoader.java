package io.ferrite.log.clean;

import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordReader;

/**
 * Loads the dirty part of a log into an {@link OffsetMap}, batch by batch in offset order: Kafka's
 * {@code Cleaner.buildOffsetMapForSegment} for one batch. Records of aborted transactions put no key (its own
 * {@link CleanedTransactions}, fed the aborted transactions of the dirty range, tells them apart); records
 * without a key put none; every batch moves the map's latest offset to its last offset. The caller moves it to
 * a segment's end ({@code nextSegmentBase - 1}) after the segment's last batch, as Kafka does, and stops at the
 * first batch this answers false for: the map is full, and the rest is cleaned in a later pass.
 *
 * <p>What each put learns is kept for the filter of the same clean ({@link LoadedOffsets}, which a
 * {@link CleanerRetention} made with this loader reads): which offsets were put and which a later put of the same key
 * replaced. The first batch loaded after the map's {@link OffsetMap#clear()}
 * starts that bookkeeping for the new clean.
 */
public final class OffsetMapLoader
{
    private final OffsetMap map;
    private final CleanedTransactions transactions;
    private final RecordReader reader;
    private final LoadedOffsets loaded;

    /**
     * @param transactions this load's own (not the filter's): {@link CleanedTransactions#clear()} and fill it
     *                     before the first batch
     */
    public OffsetMapLoader(final OffsetMap map, final CleanedTransactions transactions, final RecordReader reader)
    {
        this.map = map;
        this.transactions = transactions;
        this.reader = reader;
        this.loaded = new LoadedOffsets(map);
    }

    OffsetMap map()
    {
        return map;
    }

    /** What this loader's puts learned since the map's last clear. */
    LoadedOffsets loadedOffsets()
    {
        return loaded;
    }

    public CleanedTransactions transactions()
    {
        return transactions;
    }

    /**
     * Puts the keys of {@code batch}'s records at or past {@code startOffset} (the first dirty offset).
     *
     * @return false when the map filled up before a record of this batch: the map's latest offset is then the
     * last record it holds, and this batch and those after it are for the next pass
     */
    public boolean load(final RecordBatch batch, final long startOffset)
    {
        loaded.startIfCleared(startOffset);
        if (batch.isControl())
        {
            transactions.onControlBatchRead(batch);
        }
        else if (!transactions.onBatchRead(batch))
        {
            reader.reset(batch);
            final long base = batch.baseOffset();
            final long last = batch.lastOffset();
            while (reader.hasNext())
            {
                final Record record = reader.next();
                final long offset = record.offset();
                if (offset < base || offset > last)
                {
                    loaded.switchOff(); // a corrupt batch's offset deltas: its bits would speak of other batches' offsets
                }
                if (record.hasKey() && offset >= startOffset)
                {
                    if (map.isFull())
                    {
                        return false;
                    }
                    loaded.onPut(offset, map.put(record.buffer(), record.keyOffset(), record.keyLength(), offset));
                }
            }
        }
        if (batch.lastOffset() >= startOffset)
        {
            map.updateLatestOffset(batch.lastOffset());
        }
        return true;
    }
}
