package io.ferrite.broker.metrics;

import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * What an outside reader of the counters (and of the logs) holds while it reads: a reading under way when the broker
 * closes ends before {@link #close} returns, and one that comes later reads nothing — the broker unmaps the counters
 * file and closes its logs after closing its exports ({@code MetricsExports}), and a read of the unmapped file would
 * crash the JVM. Readings run side by side (a read lock); only {@link #close} waits for them.
 */
public final class CounterReadGate
{
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private boolean closed; // guarded by lock

    /** {@code reading}'s result, or {@code whenClosed} (not calling it) once this gate is closed. */
    public <T> T read(final Supplier<T> reading, final T whenClosed)
    {
        lock.readLock().lock();
        try
        {
            return closed ? whenClosed : reading.get();
        }
        finally
        {
            lock.readLock().unlock();
        }
    }

    /** Waits for the readings under way, then lets none read any more. */
    public void close()
    {
        lock.writeLock().lock();
        try
        {
            closed = true;
        }
        finally
        {
            lock.writeLock().unlock();
        }
    }
}
