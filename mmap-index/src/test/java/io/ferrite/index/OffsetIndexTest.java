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
import static org.junit.jupiter.api.Assertions.assertTrue;

class OffsetIndexTest
{
    @TempDir
    Path dir;

    @Test
    void lookupAgreesWithASortedMapAcrossWarmAndColdSections() throws IOException
    {
        for (long seed = 1; seed <= 20; seed++)
        {
            final Random r = new Random(seed);
            final long base = r.nextInt(1_000_000);
            final TreeMap<Long, Integer> model = new TreeMap<>();
            try (OffsetIndex index = new OffsetIndex(dir.resolve(seed + ".index"), base, 64 * 1024, true))
            {
                long offset = base;
                int position = 0;
                final int n = r.nextInt(5000); // up to 5x the 1024-entry warm section
                for (int i = 0; i < n; i++)
                {
                    offset += 1 + r.nextInt(50);
                    position += r.nextInt(5000);
                    index.append(offset, position);
                    model.put(offset, position);
                }
                for (int q = 0; q < 2000; q++)
                {
                    final long target = base - 5 + (long)(r.nextDouble() * (offset - base + 60));
                    final var floor = model.floorEntry(target);
                    assertEquals(floor == null ? 0 : floor.getValue(), index.lookup(target), "seed " + seed + " target " + target);
                    final var ceiling = model.ceilingEntry(target);
                    assertEquals(ceiling == null ? -1 : ceiling.getValue(), index.positionAtOrAfter(target));
                    final int maxPosition = r.nextInt(position + 100);
                    final int below = model.values().stream().filter(p -> p <= maxPosition).mapToInt(Integer::intValue).max().orElse(-1);
                    assertEquals(below, index.positionAtOrBelow(maxPosition));
                }
                index.sanityCheck();
            }
        }
    }

    @Test
    void entriesAreKafkasBigEndianLayoutAndSurviveReopen() throws IOException
    {
        final Path file = dir.resolve("00000000000000000100.index");
        try (OffsetIndex index = new OffsetIndex(file, 100, 1024, true))
        {
            assertEquals(1024 / 8, index.maxEntries());
            index.append(105, 4100);
            index.append(230, 9000);
        }
        final ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(file));
        assertEquals(16, bytes.capacity(), "trimmed to its entries on close");
        assertEquals(5, bytes.getInt(0));
        assertEquals(4100, bytes.getInt(4));
        assertEquals(130, bytes.getInt(8));
        assertEquals(9000, bytes.getInt(12));
        try (OffsetIndex index = new OffsetIndex(file, 100, 1024, false))
        {
            assertEquals(2, index.entries());
            assertEquals(230, index.lastOffset());
            assertEquals(4100, index.lookup(229));
            assertEquals(0, index.lookup(104));
        }
    }

    @Test
    void appendsOutOfOrderOrBeyondCapacityAreRefused() throws IOException
    {
        try (OffsetIndex index = new OffsetIndex(dir.resolve("a.index"), 10, 16, true))
        {
            index.append(11, 0);
            assertThrows(IllegalArgumentException.class, () -> index.append(11, 10));
            assertThrows(IllegalArgumentException.class, () -> index.append(10L + Integer.MAX_VALUE + 1, 10));
            index.append(12, 10);
            assertTrue(index.isFull());
            assertThrows(IllegalStateException.class, () -> index.append(13, 20));
        }
    }

    @Test
    void truncateKeepsEntriesBelowTheOffset() throws IOException
    {
        try (OffsetIndex index = new OffsetIndex(dir.resolve("t.index"), 0, 1024, true))
        {
            for (int i = 1; i <= 10; i++)
            {
                index.append(i * 10L, i * 100);
            }
            index.truncateTo(55);
            assertEquals(5, index.entries());
            assertEquals(50, index.lastOffset());
            index.truncateTo(50);
            assertEquals(4, index.entries());
            index.append(45, 450);
            assertEquals(450, index.lookup(1000));
            index.reset();
            assertEquals(0, index.entries());
            assertEquals(0, index.lookup(1000));
        }
    }

    @Test
    void aPreallocatedIndexLeftByACrashFailsTheSanityCheck() throws IOException
    {
        final Path file = dir.resolve("crash.index");
        final OffsetIndex index = new OffsetIndex(file, 0, 4096, true);
        index.append(5, 0);
        index.append(9, 4200);
        index.flush();
        // no close: the file keeps its preallocated 4096 bytes, zeros after two entries
        try (OffsetIndex reopened = new OffsetIndex(file, 0, 4096, true))
        {
            assertEquals(512, reopened.entries());
            assertThrows(CorruptIndexException.class, reopened::sanityCheck);
        }
        Files.write(file, new byte[13]);
        assertThrows(CorruptIndexException.class, () -> new OffsetIndex(file, 0, 4096, true));
        index.unmapNow();
    }

    @Test
    void trimAndResizeForReopeningTheActiveSegment() throws IOException
    {
        final Path file = dir.resolve("r.index");
        try (OffsetIndex index = new OffsetIndex(file, 0, 800, true))
        {
            index.append(1, 1);
            index.trimToValidSize();
            assertEquals(8, Files.size(file));
            assertTrue(index.isFull());
            index.resize(800);
            assertEquals(800, Files.size(file));
            index.append(2, 2);
            assertEquals(2, index.entries());
        }
        assertEquals(16, Files.size(file));
    }

    /** The same for appends to a segment reopened after recovery rebuilt its index past the old claim. */
    @Test
    void claimingRoomAfterARebuildKeepsTheEntriesRebuiltPastTheOldClaim() throws IOException
    {
        final Path file = dir.resolve("00000000000000000000.index");
        try (OffsetIndex index = new OffsetIndex(file, 0, 800, true))
        {
            index.append(1, 100);
        }
        assertEquals(8, Files.size(file));
        try (OffsetIndex index = new OffsetIndex(file, 0, 800, true))
        {
            index.resize(800);
            index.reset();
            for (int i = 1; i <= 4; i++)
            {
                index.append(i, i * 100);
            }
            index.ensureRoomAllocated();
            index.append(5, 500);
            index.sanityCheck();
            for (int i = 0; i < 5; i++)
            {
                assertEquals(i + 1, index.relativeOffset(i));
                assertEquals((i + 1) * 100, index.position(i));
            }
        }
    }
}
