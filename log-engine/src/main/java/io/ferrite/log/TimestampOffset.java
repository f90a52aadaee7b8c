package io.ferrite.log;

/** A (timestamp, offset) answer to ListOffsets-style queries; reusable. */
public final class TimestampOffset
{
    public long timestamp = -1;
    public long offset = -1;

    TimestampOffset set(final long timestamp, final long offset)
    {
        this.timestamp = timestamp;
        this.offset = offset;
        return this;
    }

    public boolean found()
    {
        return offset >= 0;
    }

    @Override
    public String toString()
    {
        return "TimestampOffset(" + timestamp + ", " + offset + ")";
    }
}
