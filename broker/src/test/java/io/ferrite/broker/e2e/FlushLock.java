package io.ferrite.broker.e2e;

import io.ferrite.log.PartitionLog;

import java.lang.reflect.Field;

/** A log's flush monitor, for tests that hold its fsync back: a flush (and so the move of its durable offset) happens only inside it. */
final class FlushLock
{
    private FlushLock()
    {
    }

    static Object of(final PartitionLog log) throws ReflectiveOperationException
    {
        final Field flusher = PartitionLog.class.getDeclaredField("flusher"); // LogFlusher owns the flush
        flusher.setAccessible(true);
        final Object owner = flusher.get(log);
        final Field f = owner.getClass().getDeclaredField("flushLock");
        f.setAccessible(true);
        return f.get(owner);
    }
}
