package io.ferrite.client;

import org.agrona.ExpandableDirectByteBuffer;

/**
 * The consumer's side of one broker: at most one Fetch in flight, and the answers it gave, copied out of the
 * connection's receive buffer (which the next read reuses) into two off-heap buffers: {@link #arrived}, the answer
 * not handed out yet, and {@link #draining}, the one {@code poll} hands out now. The next Fetch goes when
 * {@code poll} takes {@link #arrived} (the two swap), so a fetch is in flight while the application reads the last
 * answer and at most two answers are held per broker. With each buffer go the partitions and offsets its Fetch asked
 * for: an answer is handed out for a partition only while the partition's position is the offset asked for (a seek
 * since makes it stale, as kafka-clients discards a stale completed fetch).
 */
final class NodeFetcher
{
    final int nodeId;
    boolean fetchInFlight;
    boolean listOffsetsInFlight;

    ExpandableDirectByteBuffer arrived = new ExpandableDirectByteBuffer(64 * 1024);
    int arrivedLength = -1;
    short arrivedVersion;
    ExpandableDirectByteBuffer draining = new ExpandableDirectByteBuffer(64 * 1024);
    int drainingLength = -1;
    short drainingVersion;

    /** The partitions (and offsets) of the Fetch in flight, of the answer arrived, of the answer draining. */
    FetchPosition[] sent = new FetchPosition[0];
    long[] sentOffsets = new long[0];
    int sentCount;
    FetchPosition[] arrivedParts = new FetchPosition[0];
    long[] arrivedOffsets = new long[0];
    int arrivedCount;
    FetchPosition[] drainingParts = new FetchPosition[0];
    long[] drainingOffsets = new long[0];
    int drainingCount;

    NodeFetcher(final int nodeId)
    {
        this.nodeId = nodeId;
    }

    /** Room for a Fetch naming {@code partitions} (assign time: the duty cycle then allocates nothing). */
    void ensureCapacity(final int partitions)
    {
        if (sent.length < partitions)
        {
            sent = new FetchPosition[partitions];
            sentOffsets = new long[partitions];
            arrivedParts = new FetchPosition[partitions];
            arrivedOffsets = new long[partitions];
            drainingParts = new FetchPosition[partitions];
            drainingOffsets = new long[partitions];
        }
    }

    void addSent(final FetchPosition p, final long offset)
    {
        sent[sentCount] = p;
        sentOffsets[sentCount++] = offset;
    }

    /** The Fetch in flight was answered: its partitions go with the answer copied into {@link #arrived}. */
    void sentArrived(final int length, final short version)
    {
        final FetchPosition[] parts = arrivedParts;
        arrivedParts = sent;
        sent = parts;
        final long[] offsets = arrivedOffsets;
        arrivedOffsets = sentOffsets;
        sentOffsets = offsets;
        arrivedCount = sentCount;
        sentCount = 0;
        arrivedLength = length;
        arrivedVersion = version;
        fetchInFlight = false;
    }

    /** {@code poll} takes the answer arrived (the one draining is done); the next Fetch may go. */
    void startDraining()
    {
        final ExpandableDirectByteBuffer b = draining;
        draining = arrived;
        arrived = b;
        drainingLength = arrivedLength;
        drainingVersion = arrivedVersion;
        arrivedLength = -1;
        final FetchPosition[] parts = drainingParts;
        drainingParts = arrivedParts;
        arrivedParts = parts;
        final long[] offsets = drainingOffsets;
        drainingOffsets = arrivedOffsets;
        arrivedOffsets = offsets;
        drainingCount = arrivedCount;
        arrivedCount = 0;
    }

    /** The offset the answer draining asked for {@code p}, or -1 if it did not name it. */
    long drainingOffset(final FetchPosition p)
    {
        for (int i = 0; i < drainingCount; i++)
        {
            if (drainingParts[i] == p)
            {
                return drainingOffsets[i];
            }
        }
        return -1;
    }

    /** The offset the Fetch in flight asked for {@code p}, or -1 if it did not name it. */
    long sentOffset(final FetchPosition p)
    {
        for (int i = 0; i < sentCount; i++)
        {
            if (sent[i] == p)
            {
                return sentOffsets[i];
            }
        }
        return -1;
    }

    void doneDraining()
    {
        drainingLength = -1;
        java.util.Arrays.fill(drainingParts, 0, drainingCount, null);
        drainingCount = 0;
    }

    /** The Fetch in flight ended with nothing to hand out (no records, or it failed). */
    void sentDone()
    {
        java.util.Arrays.fill(sent, 0, sentCount, null);
        sentCount = 0;
        fetchInFlight = false;
    }
}
