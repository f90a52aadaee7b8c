package io.ferrite.log.clean;

import io.ferrite.wire.record.RecordBatch;
import org.agrona.DirectBuffer;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * A {@link RecordRetention} that answers as the one it wraps and notes every answer: each batch's by its base
 * offset, and the offsets of the records kept. {@link KafkaFilterTo} hands the same answers to Kafka's own
 * {@code filterTo}.
 */
final class RecordedRetention implements RecordRetention
{
    private final RecordRetention delegate;
    final Map<Long, Integer> batchAnswers = new HashMap<>();
    final Set<Long> recordsAsked = new HashSet<>();
    final Set<Long> recordsKept = new HashSet<>();
    /** Batches whose records {@link #keepsNoRecord} dropped unread. */
    int batchesUnread;

    RecordedRetention(final RecordRetention delegate)
    {
        this.delegate = delegate;
    }

    @Override
    public int checkBatch(final RecordBatch batch)
    {
        final int answer = delegate.checkBatch(batch);
        if (batchAnswers.put(batch.baseOffset(), answer) != null)
        {
            throw new IllegalStateException("the batch at " + batch.baseOffset() + " was checked twice");
        }
        return answer;
    }

    @Override
    public boolean retainRecord(
        final RecordBatch batch, final long offset, final DirectBuffer key, final int keyOffset, final int keyLength,
        final boolean hasValue)
    {
        final boolean kept = delegate.retainRecord(batch, offset, key, keyOffset, keyLength, hasValue);
        recordsAsked.add(offset);
        if (kept)
        {
            recordsKept.add(offset);
        }
        return kept;
    }

    /** The delegate's; each offset of a batch it drops unread is noted as asked and not kept. */
    @Override
    public boolean keepsNoRecord(final RecordBatch batch)
    {
        final boolean none = delegate.keepsNoRecord(batch);
        if (none)
        {
            batchesUnread++;
            for (long offset = batch.baseOffset(); offset <= batch.lastOffset(); offset++)
            {
                recordsAsked.add(offset);
            }
        }
        return none;
    }

    @Override
    public long newDeleteHorizonMs()
    {
        return delegate.newDeleteHorizonMs();
    }
}
