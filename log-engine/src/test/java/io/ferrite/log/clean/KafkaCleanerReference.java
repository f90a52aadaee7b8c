package io.ferrite.log.clean;

import org.apache.kafka.common.message.AbortedTxn;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.BufferSupplier;
import org.apache.kafka.storage.internals.log.CleanedTransactionMetadata;
import org.apache.kafka.storage.internals.log.LastRecord;
import org.apache.kafka.storage.internals.log.SkimpyOffsetMap;

import java.nio.ByteBuffer;
import java.security.DigestException;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Kafka 4.4's cleaning of one segment, with Kafka's own {@code SkimpyOffsetMap}, {@code CleanedTransactionMetadata}
 * and {@code MemoryRecords.filterTo}. What is not reachable from outside Kafka — {@code Cleaner}'s map loading
 * loop and its {@code cleanInto} filter — is transcribed here from Kafka 4.4's {@code Cleaner} (test code, the
 * reference the cleaner's parts are compared with).
 */
final class KafkaCleanerReference
{
    private KafkaCleanerReference()
    {
    }

    /**
     * Cleans {@code log} (whole batches, offsets {@code [0, endOffset)}) with a map of {@code mapBytes} bytes.
     *
     * @return the cleaned batches
     */
    static ByteBuffer clean(
        final ByteBuffer log, final long endOffset, final int mapBytes, final double loadFactor, final List<AbortedTxn> aborted,
        final Map<Long, LastRecord> activeProducers, final long highWatermark, final long now, final long deleteRetentionMs)
        throws NoSuchAlgorithmException, DigestException
    {
        final SkimpyOffsetMap map = new SkimpyOffsetMap(mapBytes);
        buildOffsetMap(log, endOffset, map, loadFactor, aborted);
        final CleanedTransactionMetadata transactions = new CleanedTransactionMetadata();
        transactions.addAbortedTransactions(aborted);
        final MemoryRecords.RecordFilter filter = new MemoryRecords.RecordFilter(now, deleteRetentionMs)
        {
            private boolean discardBatchRecords;

            @Override
            protected BatchRetentionResult checkBatchRetention(final RecordBatch batch)
            {
                final boolean canDiscardBatch = batch.isControlBatch() ? transactions.onControlBatchRead(batch) : transactions.onBatchRead(batch);
                if (batch.isControlBatch())
                {
                    discardBatchRecords = canDiscardBatch && batch.deleteHorizonMs().isPresent() &&
                        batch.deleteHorizonMs().getAsLong() <= currentTime;
                }
                else
                {
                    discardBatchRecords = canDiscardBatch;
                }
                final boolean isBatchLastRecordOfProducer = Optional.ofNullable(activeProducers.get(batch.producerId()))
                    .map(last -> last.lastDataOffset().isPresent() ? batch.lastOffset() == last.lastDataOffset().getAsLong() :
                        batch.isControlBatch() && batch.producerEpoch() == last.producerEpoch())
                    .orElse(false);
                final BatchRetention retention;
                if (batch.hasProducerId() && isBatchLastRecordOfProducer)
                {
                    retention = BatchRetention.RETAIN_EMPTY;
                }
                else if (batch.nextOffset() == highWatermark)
                {
                    retention = BatchRetention.RETAIN_EMPTY;
                }
                else if (discardBatchRecords)
                {
                    retention = BatchRetention.DELETE;
                }
                else
                {
                    retention = BatchRetention.DELETE_EMPTY;
                }
                return new BatchRetentionResult(retention, canDiscardBatch && batch.isControlBatch());
            }

            @Override
            protected boolean shouldRetainRecord(final RecordBatch batch, final Record record)
            {
                if (discardBatchRecords)
                {
                    return false;
                }
                if (batch.isControlBatch())
                {
                    return true;
                }
                if (record.offset() > map.latestOffset())
                {
                    return true;
                }
                if (!record.hasKey())
                {
                    return false;
                }
                try
                {
                    final long foundOffset = map.get(record.key());
                    final boolean shouldRetainDeletes = batch.deleteHorizonMs().isEmpty() || currentTime < batch.deleteHorizonMs().getAsLong();
                    return record.offset() >= foundOffset && (record.hasValue() || shouldRetainDeletes);
                }
                catch (final DigestException ex)
                {
                    throw new IllegalStateException(ex);
                }
            }
        };
        // room enough that filterTo never grows its output (it returns early when it does)
        final ByteBuffer out = ByteBuffer.allocate(log.remaining() * 3 + 1024);
        final MemoryRecords.FilterResult result = MemoryRecords.readableRecords(log.duplicate())
            .filterTo(filter, out, BufferSupplier.create(), Integer.MAX_VALUE);
        if (result.outputBuffer() != out)
        {
            throw new IllegalStateException("filterTo grew its buffer");
        }
        out.flip();
        return out;
    }

    /** Kafka's {@code Cleaner.buildOffsetMap} over one segment holding the whole log, dirty from offset 0. */
    private static void buildOffsetMap(
        final ByteBuffer log, final long endOffset, final SkimpyOffsetMap map, final double loadFactor, final List<AbortedTxn> aborted)
        throws DigestException
    {
        map.clear();
        final CleanedTransactionMetadata transactions = new CleanedTransactionMetadata();
        transactions.addAbortedTransactions(aborted);
        final int maxDesiredMapSize = (int)(map.slots() * loadFactor);
        for (final MutableRecordBatch batch : MemoryRecords.readableRecords(log.duplicate()).batches())
        {
            if (batch.isControlBatch())
            {
                transactions.onControlBatchRead(batch);
            }
            else if (!transactions.onBatchRead(batch))
            {
                for (final Record record : batch)
                {
                    if (record.hasKey())
                    {
                        if (map.size() >= maxDesiredMapSize)
                        {
                            return; // full
                        }
                        map.put(record.key(), record.offset());
                    }
                }
            }
            map.updateLatestOffset(batch.lastOffset());
        }
        map.updateLatestOffset(endOffset - 1);
    }
}
