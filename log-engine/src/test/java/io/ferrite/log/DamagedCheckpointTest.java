package io.ferrite.log;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A damaged checkpoint file costs recovery time, not the start: the logs open with every record
 * (Kafka 4.4 refuses to start on the same damage; the damage-at-rest table has the cases).
 */
class DamagedCheckpointTest
{
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {OffsetCheckpoint.RECOVERY_POINTS, OffsetCheckpoint.LOG_START_OFFSETS})
    void aLogDirectoryWithAGarbageCheckpointOpensWithEveryRecord(final String checkpoint) throws Exception
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("c", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "4096"));
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            while (log.segmentCount() < 4)
            {
                batches.records(10, log.logEndOffset(), System.currentTimeMillis());
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status);
            }
            manager.checkpoint();
        }
        final long end;
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            end = manager.log("c", 0).logEndOffset();
        }
        final byte[] garbage = new byte[300];
        new java.util.Random(42).nextBytes(garbage); // seed 42: not UTF-8, not the checkpoint's lines
        Files.write(dir.resolve(checkpoint), garbage);
        Files.deleteIfExists(dir.resolve(LogManager.CLEAN_SHUTDOWN_FILE)); // and an unclean stop: recovery reads it
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.log("c", 0);
            assertEquals(end, log.logEndOffset(), "every record after the restart");
            assertEquals(0, log.logStartOffset());
        }
    }
}
