package io.ferrite.broker.txn;

import io.ferrite.broker.topic.Partition;
import io.ferrite.log.LogTailer;
import io.ferrite.wire.ProtocolException;
import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordReader;
import org.agrona.DirectBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 *
 * <p>A record this coordinator cannot use is skipped, not loaded, and the load goes on (one WARN at
 * {@link #finish} counts them): a value of a version other than 0 and 1 (Kafka's load skips it with
 * a warning: a left-over of an aborted upgrade), and a value no coordinator writes — state Dead (its
 * record is a tombstone) or PrepareEpochFence (only ever pending), or a negative producer id or
 * epoch — which, loaded, would make later requests for the id throw. A record that cannot be read at all
 * (no key, cut short, lengths past its end, an unknown state; or a batch whose records do not decompress)
 * is skipped with one WARN line naming its partition and offset: never a failed load.
 */
public final class TxnReplay
{
    private static final Logger LOG = LoggerFactory.getLogger(TxnReplay.class);

    private final Map<String, TxnTransit> last = new HashMap<>();
    private int records;
    private int skipped;
    private int badRecords;
    private String firstSkipped;

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
        if (id == null)
        {
            return;
        }
        if (valueLength >= 0)
        {
            final short version = TxnRecords.readValueVersion(buffer, valueOffset, valueLength);
            if (version != 0 && version != 1)
            {
                records++;
                skip(id, "value version " + version);
                return;
            }
        }
        apply(id, valueLength < 0 ? null : TxnRecords.readValue(buffer, valueOffset, valueLength));
    }

    /** One record read already: a value, or null for a tombstone. */
    public void apply(final String transactionalId, final TxnTransit value)
    {
        records++;
        if (value != null && (value.state() == TxnState.DEAD || value.state() == TxnState.PREPARE_EPOCH_FENCE
            || value.producerId() < 0 || value.producerEpoch() < 0))
        {
            skip(transactionalId, "state " + value.state().stateName() + ", producer id " + value.producerId() + ", epoch "
                + value.producerEpoch());
            return;
        }
        if (value == null)
        {
            last.remove(transactionalId);
        }
        else
        {
            last.put(transactionalId, value);
        }
    }

    /**
     * A replay of {@code partition}'s log from its start to its end (nothing read for a null partition: a topic that
     * does not exist yet); {@link #finish} says what it left.
     */
    static TxnReplay of(final Partition partition)
    {
        final TxnReplay replay = new TxnReplay();
        if (partition == null)
        {
            return replay;
        }
        final RecordBatch batch = new RecordBatch();
        final RecordReader reader = new RecordReader();
        final LogTailer tailer = new LogTailer(partition.log, partition.log.logStartOffset());
        final long end = partition.log.logEndOffset();
        while (tailer.next(end, batch))
        {
            if (batch.isControl())
            {
                continue;
            }
            try
            {
                reader.reset(batch);
                while (reader.hasNext())
                {
                    final Record r = reader.next();
                    try
                    {
                        if (!r.hasKey())
                        {
                            throw new ProtocolException("key", "a record without a key");
                        }
                        replay.apply(r.buffer(), r.keyOffset(), r.keyLength(), r.valueOffset(), r.hasValue() ? r.valueLength() : -1);
                    }
                    catch (final RuntimeException ex) // read whole before it changes anything: a bad record is skipped
                    {
                        replay.bad(partition, r.offset(), "it cannot be read", ex);
                    }
                }
            }
            catch (final RuntimeException ex) // the records do not decompress, or are malformed: the rest of the batch is skipped
            {
                replay.bad(partition, batch.baseOffset(), "its batch's records cannot be read", ex);
            }
        }
        return replay;
    }

    /** One line per record (or rest of a batch) that cannot be read: it is skipped, the load goes on. */
    private void bad(final Partition partition, final long offset, final String why, final RuntimeException ex)
    {
        badRecords++;
        LOG.warn("{}-{} offset {}: a record skipped, {}: {}", partition.topic, partition.index, offset, why, ex.toString());
    }

    /** The records that could not be read, each skipped with a line in the log. */
    public int badRecords()
    {
        return badRecords;
    }

    /** The records read, skipped ones included. */
    public int records()
    {
        return records;
    }

    /** The records skipped: neither loaded nor removing anything. */
    public int skipped()
    {
        return skipped;
    }

    private void skip(final String transactionalId, final String why)
    {
        if (skipped++ == 0)
        {
            firstSkipped = transactionalId + " (" + why + ")";
        }
    }

    /** The partition's transactions; those prepared get Complete* pending, stamped {@code now}. */
    public Loaded finish(final long now)
    {
        if (skipped > 0)
        {
            LOG.warn("Skipped {} of {} __transaction_state records no coordinator writes, the first for {}; each left "
                + "the id as the records before it had it", skipped, records, firstSkipped);
        }
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
