package io.ferrite.log;

/**
 * The partition's open transactions, oldest first, and what any thread needs of them to compute
 * the last stable offset (LSO): Kafka's {@code ongoingTxns} and {@code unreplicatedTxns}.
 *
 * <p>The list is intrusive (each {@link ProducerState} links to its neighbours): a producer has at
 * most one transaction open per partition, a new one always starts at the log end, above every
 * open one, so opening appends at the newest end and ending one unlinks it — no allocation, no
 * search. (Loading a snapshot opens them in its own order: they are placed by a walk from the
 * newest end.)
 *
 * <p><b>Unreplicated completions.</b> As Kafka does, a transaction a marker ended stays unstable
 * until the high watermark passes its marker: without that, with {@code fsync} durability (the high
 * watermark is the durable offset, behind the log end), the LSO could pass the first offset of a
 * transaction whose marker a crash then loses — the transaction open again below an LSO already
 * served. The writer pushes {@code (firstOffset, markerOffset)} onto an immutable-node stack, newest
 * first; a reader walks it while the markers are at or above the high watermark it read, which
 * stops at once when the high watermark has passed the newest marker (one node read). A node per
 * completed transaction is the only allocation, on the marker path only; the writer cuts the nodes
 * below the high watermark it sees at each completion.
 *
 * <p><b>Memory order.</b> Writer: the log's writer thread (append, marker, load). It stores the
 * completion stack, then the oldest open first offset (both volatile), both before the log end
 * that publishes the batch (so whoever moves the high watermark over the batch has seen them); a
 * reader loads the high watermark, then the oldest open first offset, then the stack. A reader
 * that sees a transaction gone from the open list therefore sees its completion; one that read the
 * high watermark before a transaction opened has a bound at or below the log end of then, so at or
 * below its first offset. A partition that never saw a transactional batch pays nothing on
 * appends, and four volatile loads on a read of its LSO (the high watermark, the log start, the
 * oldest open first offset, the stack).
 */
final class OngoingTxns
{
    /** An ended transaction kept unstable until the high watermark passes its marker. Immutable but for the cut. */
    private static final class Completion
    {
        final long firstOffset;
        final long markerOffset;
        Completion older;

        Completion(final long firstOffset, final long markerOffset, final Completion older)
        {
            this.firstOffset = firstOffset;
            this.markerOffset = markerOffset;
            this.older = older;
        }
    }

    private ProducerState oldest;
    private ProducerState newest;
    /** The oldest open transaction's first offset, {@link Long#MAX_VALUE} when none is open. */
    private volatile long firstOpenOffset = Long.MAX_VALUE;
    /** Ended transactions whose marker the high watermark may not have passed yet, newest first. */
    private volatile Completion unreplicated;

    /** Opens {@code s}'s transaction at {@code firstOffset} and publishes the oldest (writer thread). */
    void open(final ProducerState s, final long firstOffset)
    {
        s.currentTxnFirstOffset = firstOffset;
        ProducerState after = newest;
        while (after != null && after.currentTxnFirstOffset > firstOffset)
        {
            after = after.olderOpen; // a snapshot's, loaded in its own order; never while appending
        }
        s.olderOpen = after;
        s.newerOpen = after == null ? oldest : after.newerOpen;
        if (after == null)
        {
            oldest = s;
        }
        else
        {
            after.newerOpen = s;
        }
        if (s.newerOpen == null)
        {
            newest = s;
        }
        else
        {
            s.newerOpen.olderOpen = s;
        }
        publishOldest();
    }

    /**
     * The LSO Kafka records in an aborted transaction's index entry: the first offset of the oldest
     * open transaction of another producer, else {@code markerOffset + 1}.
     */
    long lastStableOffsetAfter(final long producerId, final long markerOffset)
    {
        for (ProducerState s = oldest; s != null; s = s.newerOpen)
        {
            if (s.producerId != producerId)
            {
                return s.currentTxnFirstOffset;
            }
        }
        return markerOffset + 1;
    }

    /**
     * Ends {@code s}'s open transaction at the marker {@code markerOffset}: it stays unstable until
     * the high watermark passes the marker ({@code highWatermark} is the writer's latest view of it;
     * {@link Long#MAX_VALUE} while loading, when all that is loaded is taken as replicated).
     */
    void close(final ProducerState s, final long markerOffset, final long highWatermark)
    {
        final long first = s.currentTxnFirstOffset;
        if (s.olderOpen == null)
        {
            oldest = s.newerOpen;
        }
        else
        {
            s.olderOpen.newerOpen = s.newerOpen;
        }
        if (s.newerOpen == null)
        {
            newest = s.olderOpen;
        }
        else
        {
            s.newerOpen.olderOpen = s.olderOpen;
        }
        s.olderOpen = null;
        s.newerOpen = null;
        s.currentTxnFirstOffset = -1;
        if (markerOffset >= highWatermark)
        {
            Completion kept = unreplicated;
            if (kept != null && kept.markerOffset < highWatermark)
            {
                kept = null;
            }
            // markers only grow newest to oldest: cut at the first the high watermark has passed. A reader that read an
            // older high watermark and misses the cut ones had its bound capped by that high watermark already
            for (Completion c = kept; c != null; c = c.older)
            {
                if (c.older != null && c.older.markerOffset < highWatermark)
                {
                    c.older = null;
                    break;
                }
            }
            unreplicated = new Completion(first, markerOffset, kept); // before the open list changes (see the class comment)
        }
        publishOldest();
    }

    private void publishOldest()
    {
        final long first = oldest == null ? Long.MAX_VALUE : oldest.currentTxnFirstOffset;
        if (first != firstOpenOffset)
        {
            firstOpenOffset = first;
        }
    }

    /**
     * The last stable offset for a high watermark read by the caller just before (any thread): the
     * first unstable offset — the first offset of the oldest open transaction, or of an ended one
     * whose marker the high watermark has not passed, whichever is lowest — raised to at least the
     * log start (Kafka's {@code maybeIncrementFirstUnstableOffset}: DeleteRecords or retention may
     * have moved it past an open transaction's first offset, which no fetch could then read), and
     * then capped by the high watermark. Each of the three only moves forward, so the result does.
     */
    long lastStableOffset(final long highWatermark, final long logStartOffset)
    {
        long firstUnstable = firstOpenOffset;
        for (Completion c = unreplicated; c != null && c.markerOffset >= highWatermark; c = c.older)
        {
            firstUnstable = Math.min(firstUnstable, c.firstOffset);
        }
        return Math.min(highWatermark, Math.max(logStartOffset, firstUnstable));
    }

    /** Forgets every transaction (the state is cleared or reloaded; writer thread, or before the log is shared). */
    void clear()
    {
        for (ProducerState s = oldest; s != null; )
        {
            final ProducerState next = s.newerOpen;
            s.olderOpen = null;
            s.newerOpen = null;
            s = next;
        }
        oldest = null;
        newest = null;
        unreplicated = null;
        publishOldest();
    }
}
