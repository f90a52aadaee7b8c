package io.ferrite.log.epoch;

import java.util.Arrays;

/**
 * A partition's leader-epoch cache (KIP-101/279), as Kafka 4.4's {@code LeaderEpochFileCache}: entries
 * {@code (epoch, startOffset)}, epochs and start offsets both increasing, the first offset each leader
 * epoch wrote. A follower asks the leader where its last epoch ended ({@link #endOffsetFor}) and
 * truncates its log there, so logs never diverge after a failover; a consumer asks the same to check
 * its position after a leader change.
 *
 * <p><b>Threading.</b> Changes ({@link #assign}, the truncations, {@link #clear}) are rare — once per
 * leader epoch, once per retention or truncation — and are made under this object's monitor: the
 * partition's writer assigns, retention and DeleteRecords truncate from the start on their own
 * threads. Each change builds new arrays and publishes them through one volatile field
 * ({@link Entries}, never changed after it is published), so a reader (a request thread, the
 * flusher writing the checkpoint) takes no lock and sees one consistent set of entries. The append
 * path's look at {@link #latestEpoch} is one volatile read and a compare: it allocates only when
 * the epoch changes.
 */
public final class LeaderEpochCache
{
    /** Kafka's {@code RecordBatch.NO_PARTITION_LEADER_EPOCH} and {@code UNDEFINED_EPOCH}: no epoch. */
    public static final int UNDEFINED_EPOCH = -1;
    /** Kafka's {@code UNDEFINED_EPOCH_OFFSET}. */
    public static final long UNDEFINED_EPOCH_OFFSET = -1L;

    /** One published set of entries: never written after it is published. */
    static final class Entries
    {
        static final Entries EMPTY = new Entries(new int[0], new long[0]);

        final int[] epochs;
        final long[] startOffsets;

        Entries(final int[] epochs, final long[] startOffsets)
        {
            this.epochs = epochs;
            this.startOffsets = startOffsets;
        }

        int size()
        {
            return epochs.length;
        }

        int latestEpoch()
        {
            return epochs.length == 0 ? UNDEFINED_EPOCH : epochs[epochs.length - 1];
        }

        /** The first {@code n} entries. */
        Entries prefix(final int n)
        {
            return n == epochs.length ? this : n == 0 ? EMPTY :
                new Entries(Arrays.copyOf(epochs, n), Arrays.copyOf(startOffsets, n));
        }
    }

    /** The answer of {@link #endOffsetFor}: a reusable holder (a request thread keeps one). */
    public static final class EpochOffset
    {
        public int epoch;
        public long endOffset;

        EpochOffset set(final int epoch, final long endOffset)
        {
            this.epoch = epoch;
            this.endOffset = endOffset;
            return this;
        }
    }

    private volatile Entries entries = Entries.EMPTY;

    public LeaderEpochCache()
    {
    }

    Entries entries()
    {
        return entries;
    }

    /** The latest epoch, or {@link #UNDEFINED_EPOCH} when the cache is empty (any thread). */
    public int latestEpoch()
    {
        return entries.latestEpoch();
    }

    public int size()
    {
        return entries.size();
    }

    /** The entries as {@code {epoch, startOffset}} pairs, one consistent read; for tests, tools and logging. */
    public long[][] snapshot()
    {
        final Entries e = entries;
        final long[][] out = new long[e.size()][];
        for (int i = 0; i < out.length; i++)
        {
            out[i] = new long[] {e.epochs[i], e.startOffsets[i]};
        }
        return out;
    }

    /**
     * Kafka's {@code assign(epoch, startOffset)}: nothing changes when {@code epoch} is the latest and
     * {@code startOffset} not below its start (the same epoch keeps its first offset); otherwise every
     * entry from the end whose epoch is at least {@code epoch} or whose start is at least
     * {@code startOffset} is removed (they conflict with the new one) and the new one is added last.
     * So on the append path, where offsets only grow, a new epoch adds an entry and the current one
     * changes nothing.
     *
     * @return whether the cache changed
     * @throws IllegalArgumentException for a negative epoch or offset (Kafka's message)
     */
    public synchronized boolean assign(final int epoch, final long startOffset)
    {
        if (epoch < 0 || startOffset < 0)
        {
            throw new IllegalArgumentException("Received invalid partition leader epoch entry EpochEntry(epoch=" + epoch +
                ", startOffset=" + startOffset + ")");
        }
        final Entries e = entries;
        final int n = e.size();
        if (n > 0 && e.epochs[n - 1] == epoch && startOffset >= e.startOffsets[n - 1])
        {
            return false;
        }
        int keep = n;
        while (keep > 0 && (e.epochs[keep - 1] >= epoch || e.startOffsets[keep - 1] >= startOffset))
        {
            keep--;
        }
        final int[] epochs = Arrays.copyOf(e.epochs, keep + 1);
        final long[] starts = Arrays.copyOf(e.startOffsets, keep + 1);
        epochs[keep] = epoch;
        starts[keep] = startOffset;
        entries = new Entries(epochs, starts);
        return true;
    }

    /**
     * Kafka's {@code endOffsetFor(requestedEpoch, logEndOffset)}, what OffsetForLeaderEpoch answers
     * (any thread, allocates nothing):
     * <ul>
     *   <li>{@link #UNDEFINED_EPOCH} asked: {@code (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)};</li>
     *   <li>the latest epoch: {@code (latest, logEndOffset)};</li>
     *   <li>no epoch above the one asked (the cache empty, or the request above the latest):
     *       {@code (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)};</li>
     *   <li>an epoch below the first entry: {@code (requested, first entry's start)};</li>
     *   <li>else the highest epoch at or below the one asked, ending where the next entry starts.</li>
     * </ul>
     */
    public EpochOffset endOffsetFor(final int requestedEpoch, final long logEndOffset, final EpochOffset out)
    {
        final Entries e = entries;
        final int n = e.size();
        if (requestedEpoch == UNDEFINED_EPOCH)
        {
            return out.set(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET);
        }
        if (n > 0 && e.epochs[n - 1] == requestedEpoch)
        {
            return out.set(requestedEpoch, logEndOffset);
        }
        int higher = 0; // the first entry whose epoch is above the one asked
        while (higher < n && e.epochs[higher] <= requestedEpoch)
        {
            higher++;
        }
        if (higher == n)
        {
            return out.set(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET);
        }
        if (higher == 0)
        {
            return out.set(requestedEpoch, e.startOffsets[0]);
        }
        return out.set(e.epochs[higher - 1], e.startOffsets[higher]);
    }

    /**
     * Kafka's {@code epochForOffset(offset)}: the epoch of the last entry starting at or before {@code offset} (the
     * epoch the batch holding it was written in), or {@link #UNDEFINED_EPOCH} below the first entry or for an empty
     * cache. Any thread; allocates nothing.
     */
    public int epochForOffset(final long offset)
    {
        final Entries e = entries;
        int i = e.size();
        while (i > 0 && e.startOffsets[i - 1] > offset)
        {
            i--;
        }
        return i == 0 ? UNDEFINED_EPOCH : e.epochs[i - 1];
    }

    /**
     * Kafka's {@code truncateFromEnd(endOffset)}: removes every entry starting at or after
     * {@code endOffset} (the new log end of a truncated log). Nothing happens for a negative offset.
     *
     * @return whether the cache changed
     */
    public synchronized boolean truncateFromEnd(final long endOffset)
    {
        final Entries e = entries;
        int keep = e.size();
        if (endOffset < 0 || keep == 0 || e.startOffsets[keep - 1] < endOffset)
        {
            return false;
        }
        while (keep > 0 && e.startOffsets[keep - 1] >= endOffset)
        {
            keep--;
        }
        entries = e.prefix(keep);
        return true;
    }

    /**
     * Kafka's {@code truncateFromStart(startOffset)} (the log start moved up): removes every entry
     * starting at or before {@code startOffset} and puts back the last of them moved up to
     * {@code startOffset} — the epoch that the new log start lies in.
     *
     * @return whether the cache changed
     */
    public synchronized boolean truncateFromStart(final long startOffset)
    {
        final Entries e = entries;
        final int n = e.size();
        int removed = 0;
        while (removed < n && e.startOffsets[removed] <= startOffset)
        {
            removed++;
        }
        if (removed == 0)
        {
            return false;
        }
        final int kept = n - removed + 1;
        final int[] epochs = new int[kept];
        final long[] starts = new long[kept];
        epochs[0] = e.epochs[removed - 1];
        starts[0] = startOffset;
        System.arraycopy(e.epochs, removed, epochs, 1, kept - 1);
        System.arraycopy(e.startOffsets, removed, starts, 1, kept - 1);
        entries = new Entries(epochs, starts);
        return true;
    }

    /** Removes every entry. @return whether the cache changed */
    public synchronized boolean clear()
    {
        final boolean changed = entries.size() > 0;
        entries = Entries.EMPTY;
        return changed;
    }

    @Override
    public String toString()
    {
        final Entries e = entries;
        final StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < e.size(); i++)
        {
            sb.append(i == 0 ? "" : ", ").append("EpochEntry(epoch=").append(e.epochs[i]).append(", startOffset=")
                .append(e.startOffsets[i]).append(')');
        }
        return sb.append(']').toString();
    }
}
