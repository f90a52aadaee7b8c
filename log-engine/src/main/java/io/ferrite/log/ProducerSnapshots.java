package io.ferrite.log;

import io.ferrite.wire.record.Crc32c;
import io.ferrite.wire.record.RecordBatchDescriptor;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.stream.Stream;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * A partition's producer snapshot files, {@code <offset>.snapshot} in Kafka's version 1 layout (Kafka's
 * {@code ProducerStateManager.writeSnapshot} / {@code readSnapshot} read and write the same bytes):
 * <pre>
 *   version: int16 (1)
 *   crc: uint32                       CRC32C of everything after this field
 *   entries: int32 count, then per producer:
 *     producer id: int64, epoch: int16, last sequence: int32, last offset: int64,
 *     offset delta: int32, timestamp: int64, coordinator epoch: int32, current txn first offset: int64
 * </pre>
 * The files and their names: writing one (through a temporary file and a rename), reading and checking
 * one, listing, and deleting those retention or a truncation left behind. What the state is, and which
 * entries it keeps, is {@link ProducerStateManager}'s.
 */
final class ProducerSnapshots
{
    static final String SNAPSHOT_SUFFIX = ".snapshot";
    private static final short SNAPSHOT_VERSION = 1;
    private static final int HEADER = 2 + 4 + 4;
    private static final int ENTRY = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8;

    /** Takes each producer a snapshot holds, with its open transaction's first offset (or -1). */
    @FunctionalInterface
    interface EntrySink
    {
        void entry(ProducerState state, long txnFirstOffset);
    }

    private ProducerSnapshots()
    {
    }

    static Path snapshotFile(final Path dir, final long offset)
    {
        return dir.resolve(Segment.fileName(offset, SNAPSHOT_SUFFIX));
    }

    /**
     * Writes {@code <offset>.snapshot} of {@code producers} in {@code dir} through a temporary file and an
     * atomic rename; not forced (the caller's choice).
     *
     * @return the snapshot file
     */
    static Path write(final Path dir, final long offset, final Collection<ProducerState> producers) throws IOException
    {
        final List<ProducerState> states = new ArrayList<>(producers);
        final ByteBuffer buffer = ByteBuffer.allocate(HEADER + states.size() * ENTRY).order(BIG_ENDIAN);
        buffer.putShort(SNAPSHOT_VERSION).putInt(0).putInt(states.size());
        for (final ProducerState s : states)
        {
            buffer.putLong(s.producerId).putShort(s.epoch).putInt(s.lastSequence()).putLong(s.lastOffset())
                .putInt(s.lastOffsetDelta()).putLong(s.lastTimestamp).putInt(s.coordinatorEpoch)
                .putLong(s.currentTxnFirstOffset);
        }
        final UnsafeBuffer view = new UnsafeBuffer(buffer.array());
        view.putInt(2, new Crc32c().compute(view, 6, buffer.capacity() - 6), BIG_ENDIAN);
        final Path file = snapshotFile(dir, offset);
        final Path tmp = dir.resolve(file.getFileName() + ".tmp");
        try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING))
        {
            buffer.flip();
            while (buffer.hasRemaining())
            {
                channel.write(buffer);
            }
        }
        catch (final IOException ex)
        {
            Files.deleteIfExists(tmp); // a full disk: leave no partial file behind
            throw ex;
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        return file;
    }

    /**
     * Reads a snapshot: checks its version, length and CRC first, then gives each entry to {@code sink}
     * in file order. A snapshot keeps each producer's last batch only.
     *
     * @return false (and nothing given to the sink) when the file is damaged or of another version
     */
    static boolean read(final Path file, final EntrySink sink) throws IOException
    {
        final byte[] bytes = Files.readAllBytes(file);
        if (bytes.length < HEADER)
        {
            return false;
        }
        final UnsafeBuffer b = new UnsafeBuffer(bytes);
        final int count = b.getInt(6, BIG_ENDIAN);
        if (b.getShort(0, BIG_ENDIAN) != SNAPSHOT_VERSION || count < 0 || bytes.length != HEADER + (long)count * ENTRY ||
            b.getInt(2, BIG_ENDIAN) != new Crc32c().compute(b, 6, bytes.length - 6))
        {
            return false;
        }
        for (int i = 0, p = HEADER; i < count; i++, p += ENTRY)
        {
            final ProducerState s = new ProducerState(b.getLong(p, BIG_ENDIAN));
            final short epoch = b.getShort(p + 8, BIG_ENDIAN);
            final int lastSeq = b.getInt(p + 10, BIG_ENDIAN);
            final long lastOffset = b.getLong(p + 14, BIG_ENDIAN);
            final int delta = b.getInt(p + 22, BIG_ENDIAN);
            final long ts = b.getLong(p + 26, BIG_ENDIAN);
            s.coordinatorEpoch = b.getInt(p + 34, BIG_ENDIAN);
            final long txnFirstOffset = b.getLong(p + 38, BIG_ENDIAN);
            s.epoch = epoch;
            if (lastOffset >= 0)
            {
                final int firstSeq = lastSeq == RecordBatchDescriptor.NO_SEQUENCE ? lastSeq :
                    ProducerStateManager.decrementSequence(lastSeq, delta);
                s.addBatch(epoch, firstSeq, lastSeq, lastOffset, delta, ts);
            }
            s.lastTimestamp = ts; // a marker's, when it came after the last batch
            sink.entry(s, txnFirstOffset);
        }
        return true;
    }

    /** Snapshot offsets in the directory, newest first. */
    static List<Long> snapshotOffsets(final Path dir) throws IOException
    {
        final List<Long> offsets = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir))
        {
            files.map(p -> p.getFileName().toString())
                .filter(n -> n.endsWith(SNAPSHOT_SUFFIX) && n.length() == 20 + SNAPSHOT_SUFFIX.length())
                .forEach(n -> offsets.add(Long.parseLong(n.substring(0, 20))));
        }
        offsets.sort((a, b) -> Long.compare(b, a));
        return offsets;
    }

    /** Deletes snapshots below {@code offset} except the newest of them (retention moved past them). */
    static void deleteSnapshotsBelow(final Path dir, final long offset) throws IOException
    {
        boolean keptOne = false;
        for (final long o : snapshotOffsets(dir))
        {
            if (o < offset)
            {
                if (keptOne)
                {
                    Files.deleteIfExists(snapshotFile(dir, o));
                }
                keptOne = true;
            }
        }
    }

    /** Deletes snapshots above {@code offset} (the log was truncated or recovered to it). */
    static void deleteSnapshotsAbove(final Path dir, final long offset) throws IOException
    {
        for (final long o : snapshotOffsets(dir))
        {
            if (o > offset)
            {
                Files.deleteIfExists(snapshotFile(dir, o));
            }
        }
    }
}
