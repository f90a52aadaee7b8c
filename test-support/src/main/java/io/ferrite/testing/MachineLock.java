package io.ferrite.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A lock held across every JVM on the machine, for the few tests that read or load a machine-wide resource: the
 * test JVMs of one module run two at a time (surefire {@code forkCount}), and a test measuring the system's shared
 * memory ({@code Shmem} in {@code /proc/meminfo}) must not run while another JVM's test fills {@code /dev/shm}.
 * An advisory {@code fcntl} lock on a file in {@code java.io.tmpdir}, named after the resource; it blocks until
 * free and is released by {@link #close} or when the JVM ends (a killed fork never leaves it held).
 *
 * <p>One holder per JVM at a time: JUnit runs a fork's tests one after another, and a second {@code hold} of the
 * same name in one JVM fails ({@link java.nio.channels.OverlappingFileLockException}) rather than waiting for
 * itself.
 */
public final class MachineLock implements AutoCloseable
{
    /** The name of the lock for {@code /dev/shm}: held by tests that write it or measure the system's shared memory. */
    public static final String DEV_SHM = "dev-shm";

    private final FileChannel channel;
    private final FileLock lock;

    private MachineLock(final FileChannel channel, final FileLock lock)
    {
        this.channel = channel;
        this.lock = lock;
    }

    /** Waits until no other JVM holds the lock of this name, then holds it. */
    public static MachineLock hold(final String name)
    {
        final Path file = Path.of(System.getProperty("java.io.tmpdir"), "ferrite-tests-" + name + ".lock");
        FileChannel channel = null;
        try
        {
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            return new MachineLock(channel, channel.lock());
        }
        catch (final IOException | RuntimeException ex)
        {
            if (channel != null)
            {
                try
                {
                    channel.close();
                }
                catch (final IOException suppressed)
                {
                    ex.addSuppressed(suppressed);
                }
            }
            if (ex instanceof IOException io)
            {
                throw new UncheckedIOException("cannot lock " + file, io);
            }
            throw (RuntimeException)ex;
        }
    }

    @Override
    public void close()
    {
        try
        {
            lock.release();
            channel.close();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }
}
