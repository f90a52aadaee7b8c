package io.ferrite.broker.group;

import io.ferrite.broker.Errors;

import java.util.Arrays;

/**
 * One topic of an offset commit's response (OffsetCommit, TxnOffsetCommit), filled in on the network
 * thread as the request is decoded: its name or id, and each partition with its own error and whether
 * it went on to the coordinator, whose answer it then takes ({@link #answer}).
 */
final class TopicErrors
{
    final String name;
    final long idMsb;
    final long idLsb;
    int count;
    private int[] partitions = new int[4];
    private short[] errors = new short[4];
    private boolean[] toCoordinator = new boolean[4];

    TopicErrors(final String name, final long idMsb, final long idLsb)
    {
        this.name = name;
        this.idMsb = idMsb;
        this.idLsb = idLsb;
    }

    /** A partition with its own error (NONE if it passed its checks), and whether the coordinator answers it. */
    void add(final int partition, final short error, final boolean coordinator)
    {
        if (count == partitions.length)
        {
            partitions = Arrays.copyOf(partitions, count * 2);
            errors = Arrays.copyOf(errors, count * 2);
            toCoordinator = Arrays.copyOf(toCoordinator, count * 2);
        }
        partitions[count] = partition;
        toCoordinator[count] = coordinator;
        errors[count++] = error;
    }

    int partition(final int i)
    {
        return partitions[i];
    }

    /**
     * Partition {@code i}'s answer: its own error when the coordinator did not answer it; else the
     * coordinator's {@code error}, or its own (not NONE) unless the coordinator's is {@code everyPartition}'s.
     */
    short answer(final int i, final short error, final boolean everyPartition)
    {
        final short own = errors[i];
        return !toCoordinator[i] ? own : everyPartition || own == Errors.NONE ? error : own;
    }

    /** Whether some partition went on to the coordinator. */
    boolean anyToCoordinator()
    {
        for (int i = 0; i < count; i++)
        {
            if (toCoordinator[i])
            {
                return true;
            }
        }
        return false;
    }
}
