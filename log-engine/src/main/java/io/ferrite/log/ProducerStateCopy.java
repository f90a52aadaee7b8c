package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;

import java.io.IOException;

/**
 * A copy of a partition's producer state made off the writer's thread, for a log cleaner: which producers the
 * partition remembers and the last data batch of each (Kafka's {@code UnifiedLog.lastRecordsOfActiveProducers}).
 * Kafka reads its live producer state under the log's lock; Ferrite's is the writer's alone (a plain hash map the
 * writer resizes as producers come and expire, read without a lock on the append path), so another thread may not
 * walk it. The copy is rebuilt as recovery rebuilds the state: the newest snapshot a roll (or a close) wrote, read
 * without deleting anything, then the log's batches from there to the log end replayed through
 * {@link PartitionLog#readBatch} (any thread). A roll wrote that snapshot at the active segment's base, so the
 * replay is at most the active segment; each batch it reads is told to the caller first (a cleaner's throttle and
 * {@code CleanStats}).
 *
 * <p>With no usable snapshot (damaged, deleted by hand, a directory without any) the replay is the whole log, as the
 * writer's own recovery at open was. It is not bounded: a producer whose last batch lies before any bound would be
 * left out of the copy, the clean would empty or remove that batch, and after a restart without a snapshot the
 * recovered state would not know the producer, so a retry of that batch would be written again (a duplicate). The
 * next roll writes a snapshot, after which the replay is the active segment again.
 *
 * <p>Expiry: the snapshot's producers expired as of the writer's last expiry check (or the log's open) are left
 * out — the writer forgot them then, as recovery does —, the others kept even when expired by the clock since: the
 * writer still holds them until its next periodic check, as Kafka's {@code activeProducers} does until its
 * {@code removeExpiredProducers}, so the clean keeps their last batches as Kafka's does. Those replayed after the
 * snapshot are kept (they wrote within the active segment). The copy may thus keep a producer the writer forgot
 * after the snapshot was written (until the next roll's snapshot), which is safe; it leaves out one that came
 * after the check with timestamps already older than it (client times), as a restart would. For a producer both
 * hold, the copy's last data offset is the writer's as of the log end it read. Allocates per call (once a clean),
 * nothing on the writer's paths.
 */
final class ProducerStateCopy
{
    private ProducerStateCopy()
    {
    }

    /**
     * @param producers the log's own manager: only its directory is read
     */
    static void lastBatches(final ProducerStateManager producers, final LogOffsets offsets, final LogReader reader,
        final long expiryCheckMs, final long expiryMs, final LogTransactions.ReadListener listener, final LogTransactions.LastBatchSink sink)
        throws IOException, InterruptedException
    {
        final long logEnd = offsets.logEndOffset();
        final ProducerStateManager copy = new ProducerStateManager(producers.dir());
        final long snapshot = copy.loadSnapshot(logEnd, expiryCheckMs, expiryMs, false);
        final RecordBatch batch = new RecordBatch();
        long next = Math.max(Math.max(0, snapshot), offsets.logStartOffset());
        while (next < logEnd)
        {
            final int read = reader.readBatch(next, logEnd, batch);
            if (read == PartitionLog.OFFSET_OUT_OF_RANGE)
            {
                next = Math.max(next + 1, offsets.logStartOffset()); // retention passed it meanwhile
                continue;
            }
            if (read != PartitionLog.READ_OK)
            {
                break;
            }
            listener.batchRead(batch.sizeInBytes());
            copy.update(batch);
            next = batch.lastOffset() + 1;
        }
        copy.forEachLastBatch(sink);
    }
}
