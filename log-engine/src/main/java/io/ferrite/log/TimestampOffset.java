package io.ferrite.log;

/** A (timestamp, offset) answer to ListOffsets-style queries, with the leader epoch of the batch holding it; reusable. */
public final class TimestampOffset
{
    public long timestamp = -1;
    public long offset = -1;
    /** The partition leader epoch of the found record's batch, -1 for none (or a batch written without one). */
    public int leaderEpoch = -1;

    TimestampOffset set(final long timestamp, final long offset)
    {
        return set(timestamp, offset, -1);
    }

    TimestampOffset set(final long timestamp, final long offset, final int leaderEpoch)
    {
        this.timestamp = timestamp;
        this.offset = offset;
        this.leaderEpoch = Math.max(-1, leaderEpoch);
        return this;
    }

    public boolean found()
    {
        return offset >= 0;
    }

    @Override
    public String toString()
    {
        return "TimestampOffset(" + timestamp + ", " + offset + ", epoch " + leaderEpoch + ")";
    }
}
