package io.ferrite.log.clean;

/**
 * What cleans did, counted by the cleaner thread that ran them (Kafka's {@code CleanerStats}): read on
 * that thread, or after it stopped.
 */
public final class CleanStats
{
    /** Bytes of batches read to build the offset map. */
    public long mapBytesRead;
    /** Batches read to build the offset map. */
    public long mapBatchesRead;
    /**
     * Bytes of batches read to copy the producer state (the log after its newest producer snapshot: normally the
     * active segment; the whole log when no snapshot is usable).
     */
    public long producerStateBytesRead;
    /** Bytes of segments read while rewriting them. */
    public long bytesRead;
    /** Bytes written into the new segments. */
    public long bytesWritten;
    /** Records read while rewriting. */
    public long recordsRead;
    /** Records kept. */
    public long recordsKept;
    /** Segments replaced. */
    public long segmentsReplaced;

    /** Zeroes every count. */
    public void reset()
    {
        mapBytesRead = 0;
        mapBatchesRead = 0;
        producerStateBytesRead = 0;
        bytesRead = 0;
        bytesWritten = 0;
        recordsRead = 0;
        recordsKept = 0;
        segmentsReplaced = 0;
    }
}
