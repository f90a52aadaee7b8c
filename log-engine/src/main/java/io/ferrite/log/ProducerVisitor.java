package io.ferrite.log;

/** Sees each producer a partition remembers ({@link LogTransactions#forEachProducer}): what DescribeProducers answers. */
@FunctionalInterface
public interface ProducerVisitor
{
    /**
     * @param lastSequence          the sequence of its last batch, or -1
     * @param lastTimestamp         the max timestamp of its last batch or its last marker's timestamp, or -1
     * @param coordinatorEpoch      the coordinator epoch of its last marker, or -1
     * @param currentTxnFirstOffset the first offset of its transaction open on the partition, or -1
     */
    void visit(long producerId, short epoch, int lastSequence, long lastTimestamp, int coordinatorEpoch, long currentTxnFirstOffset);
}
