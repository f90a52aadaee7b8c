package io.ferrite.log.clean;

/**
 * Told of each aborted transaction whose ABORT marker a clean keeps because some of its data batches were in
 * the cleaned range: the entry the cleaned segment's {@code .txnindex} must hold again (Kafka's
 * {@code CleanedTransactionMetadata} appends it to the cleaned index). Called on the cleaner's thread.
 */
@FunctionalInterface
public interface KeptAbortedTxn
{
    KeptAbortedTxn NONE = (producerId, firstOffset, lastOffset, lastStableOffset) ->
    {
    };

    void keep(long producerId, long firstOffset, long lastOffset, long lastStableOffset);
}
