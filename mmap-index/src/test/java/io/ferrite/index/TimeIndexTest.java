package io.ferrite.index;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class TimeIndexTest
{
    @TempDir
    Path dir;

    @Test
    void onlyLargerTimestampsAreAppendedAndLookupFindsTheFloor() throws IOException
    {
        for (long seed = 1; seed <= 20; seed++)
        {
            final Random r = new Random(seed);
            final TreeMap<Long, Long> model = new TreeMap<>();
            try (TimeIndex index = new TimeIndex(dir.resolve(seed + ".timeindex"), 1000, 120_000, true))
            {
                long offset = 1000;
                long ts = 1_700_000_000_000L;
                final int appends = r.nextInt(3000); // drawn once: past the warm section (682 entries) most seeds
                for (int i = 0; i < appends; i++)
                {
                    offset += r.nextInt(40);
                    ts += r.nextInt(7) - 2; // sometimes going back: not appended
                    index.maybeAppend(ts, offset, false);
                    if (model.isEmpty() || ts > model.lastKey())
                    {
                        model.put(ts, offset);
                    }
                }
                assertEquals(model.size(), index.entries());
                for (int q = 0; q < 1000; q++)
                {
                    final long target = 1_700_000_000_000L - 10 + r.nextInt(Math.max(1, (int)(ts - 1_700_000_000_000L) + 20));
                    final var floor = model.floorEntry(target);
                    assertEquals(floor == null ? 1000 : floor.getValue(), index.lookup(target));
                }
                index.sanityCheck();
            }
        }
    }

    @Test
    void entriesAreKafkasLayout() throws IOException
    {
        final Path file = dir.resolve("00000000000000000007.timeindex");
        try (TimeIndex index = new TimeIndex(file, 7, 120, true))
        {
            index.maybeAppend(1234L, 9, false);
        }
        final ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file));
        assertEquals(12, b.capacity());
        assertEquals(1234L, b.getLong(0));
        assertEquals(2, b.getInt(8));
        try (TimeIndex index = new TimeIndex(file, 7, 120, false))
        {
            assertEquals(1234L, index.lastTimestamp());
            assertEquals(9, index.lastOffset());
        }
    }

    @Test
    void truncationAndSanity() throws IOException
    {
        final Path file = dir.resolve("x.timeindex");
        final TimeIndex index = new TimeIndex(file, 0, 1200, true);
        for (int i = 1; i <= 10; i++)
        {
            index.maybeAppend(i * 100L, i * 10L, false);
        }
        index.truncateTo(45);
        assertEquals(4, index.entries());
        assertEquals(400, index.lastTimestamp());
        assertThrows(IllegalArgumentException.class, () -> index.maybeAppend(500, 30, false));
        index.flush();
        // reopened without a close: preallocated zeros follow the entries
        try (TimeIndex reopened = new TimeIndex(file, 0, 1200, true))
        {
            assertThrows(CorruptIndexException.class, reopened::sanityCheck);
        }
        index.unmapNow();
    }

    /**
     * Recovery of a rolled segment: its trimmed index is given room again, reset and rebuilt
     * through the mapping with more entries than the file held; claiming room for the closing entry
     * must not zero the entries rebuilt past the old claim.
     */
    @Test
    void claimingRoomAfterARebuildKeepsTheEntriesRebuiltPastTheOldClaim() throws IOException
    {
        final Path file = dir.resolve("00000000000000000000.timeindex");
        try (TimeIndex index = new TimeIndex(file, 0, 1200, true))
        {
            index.maybeAppend(100, 10, false);
            index.maybeAppend(200, 20, false);
        }
        assertEquals(24, Files.size(file)); // trimmed, as a rolled segment's index
        try (TimeIndex index = new TimeIndex(file, 0, 0, true))
        {
            index.resize(1200);
            index.reset();
            for (int i = 1; i <= 5; i++)
            {
                index.maybeAppend(i * 100L, i * 10L, false);
            }
            index.ensureRoomAllocated();
            index.maybeAppend(600, 55, true);
            assertEquals(6, index.entries());
            index.sanityCheck();
            for (int i = 0; i < 5; i++)
            {
                assertEquals((i + 1) * 100L, index.timestamp(i));
                assertEquals((i + 1) * 10, index.relativeOffset(i));
            }
        }
        try (TimeIndex reopened = new TimeIndex(file, 0, 0, false))
        {
            assertEquals(6, reopened.entries());
            reopened.sanityCheck();
        }
    }
}
