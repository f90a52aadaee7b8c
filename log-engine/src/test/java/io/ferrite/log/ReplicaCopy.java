package io.ferrite.log;

import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The follower tests' two halves: a leader log written as a broker writes one (plain, compressed,
 * idempotent and transactional batches, COMMIT and ABORT markers, leader epochs that move), and the copy of
 * its batches into a follower log through {@link PartitionLog#appendAsFollower}, as a fetcher would, in
 * chunks of whole batches with sometimes the start of the next one (a fetch answer cut at its byte limit).
 */
final class ReplicaCopy
{
    static final long T0 = System.currentTimeMillis();
    private static final CompressionType[] CODECS = CompressionType.values();

    private final Batches batches = new Batches();
    private final AppendResult result = new AppendResult();
    private final Map<Long, Integer> sequences = new HashMap<>();
    /** Producers with a transaction open on the leader, and their epochs. */
    private final Map<Long, Short> open = new TreeMap<>();
    private final ExpandableDirectByteBuffer fetched = new ExpandableDirectByteBuffer(1 << 16);
    private final RecordBatch batch = new RecordBatch();
    private final RecordBatchBuilder builder = new RecordBatchBuilder();
    int leaderEpoch = 1;

    /** {@code steps} random appends (and markers) to {@code leader}. */
    void writeLeader(final PartitionLog leader, final Random r, final int steps)
    {
        leader.leaderEpoch(leaderEpoch);
        for (int i = 0; i < steps; i++)
        {
            final int kind = r.nextInt(10);
            if (kind == 0 && r.nextInt(4) == 0)
            {
                leader.leaderEpoch(leaderEpoch += 1 + r.nextInt(2));
            }
            if (kind <= 2)
            {
                batches.build(1 + r.nextInt(6), r.nextLong() & 0xffff, T0 + i, CODECS[r.nextInt(CODECS.length)], -1, (short)-1, -1);
                append(leader);
            }
            else if (kind <= 4)
            {
                send(leader, 1 + r.nextInt(3), false, r);
            }
            else if (kind <= 7)
            {
                send(leader, 10 + r.nextInt(3), true, r);
            }
            else if (!open.isEmpty())
            {
                final long pid = new ArrayList<>(open.keySet()).get(r.nextInt(open.size()));
                leader.transactions().appendMarker(pid, open.remove(pid), 0, r.nextBoolean(), false, result);
                assertEquals(AppendResult.OK, result.status, result.toString());
            }
        }
    }

    private void send(final PartitionLog leader, final long pid, final boolean transactional, final Random r)
    {
        final int seq = sequences.getOrDefault(pid, 0);
        final int count = 1 + r.nextInt(4);
        builder.wrap(batches.buffer, 0).producer(pid, (short)0, seq).transactional(transactional)
            .compression(r.nextInt(3) == 0 ? CODECS[r.nextInt(CODECS.length)] : CompressionType.NONE);
        for (int i = 0; i < count; i++)
        {
            builder.appendRecord(T0 + i, ("k" + i).getBytes(StandardCharsets.UTF_8), Batches.value(pid + seq, i));
        }
        batches.length = builder.build();
        if (transactional)
        {
            open.put(pid, (short)0);
        }
        append(leader);
        sequences.put(pid, seq + count);
    }

    private void append(final PartitionLog leader)
    {
        leader.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
    }

    /**
     * Copies what the follower lacks of the leader, in fetches of 1 to {@code maxBatches} whole batches, each
     * with a random part of the next batch after them when {@code partialTails}; checks every append.
     *
     * @return the number of follower appends
     */
    int copy(final PartitionLog leader, final PartitionLog follower, final Random r, final int maxBatches,
        final boolean partialTails)
    {
        int appends = 0;
        while (follower.logEndOffset() < leader.logEndOffset())
        {
            final long start = follower.logEndOffset();
            final int length = fetch(leader, start, 1 + r.nextInt(maxBatches), partialTails ? r : null);
            follower.appendAsFollower(fetched, 0, length, leaderEpoch, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            assertEquals(start, result.firstOffset, "first offset of the follower's append");
            assertEquals(follower.logEndOffset() - 1, result.lastOffset);
            appends++;
        }
        return appends;
    }

    /** Up to {@code count} whole batches of the leader from {@code offset} into the fetch buffer, plus part of the next one. */
    int fetch(final PartitionLog leader, final long offset, final int count, final Random partialTail)
    {
        int length = 0;
        long next = offset;
        for (int i = 0; i < count && next < leader.logEndOffset(); i++)
        {
            assertEquals(PartitionLog.READ_OK, leader.readBatch(next, leader.logEndOffset(), batch));
            fetched.putBytes(length, batch.buffer(), batch.offset(), batch.sizeInBytes());
            length += batch.sizeInBytes();
            next = batch.lastOffset() + 1;
        }
        if (partialTail != null && next < leader.logEndOffset() && partialTail.nextBoolean())
        {
            assertEquals(PartitionLog.READ_OK, leader.readBatch(next, leader.logEndOffset(), batch));
            final int part = partialTail.nextInt(batch.sizeInBytes());
            fetched.putBytes(length, batch.buffer(), batch.offset(), part);
            length += part;
        }
        return length;
    }

    ExpandableDirectByteBuffer fetched()
    {
        return fetched;
    }

    AppendResult result()
    {
        return result;
    }

    /** Every file of the partition directory {@code a}, byte for byte in {@code b}, and no other. */
    static void assertSameFiles(final Path a, final Path b) throws IOException
    {
        final Map<String, byte[]> left = files(a);
        final Map<String, byte[]> right = files(b);
        assertEquals(left.keySet(), right.keySet(), "files of " + a + " and " + b);
        assertTrue(left.keySet().stream().anyMatch(n -> n.endsWith(".log")));
        for (final Map.Entry<String, byte[]> e : left.entrySet())
        {
            assertArrayEquals(e.getValue(), right.get(e.getKey()), e.getKey() + " differs");
        }
    }

    static Map<String, byte[]> files(final Path dir) throws IOException
    {
        final Map<String, byte[]> out = new TreeMap<>();
        try (Stream<Path> list = Files.list(dir))
        {
            for (final Path p : (Iterable<Path>)list::iterator)
            {
                out.put(p.getFileName().toString(), Files.readAllBytes(p));
            }
        }
        return out;
    }

    /** Each producer the log remembers, as DescribeProducers lists it (writer-thread state, read after the appends). */
    static List<String> producers(final PartitionLog log)
    {
        final List<String> out = new ArrayList<>();
        log.transactions().forEachProducer((pid, epoch, lastSequence, lastTimestamp, coordinatorEpoch, txnFirstOffset) ->
            out.add(pid + "/" + epoch + "/" + lastSequence + "/" + lastTimestamp + "/" + coordinatorEpoch + "/" + txnFirstOffset));
        out.sort(null);
        return out;
    }

    /** A property over fresh log directories under {@code root} ({@code run0}, {@code run1}, ...), one per try. */
    static void property(final String name, final int tries, final Path root, final DirCheck check)
    {
        final int[] run = new int[1];
        io.ferrite.wire.testing.Property.check(name, tries, r ->
        {
            try
            {
                check.check(root.resolve("run" + run[0]++), r);
            }
            catch (final IOException ex)
            {
                throw new java.io.UncheckedIOException(ex);
            }
        });
    }

    /** One try of {@link #property}. */
    @FunctionalInterface
    interface DirCheck
    {
        void check(Path data, Random r) throws IOException;
    }

    /** Segments and indexes small enough to roll often, by size and by full indexes (a random config, mutable). */
    static Map<String, String> smallSegments(final Random r)
    {
        final Map<String, String> config = new HashMap<>();
        config.put(LogConfig.INTERNAL_SEGMENT_BYTES, Integer.toString(1500 + r.nextInt(4000)));
        config.put(LogConfig.INDEX_INTERVAL_BYTES, Integer.toString(r.nextInt(600)));
        config.put(LogConfig.SEGMENT_INDEX_BYTES, Integer.toString(48 + 24 * r.nextInt(8)));
        return config;
    }

    /** Every batch of the log, its bytes in offset order (a follower's must be its leader's). */
    static byte[] content(final PartitionLog log)
    {
        final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        final RecordBatch batch = new RecordBatch();
        long next = log.logStartOffset();
        while (next < log.logEndOffset() && log.readBatch(next, log.logEndOffset(), batch) == PartitionLog.READ_OK)
        {
            final byte[] b = new byte[batch.sizeInBytes()];
            batch.buffer().getBytes(batch.offset(), b);
            out.writeBytes(b);
            next = batch.lastOffset() + 1;
        }
        return out.toByteArray();
    }

    static String describe(final PartitionLog log)
    {
        return log + " LEO " + log.logEndOffset() + " segments " + log.segmentCount() + " producers " + Arrays.toString(producers(log).toArray());
    }
}
