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

    private LogManager manager;

    private PartitionLog startUncleanAfterThreeRecords(final Map<String, String> topicConfig) throws Exception
    {
        final Path data = dir.resolve("data");
        try (LogManager running = LogManager.open(LogManagerConfig.of(data)))
        {
            final Map<String, String> config = new java.util.HashMap<>(topicConfig);
            config.put(LogConfig.INTERNAL_SEGMENT_BYTES, "65536"); // the copy below then copies 64 KiB, not a sparse GiB
            final PartitionLog log = running.createLog("t", 0, config);
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            for (int i = 0; i < 3; i++)
            {
                batches.records(1, i, System.currentTimeMillis());
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status);
            }
            if (topicConfig.isEmpty())
            {
                assertEquals(0, log.recoveryPoint(), "nothing flushed before the stop");
            }
            OpenFilesTest.copy(data, dir.resolve("unclean")); // the files as a SIGKILL would leave them
        }
        final Path unclean = dir.resolve("unclean");
        Files.deleteIfExists(unclean.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
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
