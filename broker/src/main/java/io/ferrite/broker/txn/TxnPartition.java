package io.ferrite.broker.txn;

/** A topic partition taking part in a transaction. */
public record TxnPartition(String topic, int partition)
{
}
