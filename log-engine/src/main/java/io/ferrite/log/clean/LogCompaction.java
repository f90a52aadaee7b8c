package io.ferrite.log.clean;

import io.ferrite.log.PartitionLog;

/**
 * One clean of one compacted partition log, as Kafka's {@code Cleaner.clean(LogToClean)} does it: the
 * key -> offset map built over the dirty section, then every inactive segment below the first
 * uncleanable offset rewritten without the records the map (or the delete horizon, or an aborted
 * transaction) makes obsolete, through the log's {@link io.ferrite.log.SegmentReplacer}. Called by a
 * cleaner thread, never by the partition's writer or on a produce or fetch path; one clean of a log
 * at a time.
 */
public interface LogCompaction
{
    /** {@link #clean}: the log changed under the clean (closed, deleted, its run taken by retention): nothing to record. */
    long ABANDONED = -1L;

    /**
     * @param log the partition log, open
     * @param firstDirtyOffset where the dirty section starts (the log's {@code cleaner-offset-checkpoint}
     *     entry, or its log start offset)
     * @param firstUncleanableOffset where the cleanable section ends (at most the active segment's base
     *     offset, the last stable offset and the high watermark, and below {@code min.compaction.lag.ms})
     * @param deleteRetentionMs the log's {@code delete.retention.ms}
     * @param nowMs the cleaner's wall clock
     * @param stats counts of this clean, added to
     * @return the next first dirty offset (what the checkpoint records: the end of the offsets the map
     *     covered, which is below {@code firstUncleanableOffset} when the map filled up), or {@link #ABANDONED}
     * @throws java.io.IOException when a segment could not be read or written (the log is left as it was, or
     *     as the swap's recovery completes it)
     * @throws InterruptedException when the cleaner thread is stopped (e.g. while its throttle holds it)
     */
    long clean(PartitionLog log, long firstDirtyOffset, long firstUncleanableOffset, long deleteRetentionMs, long nowMs,
        CleanStats stats) throws java.io.IOException, InterruptedException;
}
