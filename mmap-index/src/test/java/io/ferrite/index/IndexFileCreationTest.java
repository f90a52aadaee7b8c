package io.ferrite.index;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A writable index whose file does not exist makes it only when it takes its first entry, or empty
 * when it is trimmed: a new partition's segment costs no index files while it holds nothing (on a
 * disk where a file creation costs most of a millisecond, two of the five files a new partition
 * made).
 */
class IndexFileCreationTest
{
    @TempDir
    Path dir;

    @Test
    void aNewIndexMakesItsFileAtItsFirstEntry() throws IOException
    {
        final Path file = dir.resolve("00000000000000000100.index");
        try (OffsetIndex index = new OffsetIndex(file, 100, 1024 * 1024, true))
        {
            assertFalse(Files.exists(file), "opened");
            assertEquals(0, index.lookup(150), "no entries: the segment's start");
            assertFalse(Files.exists(file), "after a search");
            index.flush();
            assertFalse(Files.exists(file), "after a flush");

            index.ensureRoomAllocated();
            assertTrue(Files.exists(file), "claimed for its first entry");
            assertEquals(1024 * 1024, Files.size(file), "preallocated to its capacity as an index found in place is");
            index.append(120, 4096);
            index.append(140, 8192);
            assertEquals(4096, index.lookup(130));
        }
        assertEquals(2L * OffsetIndex.ENTRY_SIZE, Files.size(file), "trimmed to its entries at the close");
        try (OffsetIndex reopened = new OffsetIndex(file, 100, 1024 * 1024, false))
        {
            assertEquals(2, reopened.entries());
            assertEquals(8192, reopened.lookup(145));
        }
    }

    @Test
    void anIndexThatTookNoEntryIsMadeEmptyWhenTrimmedOrClosed() throws IOException
    {
        final Path rolled = dir.resolve("00000000000000000000.timeindex");
        try (TimeIndex index = new TimeIndex(rolled, 0, 1024 * 1024, true))
        {
            index.trimToValidSize(); // a roll
            assertTrue(Files.exists(rolled), "a rolled segment has its index files");
            assertEquals(0, Files.size(rolled));
        }
        final Path closed = dir.resolve("00000000000000000007.timeindex");
        new TimeIndex(closed, 7, 1024 * 1024, true).close();
        assertTrue(Files.exists(closed), "a closed segment has its index files: a start finds them as a clean stop left them");
        assertEquals(0, Files.size(closed));
        try (TimeIndex reopened = new TimeIndex(closed, 7, 1024 * 1024, true))
        {
            assertEquals(0, reopened.entries());
            assertEquals(1024 * 1024 / TimeIndex.ENTRY_SIZE, reopened.maxEntries(), "reopened for appends at its capacity");
        }
    }

    @Test
    void entriesWrittenStraightThroughTheMappingMakeTheFile() throws IOException
    {
        // recovery rebuilds an index without claiming first: the mapping for writes makes the file
        final Path file = dir.resolve("00000000000000000000.index");
        try (OffsetIndex index = new OffsetIndex(file, 0, 64 * 1024, true))
        {
            index.reset();
            index.flush(); // dirty after the reset, with no file: nothing to force
            assertFalse(Files.exists(file));
            index.append(3, 100);
            assertTrue(Files.exists(file));
            assertEquals(100, index.lookup(3));
        }
        assertEquals(OffsetIndex.ENTRY_SIZE, Files.size(file));
    }

    @Test
    void anIndexDeletedBeforeItsFirstEntryMakesNoFile() throws IOException
    {
        final Path file = dir.resolve("00000000000000000000.index");
        final OffsetIndex index = new OffsetIndex(file, 0, 64 * 1024, true);
        index.forDeletion();
        index.close();
        index.unmapNow();
        assertFalse(Files.exists(file), "a deleted index never reaches its path: another partition may own it by now");
        assertEquals(0, index.lookup(5));
    }
}
