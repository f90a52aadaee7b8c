package io.ferrite.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A start after an unclean stop keeps what recovery finds without an fsync per partition: the
 * recovery point stays where the checkpoint had it, so the next unclean start scans the same bytes
 * again (as Kafka's recovery leaves it), and nothing acknowledged is given up — only, in fsync
 * durability, where the high watermark follows the durable offset, are the kept bytes fsynced before
 * the log serves. The fsync per recovered partition made a start after SIGKILL at 1 000 small
 * partitions take 48 s (0.9 s after a clean stop).
 */
class UncleanStartTest
{
    @TempDir
    Path dir;

    @Test
    void theRecoveryPointStaysWhereTheCheckpointHadIt() throws Exception
    {
        final PartitionLog log = startUncleanAfterThreeRecords(Map.of());
        assertEquals(3, log.logEndOffset(), "every record kept");
        assertEquals(3, log.highWatermark(), "and readable");
        assertTrue(log.recoveryPoint() < 3, "recovery point " + log.recoveryPoint() + ": moved past bytes no fsync proved on disk");
        log.flush();
        assertEquals(3, log.recoveryPoint(), "the next flush moves it");
    }

    @Test
    void inFsyncDurabilityTheKeptBytesAreDurableBeforeTheyAreServed() throws Exception
    {
        final PartitionLog log = startUncleanAfterThreeRecords(Map.of(LogConfig.DURABILITY, LogConfig.DURABILITY_FSYNC));
        assertEquals(3, log.logEndOffset());
        assertEquals(3, log.durableOffset(), "durable offset");
        assertEquals(3, log.recoveryPoint(), "recovery point");
    }

    /**
     * A flush that took the segment array before retention deleted its first segment goes on and
     * fsyncs that segment ({@code LogFlusher.flushSealed}). After an unclean start a rolled segment
     * too small for an offset-index entry has its rebuilt (empty) index dirty and unmapped, and its
     * flush opened the file by path: a {@code NoSuchFileException}, which the flusher records as a
     * failed fsync — the log's durable offset then never moves again. The flusher's step is replayed
     * here by hand on the segment it still held.
     */
    @Test
    void aFlushOfASegmentRetentionDeletedAfterAnUncleanStartIsNoFsyncFailure() throws Exception
    {
        final PartitionLog log = startUnclean(Map.of(), 3);
        final Segment[] held = log.segments();
        assertTrue(held.length >= 3, held.length + " segments");
        assertEquals(0, held[0].offsetIndex.entries(), "a rolled segment below the index interval: no offset-index entry");
        log.highWatermark(log.logEndOffset());
        assertTrue(log.deleteRecordsBefore(held[1].baseOffset) >= 0);
        assertEquals(held[1].baseOffset, log.segments()[0].baseOffset, "retention deleted the first segment");
        assertTrue(!Files.exists(held[0].offsetIndex.file()), "and its files");

        held[0].flush(); // the flusher's step on the array it took before the deletion

        log.flush();
        assertEquals(log.logEndOffset(), log.durableOffset(), "the log's flushes go on moving the durable offset");
    }

    private LogManager manager;

    private PartitionLog startUncleanAfterThreeRecords(final Map<String, String> topicConfig) throws Exception
    {
        return startUnclean(topicConfig, 1);
    }

    /** Appends until the log has {@code segments} segments (at least three records), then starts it as after a SIGKILL. */
    private PartitionLog startUnclean(final Map<String, String> topicConfig, final int segments) throws Exception
    {
        final Path data = dir.resolve("data");
        try (LogManager running = LogManager.open(LogManagerConfig.of(data)))
        {
            final Map<String, String> config = new java.util.HashMap<>(topicConfig);
            config.put(LogConfig.INTERNAL_SEGMENT_BYTES, "65536"); // the copy below then copies 64 KiB, not a sparse GiB
            if (segments > 1)
            {
                config.put(LogConfig.INTERNAL_SEGMENT_BYTES, "1024"); // rolled segments below the 4096-byte index interval
            }
            final PartitionLog log = running.createLog("t", 0, config);
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            for (int i = 0; i < 3 || log.segments().length < segments; i++)
            {
                batches.records(1, i, System.currentTimeMillis());
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status);
            }
            if (topicConfig.isEmpty() && segments == 1)
            {
                assertEquals(0, log.recoveryPoint(), "nothing flushed before the stop");
            }
            OpenFilesTest.copy(data, dir.resolve("unclean")); // the files as a SIGKILL would leave them
        }
        final Path unclean = dir.resolve("unclean");
        Files.deleteIfExists(unclean.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
        // stopped before a checkpoint recorded the rolls' flushes: recovery scans every segment
        Files.deleteIfExists(unclean.resolve(OffsetCheckpoint.RECOVERY_POINTS));
        manager = LogManager.open(LogManagerConfig.of(unclean));
        return manager.log("t", 0);
    }

    @org.junit.jupiter.api.AfterEach
    void close() throws Exception
    {
        if (manager != null)
        {
            manager.close();
        }
    }
}
