package io.ferrite.broker.txn;

import org.agrona.DirectBuffer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One {@code __transaction_state} partition read back at load, record by record in log order: the
 * last record of an id wins, a tombstone removes it (Kafka's {@code loadTransactionMetadata}). What
 * it leaves ({@link #finish}): the transactions to cache, and those left in PrepareCommit or
 * PrepareAbort — their markers must be written again, then Complete* (their Complete* is prepared).
 * Ongoing transactions stay as they are: the timeout sweep ends them.
 */
public final class TxnReplay
{
    private final Map<String, TxnTransit> last = new HashMap<>();
    private int records;

    /** The transactions to cache, and the jobs of those to complete. */
    public record Loaded(Map<String, TxnMetadata> transactions, List<MarkerJob> toComplete)
    {
    }

    /**
     * One record: its key and value ({@code valueLength} -1 for a tombstone). A key of another
     * record type is skipped.
     */
    public void apply(final DirectBuffer buffer, final int keyOffset, final int keyLength, final int valueOffset,
        final int valueLength)
    {
        final String id = TxnRecords.readKey(buffer, keyOffset, keyLength);
        if (id != null)
        {
            apply(id, valueLength < 0 ? null : TxnRecords.readValue(buffer, valueOffset, valueLength));
        }
    }

    /** One record read already: a value, or null for a tombstone. */
    public void apply(final String transactionalId, final TxnTransit value)
    {
        records++;
        if (value == null)
        {
            last.remove(transactionalId);
        }
        else
        {
            last.put(transactionalId, value);
        }
    }

    public int records()
    {
        return records;
    }

    /** The partition's transactions; those prepared get Complete* pending, stamped {@code now}. */
    public Loaded finish(final long now)
    {
        final Map<String, TxnMetadata> transactions = new HashMap<>();
        final List<MarkerJob> toComplete = new ArrayList<>();
        for (final Map.Entry<String, TxnTransit> e : last.entrySet())
        {
            final TxnMetadata m = new TxnMetadata(e.getKey(), e.getValue());
            transactions.put(e.getKey(), m);
            if (m.state().isPrepared())
            {
                toComplete.add(MarkerJob.completing(m, now));
            }
        }
        return new Loaded(transactions, toComplete);
    }
}
