package io.ferrite.broker.topic;

import io.ferrite.log.PartitionLog;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One partition of a topic: its log and the log thread that owns (alone appends to) it. Fetches
 * waiting for data register here, so that an advance of the high watermark wakes only the network
 * threads that have a fetch parked.
 */
public final class Partition
{
    private static final VarHandle PARKED;

    static
    {
        try
        {
            PARKED = MethodHandles.lookup().findVarHandle(Partition.class, "parkedFetches", int.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    public final String topic;
    public final int index;
    public final PartitionLog log;
    /** The log thread that appends to this partition. */
    public final int owner;
    @SuppressWarnings("unused") // through PARKED
    private volatile int parkedFetches;

    Partition(final String topic, final int index, final PartitionLog log, final int owner)
    {
        this.topic = topic;
        this.index = index;
        this.log = log;
        this.owner = owner;
    }

    public void fetchParked()
    {
        PARKED.getAndAdd(this, 1);
    }

    public void fetchUnparked()
    {
        PARKED.getAndAdd(this, -1);
    }

    public boolean hasParkedFetches()
    {
        return (int)PARKED.getOpaque(this) > 0;
    }

    @Override
    public String toString()
    {
        return topic + "-" + index;
    }
}
