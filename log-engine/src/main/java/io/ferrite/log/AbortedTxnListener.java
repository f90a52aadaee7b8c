package io.ferrite.log;

/**
 * Told of each transaction an ABORT marker ended on this partition: what Kafka's {@code .txnindex}
 * entry ({@code AbortedTxn} v0) holds. Called on the log's writer thread, after the marker's bytes
 * are in the segment and before the log end that publishes them moves; and while the log loads, for
 * every aborted transaction whose marker recovery or the replay after the producer snapshot passes
 * (so an index that already has the entry sees it again: its last offsets only increase, which is
 * how a repeat is recognised). While the log loads, the loader's listener indexes each such
 * transaction in the segment being walked when its {@code .txnindex} lacks it, then tells the log's;
 * once loaded, an appended ABORT's entry is written by {@link BatchPlacer#place} before the marker's
 * bytes, not through a listener. The log's own listener is {@link #NONE} but in tests
 * ({@link LogTransactions#abortedTxnListener}).
 */
interface AbortedTxnListener
{
    AbortedTxnListener NONE = (producerId, firstOffset, lastOffset, lastStableOffset) ->
    {
    };

    /**
     * @param producerId       the producer whose transaction was aborted
     * @param firstOffset      the offset of the transaction's first batch on this partition
     * @param lastOffset       the ABORT marker's offset
     * @param lastStableOffset the first offset of the oldest transaction of another producer still open
     *                         then, else {@code lastOffset + 1} (Kafka's {@code ProducerStateManager.lastStableOffset})
     */
    void onAbortedTxn(long producerId, long firstOffset, long lastOffset, long lastStableOffset);
}
