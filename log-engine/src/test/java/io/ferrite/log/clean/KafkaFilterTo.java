package io.ferrite.log.clean;

import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.BufferSupplier;

import java.nio.ByteBuffer;

/**
 * Kafka 4.4's own {@code MemoryRecords.filterTo} (kafka-clients, called, not copied) run over a log with the
 * answers our retention gave for it ({@link RecordedRetention}): the bytes Kafka writes for the same decisions.
 * What this checks is the writing — which batches are dropped, kept unchanged, rebuilt or kept as an empty header,
 * and every byte of those — not the decisions themselves: those are ours, and {@code CompactionPropertyTest} checks
 * them against its own model.
 */
final class KafkaFilterTo
{
    private KafkaFilterTo()
    {
    }

    /**
     * @param now               the clean's time, as given to our retention
     * @param deleteRetentionMs as given to our retention (Kafka's filter sets {@code now + deleteRetentionMs} as a new
     *                          delete horizon)
     * @return the filtered batches
     */
    static ByteBuffer filter(final ByteBuffer log, final RecordedRetention answers, final long now, final long deleteRetentionMs)
    {
        final MemoryRecords.RecordFilter filter = new MemoryRecords.RecordFilter(now, deleteRetentionMs)
        {
            @Override
            protected BatchRetentionResult checkBatchRetention(final RecordBatch batch)
            {
                final Integer answer = answers.batchAnswers.get(batch.baseOffset());
                if (answer == null)
                {
                    throw new IllegalStateException("our retention was not asked about the batch at " + batch.baseOffset());
                }
                final BatchRetention retention = switch (answer & RecordRetention.RETENTION_MASK)
                {
                    case RecordRetention.DELETE -> BatchRetention.DELETE;
                    case RecordRetention.RETAIN_EMPTY -> BatchRetention.RETAIN_EMPTY;
                    case RecordRetention.DELETE_EMPTY -> BatchRetention.DELETE_EMPTY;
                    default -> throw new IllegalStateException("batch retention " + answer);
                };
                return new BatchRetentionResult(retention, (answer & RecordRetention.MARKER_FOR_EMPTY_TXN) != 0);
            }

            @Override
            protected boolean shouldRetainRecord(final RecordBatch batch, final Record record)
            {
                if (!answers.recordsAsked.contains(record.offset()))
                {
                    throw new IllegalStateException("our retention was not asked about the record at " + record.offset());
                }
                return answers.recordsKept.contains(record.offset());
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
}
