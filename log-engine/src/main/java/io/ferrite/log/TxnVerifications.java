package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * The produce side of Kafka's "hanging transaction" guard (KIP-890 part 1) on one partition: Kafka's
 * {@code VerificationStateEntry} per producer, with a {@code long} guard instead of an object. A
 * transactional batch that would open its producer's transaction here is not appended at once: its
 * first append ({@link LogTransactions#VERIFY_FIRST}) starts a verification — an entry with a fresh
 * guard, answered {@link AppendResult#VERIFICATION_NEEDED} with that guard — and the caller asks the
 * transaction coordinator whether the partition is in the transaction (or adds it, transaction
 * version 2), then appends again with the guard. Any transactional batch or marker of the producer
 * appended meanwhile removes the entry (but the marker of a transaction version 2 producer whose
 * next transaction already started, with the marker's bumped epoch), so a batch verified before a
 * marker and appended after it finds no entry or another guard: INVALID_TXN_STATE, the late write
 * Kafka's {@code VerificationGuard} refuses. No lock: the entries are the writer thread's, and the
 * coordinator is asked between the two appends, by whoever holds the guard.
 *
 * <p>Also Kafka's sequence rules of a verified batch ({@code ProducerAppendInfo.checkSequence}): with
 * transaction version 2 a producer this partition has no batch of must start at sequence 0, and a
 * batch above the lowest sequence that started verifying is out of order.
 *
 * <p>Entries are pooled (one per producer verifying at a time): a transactional producer in steady
 * state allocates nothing here. Writer thread only.
 */
final class TxnVerifications
{
    /** Entries kept for reuse: more producers than this verifying at once on one partition allocate. */
    private static final int POOLED = 64;

    private static final class Entry
    {
        long guard;
        int lowestSequence;
        short epoch;
        boolean supportsEpochBump;
        long timestampMs;
    }

    private final Long2ObjectHashMap<Entry> entries = new Long2ObjectHashMap<>();
    private final Entry[] pool = new Entry[POOLED];
    private int pooled;
    /** Guards are unique per partition log (positive; the constants of {@link LogTransactions} are not). */
    private long lastGuard;

    /**
     * A transactional batch that would open its producer's transaction (none open here with its
     * epoch; the epoch is not below the producer's).
     *
     * @param verification {@link LogTransactions#VERIFY_FIRST}, {@link LogTransactions#VERIFY_FIRST_EPOCH_BUMP}
     *     or the guard a first append answered
     * @return {@link AppendResult#OK}, {@link AppendResult#VERIFICATION_NEEDED} (the guard in
     *     {@link AppendResult#verificationGuard}), {@link AppendResult#INVALID_TXN_STATE} or
     *     {@link AppendResult#OUT_OF_ORDER_SEQUENCE}
     */
    int check(final RecordBatch batch, final ProducerState state, final long verification, final long nowMs,
        final AppendResult result)
    {
        final long producerId = batch.producerId();
        final int first = batch.baseSequence();
        final short epoch = batch.producerEpoch();
        Entry entry = entries.get(producerId);
        if (verification == LogTransactions.VERIFY_FIRST || verification == LogTransactions.VERIFY_FIRST_EPOCH_BUMP)
        {
            if (entry == null)
            {
                entry = pooled > 0 ? pool[--pooled] : new Entry();
                entry.guard = ++lastGuard;
                entry.lowestSequence = first;
                entry.epoch = epoch;
                entry.supportsEpochBump = verification == LogTransactions.VERIFY_FIRST_EPOCH_BUMP;
                entry.timestampMs = nowMs;
                entries.put(producerId, entry);
            }
            else if (epoch > entry.epoch)
            {
                entry.epoch = epoch; // Kafka's maybeUpdateLowestSequenceAndEpoch
                entry.lowestSequence = first;
            }
            else if (epoch == entry.epoch && first < entry.lowestSequence)
            {
                entry.lowestSequence = first;
            }
            result.verificationGuard = entry.guard;
            return AppendResult.VERIFICATION_NEEDED;
        }
        if (entry == null || entry.guard != verification)
        {
            result.message = LogMessages.verifiedTxnEnded(producerId);
            return AppendResult.INVALID_TXN_STATE;
        }
        if (entry.supportsEpochBump && first != 0 && (state == null || state.isEmpty()))
        {
            result.message = LogMessages.notFromZero(producerId, first);
            return AppendResult.OUT_OF_ORDER_SEQUENCE;
        }
        if (first > entry.lowestSequence)
        {
            result.message = LogMessages.outOfOrder(producerId, first, entry.lowestSequence, " (earliest seen sequence)");
            return AppendResult.OUT_OF_ORDER_SEQUENCE;
        }
        return AppendResult.OK;
    }

    /**
     * A transactional batch or marker of {@code batch}'s producer was appended (or recovered): its
     * verification ends, but for a transaction version 2 marker with the epoch the entry was started
     * with (Kafka's {@code isV2NextTransactionStarted}: the next transaction already verifies).
     */
    void appended(final RecordBatch batch)
    {
        if (entries.isEmpty())
        {
            return;
        }
        final long producerId = batch.producerId();
        final Entry entry = entries.get(producerId);
        if (entry != null && !(entry.supportsEpochBump && batch.isControl() && batch.producerEpoch() == entry.epoch))
        {
            entries.remove(producerId);
            release(entry);
        }
    }

    /**
     * Drops entries started {@code expiryMs} or more before {@code nowMs} (Kafka's removeExpiredProducers,
     * after {@code producer.id.expiration.ms}): an entry whose verification was refused or abandoned stays
     * until then, or until its producer's next transactional batch or marker here.
     */
    void expire(final long nowMs, final long expiryMs)
    {
        final Long2ObjectHashMap<Entry>.ValueIterator values = entries.values().iterator();
        while (values.hasNext())
        {
            final Entry entry = values.next();
            if (nowMs - entry.timestampMs >= expiryMs)
            {
                values.remove();
                release(entry);
            }
        }
    }

    /** Producers verifying now (writer thread; the expiry skips a log with none, and tests). */
    int size()
    {
        return entries.size();
    }

    private void release(final Entry entry)
    {
        if (pooled < POOLED)
        {
            pool[pooled++] = entry;
        }
    }
}
