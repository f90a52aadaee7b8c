package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.logthread.AppendCommand;
import io.ferrite.log.LogTransactions;
import org.agrona.DirectBuffer;

import java.util.Arrays;

import static io.ferrite.wire.record.RecordBatchDescriptor.PRODUCER_EPOCH_OFFSET;
import static io.ferrite.wire.record.RecordBatchDescriptor.PRODUCER_ID_OFFSET;
import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * One Produce request's batches waiting for the transaction coordinator's verification (Kafka
 * 4.4's {@code AddPartitionsToTxnManager} and {@code ReplicaManager}): which slots, the question
 * asked for them together ({@link TxnVerifier}), and the coordinator's errors translated for the
 * produce version. A produce v12+ (a transaction version 2 client) has the coordinator add the
 * partitions; an older one only verifies that they are in the transaction. Reused by its request
 * (the per-slot arrays grow, never shrink); the question itself allocates, once per transaction and
 * partition. Network thread only.
 */
final class ProduceVerification
{
    private int[] slots = new int[4];
    private String[] topics = new String[4];
    private int[] partitions = new int[4];
    private int count;
    private TxnVerifier.Verification asked;

    /** What a transactional batch of a produce of {@code version} passes its first append (see {@link LogTransactions#append}). */
    static long start(final short version)
    {
        return version >= 12 ? LogTransactions.VERIFY_FIRST_EPOCH_BUMP : LogTransactions.VERIFY_FIRST;
    }

    void reset()
    {
        Arrays.fill(topics, 0, count, null);
        count = 0;
        asked = null;
    }

    /** The batch of {@code slot} came back to be verified. */
    void add(final int slot)
    {
        if (count == slots.length)
        {
            slots = Arrays.copyOf(slots, count * 2);
            topics = Arrays.copyOf(topics, count * 2);
            partitions = Arrays.copyOf(partitions, count * 2);
        }
        slots[count++] = slot;
    }

    /** Batches waiting to be verified. */
    int waiting()
    {
        return count;
    }

    int slot(final int i)
    {
        return slots[i];
    }

    boolean asked()
    {
        return asked != null;
    }

    boolean answered()
    {
        return asked.done();
    }

    /**
     * Asks the coordinator about every waiting batch (each command's batch is still in {@code in}): all
     * of one producer id and epoch, as the request's start refused one naming more (Kafka's
     * "Transactional records contained more than one producer ID").
     */
    void ask(final TxnVerifier verifier, final String transactionalId, final AppendCommand[] commands, final DirectBuffer in,
        final boolean add, final Runnable waker)
    {
        for (int i = 0; i < count; i++)
        {
            final AppendCommand command = commands[slots[i]];
            topics[i] = command.partition.topic;
            partitions[i] = command.partition.index;
        }
        final AppendCommand first = commands[slots[0]];
        final long producerId = in.getLong(first.offset + PRODUCER_ID_OFFSET, BIG_ENDIAN);
        final short epoch = in.getShort(first.offset + PRODUCER_EPOCH_OFFSET, BIG_ENDIAN);
        asked = verifier.verify(transactionalId, producerId, epoch, topics, partitions, count, add, waker);
    }

    /** Once {@link #answered}: the produce's error for the {@code i}-th batch waiting. */
    short error(final int i, final short version)
    {
        return forProduce(asked.error(i), version);
    }

    /**
     * The coordinator's answer as a produce of {@code version} gets it (Kafka's {@code AddPartitionsToTxnManager}
     * then {@code ReplicaManager}): PRODUCER_FENCED is INVALID_PRODUCER_EPOCH; TRANSACTION_ABORTABLE
     * (the partition is not in the transaction) is INVALID_TXN_STATE up to v10, which know no
     * TRANSACTION_ABORTABLE; the retriable coordinator errors (and NETWORK_EXCEPTION: the coordinator on another
     * node could not be reached, {@code txn.RemoteVerifier}) are NOT_ENOUGH_REPLICAS, which every
     * client retries without refreshing its metadata — but CONCURRENT_TRANSACTIONS from v12 (an add,
     * already retried by the coordinator's side, {@code txn.ProduceVerifier}) is passed on, as Kafka's
     * {@code ReplicaManager} passes it on when the operation supports the epoch bump; any other error
     * is passed on.
     */
    static short forProduce(final short error, final short version)
    {
        switch (error)
        {
            case Errors.PRODUCER_FENCED:
                return Errors.INVALID_PRODUCER_EPOCH;
            case Errors.TRANSACTION_ABORTABLE:
                return version <= 10 ? Errors.INVALID_TXN_STATE : Errors.TRANSACTION_ABORTABLE;
            case Errors.CONCURRENT_TRANSACTIONS:
                return version >= 12 ? Errors.CONCURRENT_TRANSACTIONS : Errors.NOT_ENOUGH_REPLICAS;
            case Errors.COORDINATOR_LOAD_IN_PROGRESS:
            case Errors.COORDINATOR_NOT_AVAILABLE:
            case Errors.NOT_COORDINATOR:
            case Errors.NETWORK_EXCEPTION:
                return Errors.NOT_ENOUGH_REPLICAS;
            default:
                return error;
        }
    }

    /** The response's error message of the {@code i}-th batch, refused {@code error}. */
    String message(final int i, final short error)
    {
        final short coordinator = asked.error(i);
        if (error == Errors.NOT_ENOUGH_REPLICAS)
        {
            return "Unable to verify the partition has been added to the transaction. Underlying error code: " + coordinator;
        }
        return error == Errors.INVALID_TXN_STATE ? "Partition was not added to the transaction" : null;
    }
}
