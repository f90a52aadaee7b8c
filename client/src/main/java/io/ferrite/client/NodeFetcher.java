package io.ferrite.client;

import io.ferrite.wire.compress.Codecs;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordReader;
import org.agrona.ExpandableDirectByteBuffer;

/**
 * The consumer's side of one broker: at most one Fetch in flight, and the answers it gave, copied out of the
 * connection's receive buffer (which the next read reuses) into two off-heap buffers: {@link #arrived}, the answer
 * not handed out yet, and {@link #draining}, the one {@code poll} hands out now (one copy per answer). The next Fetch goes when
 * {@code poll} takes {@link #arrived} (the two swap), so a fetch is in flight while the application reads the last
 * answer and at most two answers are held per broker. With each stage go the partitions and offsets its Fetch asked
 * for: an answer is handed out for a partition only while the partition's position is the offset asked for (a seek
 * since makes it stale, as kafka-clients discards a stale completed fetch).
 */
final class NodeFetcher
{
    /**
     * The partitions a Fetch named, with the offset it asked for each and the partition's generation then (a seek or
     * a leader move since makes the answer stale); the three stages swap these, allocating nothing.
     */
    static final class Asked
    {
        FetchPosition[] parts = new FetchPosition[0];
        long[] offsets = new long[0];
        int[] generations = new int[0];
        int count;

        /** Grows by copying: a stage may describe a Fetch in flight or an answer not handed out yet. */
        void ensureCapacity(final int partitions)
        {
            if (parts.length < partitions)
            {
                parts = java.util.Arrays.copyOf(parts, partitions);
                offsets = java.util.Arrays.copyOf(offsets, partitions);
                generations = java.util.Arrays.copyOf(generations, partitions);
            }
        }

        void add(final FetchPosition p, final long offset)
        {
            parts[count] = p;
            generations[count] = p.generation;
            offsets[count++] = offset;
        }

        /** Whether the Fetch named {@code p} at its current fetch offset and generation (its answer is not stale). */
        boolean current(final FetchPosition p)
        {
            for (int i = 0; i < count; i++)
            {
                if (parts[i] == p)
                {
                    return offsets[i] == p.fetchOffset && generations[i] == p.generation;
                }
            }
            return false;
        }

        void clear()
        {
            java.util.Arrays.fill(parts, 0, count, null);
            count = 0;
        }
    }

    /**
     * One answer's bytes with the batch flyweight and record reader (codecs, decompression buffer) that read them: they
     * stay with their buffer, as the CRC's and the codecs' ByteBuffer views are made once per buffer (one flyweight
     * moved between two buffers made a view, 64 bytes, per answer).
     */
    static final class Answer
    {
        final ExpandableDirectByteBuffer bytes = new ExpandableDirectByteBuffer(64 * 1024);
        final RecordBatch batch = new RecordBatch();
        final RecordReader reader = new RecordReader(new Codecs(), RecordReader.DEFAULT_MAX_DECOMPRESSED_BYTES);
        /** -1 when it holds no answer. */
        int length = -1;
        short version;
        /** What the Fetch asked for. */
        Asked asked = new Asked();
    }

    final int nodeId;
    /** The longest Fetch answer copied in so far (bytes). */
    int largestAnswer;
    boolean fetchInFlight;
    boolean listOffsetsInFlight;
    /** What the Fetch in flight asked for. */
    Asked sent = new Asked();
    /** The answer not handed out yet, and the one {@code poll} hands out. */
    Answer arrived = new Answer();
    Answer draining = new Answer();

    NodeFetcher(final int nodeId)
    {
        this.nodeId = nodeId;
    }

    /**
     * Room for a Fetch naming {@code partitions} (assign time). The answer buffers grow on demand to the largest answer
     * seen (at most {@code fetch.max.bytes} and its fields, or one batch larger than the limits, as a broker may send):
     * a warm-up allocation, none after.
     */
    void ensureCapacity(final int partitions)
    {
        sent.ensureCapacity(partitions);
        arrived.asked.ensureCapacity(partitions);
        draining.asked.ensureCapacity(partitions);
    }

    /** The Fetch in flight was answered with records, copied into {@link #arrived}: what it asked goes with them. */
    void sentArrived(final int length, final short version)
    {
        final Asked a = arrived.asked;
        arrived.asked = sent;
        sent = a;
        arrived.length = length;
        arrived.version = version;
        fetchInFlight = false;
    }

    /**
     * {@code poll} takes the answer arrived (the one draining is done); the next Fetch may go. The buffer freed, which
     * takes the next answer, grows now to {@link #largestAnswer} if smaller: the two buffers take answers in turn, so without
     * this one of them could meet the largest answer size for the first time long after the other did (a growth,
     * which allocates a direct buffer and new views of it, in steady state). It is free here: nothing reads it.
     */
    void startDraining()
    {
        final Answer a = draining;
        draining = arrived;
        arrived = a;
        arrived.bytes.checkLimit(largestAnswer); // grows only below it: both converge on one size (no ping-pong)
    }

    void doneDraining()
    {
        draining.length = -1;
        draining.asked.clear();
    }

    /** The Fetch in flight ended with nothing to hand out (no records, or it failed). */
    void sentDone()
    {
        sent.clear();
        fetchInFlight = false;
    }
}
