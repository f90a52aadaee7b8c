package io.ferrite.log.epoch;

import org.apache.kafka.storage.internals.checkpoint.LeaderEpochCheckpointFile;
import org.apache.kafka.storage.internals.log.EpochEntry;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link LeaderEpochCheckpoint} against Kafka 4.4's own {@code LeaderEpochCheckpointFile}: each reads the other's file, byte for byte the same. */
class LeaderEpochCheckpointTest
{
    @TempDir
    Path dir;

    @Test
    void kafkasFileAndOursAreTheSameBytesAndEachReadsTheOther() throws IOException
    {
        final LeaderEpochCache cache = new LeaderEpochCache();
        cache.assign(0, 0);
        cache.assign(3, 1200);
        cache.assign(7, 9_876_543_210L);
        final LeaderEpochCheckpoint ours = new LeaderEpochCheckpoint(cache, false);
        assertTrue(ours.changed());
        assertTrue(ours.writeIfChanged(dir));
        assertFalse(ours.changed());
        assertFalse(ours.writeIfChanged(dir), "nothing changed: no write");
        final Path file = dir.resolve(LeaderEpochCheckpoint.FILE_NAME);
        assertEquals("0\n3\n0 0\n3 1200\n7 9876543210\n", Files.readString(file));

        final LeaderEpochCheckpointFile kafka = new LeaderEpochCheckpointFile(file.toFile(), new LogDirFailureChannel(1));
        assertEquals(List.of(new EpochEntry(0, 0), new EpochEntry(3, 1200), new EpochEntry(7, 9_876_543_210L)), kafka.read());

        final Path kafkaDir = Files.createDirectory(dir.resolve("kafka"));
        final Path kafkaFile = kafkaDir.resolve(LeaderEpochCheckpoint.FILE_NAME);
        new LeaderEpochCheckpointFile(kafkaFile.toFile(), new LogDirFailureChannel(1))
            .write(List.of(new EpochEntry(0, 0), new EpochEntry(3, 1200), new EpochEntry(7, 9_876_543_210L)));
        assertArrayEquals(Files.readAllBytes(file), Files.readAllBytes(kafkaFile));
        assertArrayEquals(cache.snapshot(), LeaderEpochCheckpoint.read(kafkaDir).snapshot());

        cache.truncateFromEnd(1200);
        assertTrue(ours.writeIfChanged(dir));
        assertEquals(List.of(new EpochEntry(0, 0)), kafka.read());
        cache.clear();
        assertTrue(ours.writeIfChanged(dir));
        assertEquals("0\n0\n", Files.readString(file));
        assertEquals(0, LeaderEpochCheckpoint.read(dir).size());
        assertFalse(Files.exists(dir.resolve(LeaderEpochCheckpoint.FILE_NAME + ".tmp")));
    }

    @Test
    void noFileIsNullAndADamagedOneAnErrorWithKafkasMessage() throws IOException
    {
        assertNull(LeaderEpochCheckpoint.read(dir));
        assertEquals("Unrecognised version:1, expected version: 0 in checkpoint file at: " + file(),
            damaged("1\n1\n0 0\n").getMessage());
        assertEquals("Malformed line in checkpoint file [" + file() + "]: 0 x", damaged("0\n1\n0 x\n").getMessage());
        assertEquals("Malformed line in checkpoint file [" + file() + "]: 0 1 2", damaged("0\n1\n0 1 2\n").getMessage());
        assertEquals("Expected [2] entries in checkpoint file [" + file() + "], but found only [1]",
            damaged("0\n2\n0 5\n").getMessage());
        assertEquals("Malformed line in checkpoint file [" + file() + "]: -1 5", damaged("0\n1\n-1 5\n").getMessage());
    }

    private Path file()
    {
        return dir.resolve(LeaderEpochCheckpoint.FILE_NAME);
    }

    private IOException damaged(final String content) throws IOException
    {
        Files.writeString(file(), content, StandardCharsets.UTF_8);
        return assertThrows(IOException.class, () -> LeaderEpochCheckpoint.read(dir));
    }
}
