package io.ferrite.log;

import org.agrona.concurrent.OneToOneConcurrentArrayQueue;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The producer snapshots a log's rolls write ({@link ProducerStateManager#takeSnapshot}), forced later
 * off the writer thread by the rolled flush ({@link RolledFlusher}) before the sealed segments and the
 * directory, as Kafka's {@code UnifiedLog.flushProducerStateSnapshot}: a snapshot a power loss damages
 * fails its CRC and recovery falls back to an older one plus replay, but when retention has deleted
 * the first batch of a transaction the lost snapshot still covered, that replay misses that the
 * transaction was open. When {@value #CAPACITY} rolls wait for the flush, the writer forces the next
 * one itself.
 */
final class RollSnapshots
{
    /** Rolls of one log between two of its rolled flushes: 16 is a burst of small segments. */
    private static final int CAPACITY = 16;

    /** Offered by the writer (a roll), polled by the rolled flush's one thread (or the writer, inline). */
    private final OneToOneConcurrentArrayQueue<Path> unforced = new OneToOneConcurrentArrayQueue<>(CAPACITY);

    /** A roll's (writer thread): writes the snapshot and queues it for the rolled flush. */
    void takeAtRoll(final ProducerStateManager producers) throws IOException
    {
        final Path file = producers.takeSnapshot();
        if (!unforced.offer(file))
        {
            force(file);
        }
    }

    /**
     * Forces the snapshots the rolls wrote since the last call (the rolled flush's thread, before it
     * fsyncs the sealed segments and the directory, whose fsync makes their names durable: each was
     * written to a temporary file and renamed). One deleted meanwhile (retention, or the partition's
     * deletion) is passed over.
     */
    void forceAll() throws IOException
    {
        Path file;
        while ((file = unforced.poll()) != null)
        {
            force(file);
        }
    }

    private static void force(final Path file) throws IOException
    {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ))
        {
            channel.force(true);
        }
        catch (final NoSuchFileException deleted)
        {
            // retention or the partition's deletion took it: nothing to make durable
        }
    }
}
