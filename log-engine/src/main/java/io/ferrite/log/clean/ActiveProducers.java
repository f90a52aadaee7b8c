package io.ferrite.log.clean;

import io.ferrite.log.LogTransactions;
import io.ferrite.wire.record.RecordBatch;
import org.agrona.collections.Long2LongHashMap;

/**
 * The producers the partition's producer state still holds when a clean starts, each with the last offset of
 * its last data batch and its epoch: Kafka's {@code UnifiedLog.lastRecordsOfActiveProducers}. A clean keeps that
 * batch (empty if all its records go), so a log rebuilt from the cleaned segments still knows each producer's
 * last sequence and epoch and a retried batch is still recognised as a duplicate. Primitive maps: filled once per
 * clean ({@link #clear()}, {@link #add}), read allocation-free.
 */
public final class ActiveProducers implements LogTransactions.LastBatchSink
{
    /** {@link #add}'s {@code lastDataOffset} when the producer has written only markers (Kafka's empty {@code lastDataOffset}). */
    public static final long NO_DATA_OFFSET = -1L;

    private static final long ABSENT = Long.MIN_VALUE;

    private final Long2LongHashMap lastDataOffsets = new Long2LongHashMap(ABSENT);
    private final Long2LongHashMap epochs = new Long2LongHashMap(ABSENT);

    public void clear()
    {
        lastDataOffsets.clear();
        epochs.clear();
    }

    /**
     * @param lastDataOffset the last offset of the producer's last data batch, or {@link #NO_DATA_OFFSET}
     */
    public ActiveProducers add(final long producerId, final long lastDataOffset, final short epoch)
    {
        lastDataOffsets.put(producerId, lastDataOffset < 0 ? NO_DATA_OFFSET : lastDataOffset);
        epochs.put(producerId, epoch);
        return this;
    }

    /** The partition's producer state, as {@link LogTransactions#lastBatchesOfProducers} gives it. */
    @Override
    public void lastBatch(final long producerId, final long lastDataOffset, final short epoch)
    {
        add(producerId, lastDataOffset, epoch);
    }

    public int size()
    {
        return lastDataOffsets.size();
    }

    /**
     * Kafka's {@code isBatchLastRecordOfProducer}: the batch is the producer's last data batch, or — for a
     * producer that has written only markers — a control batch of its current epoch.
     */
    public boolean isLastBatchOfProducer(final RecordBatch batch)
    {
        final long producerId = batch.producerId();
        final long lastDataOffset = lastDataOffsets.get(producerId);
        if (lastDataOffset == ABSENT)
        {
            return false;
        }
        if (lastDataOffset != NO_DATA_OFFSET)
        {
            return batch.lastOffset() == lastDataOffset;
        }
        return batch.isControl() && batch.producerEpoch() == (short)epochs.get(producerId);
    }
}
