package io.ferrite.log.clean;

import io.ferrite.testing.MachineLock;

import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.storage.internals.log.SkimpyOffsetMap;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class OffsetMapTest
{
    private static UnsafeBuffer key(final String s)
    {
        return new UnsafeBuffer(s.getBytes(StandardCharsets.UTF_8));
    }

    private static void put(final OffsetMap map, final String key, final long offset)
    {
        final UnsafeBuffer k = key(key);
        map.put(k, 0, k.capacity(), offset);
    }

    private static long get(final OffsetMap map, final String key)
    {
        final UnsafeBuffer k = key(key);
        return map.get(k, 0, k.capacity());
    }

    @Test
    void putGetOverwriteAndLatestOffset()
    {
        try (OffsetMap map = new OffsetMap(24 * 100, 0.9))
        {
            assertEquals(100, map.slots());
            assertEquals(-1, map.latestOffset());
            assertEquals(OffsetMap.NO_OFFSET, get(map, "a"));
            put(map, "a", 5);
            put(map, "b", 7);
            assertEquals(5, get(map, "a"));
            assertEquals(7, get(map, "b"));
            assertEquals(7, map.latestOffset());
            put(map, "a", 9);
            assertEquals(9, get(map, "a"));
            assertEquals(2, map.size(), "an update takes no new slot");
            assertEquals(0.02, map.utilization(), 1e-9);
            map.updateLatestOffset(20);
            assertEquals(20, map.latestOffset());
            put(map, "", 21);
            assertEquals(21, get(map, ""), "the empty key is a key");
        }
    }

    @Test
    void keysReadInPlaceHeapOffHeapOrInsideALargerBuffer()
    {
        try (OffsetMap map = new OffsetMap(24 * 64, 0.9))
        {
            final byte[] bytes = "xxkey-1yy".getBytes(StandardCharsets.UTF_8);
            final UnsafeBuffer slice = new UnsafeBuffer(bytes, 1, 7); // wrap adjustment 1: "xkey-1y"
            map.put(slice, 1, 5, 3);
            final ByteBuffer direct = ByteBuffer.allocateDirect(100);
            final UnsafeBuffer offHeap = new UnsafeBuffer(direct);
            offHeap.putStringWithoutLengthAscii(40, "key-1");
            assertEquals(3, map.get(offHeap, 40, 5));
            assertEquals(3, get(map, "key-1"));
            final byte[] large = new byte[300]; // longer than the map's first key copy
            new Random(1).nextBytes(large);
            final UnsafeBuffer largeOffHeap = new UnsafeBuffer(ByteBuffer.allocateDirect(300));
            largeOffHeap.putBytes(0, large);
            map.put(largeOffHeap, 0, 300, 4);
            assertEquals(4, map.get(new UnsafeBuffer(large), 0, 300));
        }
    }

    @Test
    void collisionsProbeOnUntilEverySlotIsTakenThenANewKeyIsRefused()
    {
        final int slots = 13;
        try (OffsetMap map = new OffsetMap(24 * slots + 23, 1.0))
        {
            assertEquals(slots, map.slots(), "a partial slot is not a slot");
            for (int i = 0; i < slots; i++)
            {
                assertFalse(map.isFull());
                put(map, "k" + i, 100 + i);
            }
            assertTrue(map.isFull());
            assertEquals(1.0, map.utilization());
            // 13 keys in 13 slots: most were placed after collisions, every one is found
            for (int i = 0; i < slots; i++)
            {
                assertEquals(100 + i, get(map, "k" + i));
            }
            assertEquals(OffsetMap.NO_OFFSET, get(map, "absent"), "a full map's probe chain ends without an empty slot");
            assertThrows(IllegalStateException.class, () -> put(map, "one more", 1));
            // as Kafka's SkimpyOffsetMap, which checks before it hashes: an update of a held key throws too
            assertThrows(IllegalStateException.class, () -> put(map, "k0", 1));
            assertEquals(100, get(map, "k0"));
            assertEquals(slots, map.size());
        }
    }

    @Test
    void aMapFullBeforeItsFirstKeyIsRefused()
    {
        // Kafka's Cleaner requires slots * loadFactor > 1
        assertThrows(IllegalArgumentException.class, () -> new OffsetMap(24, 0.9));
        assertThrows(IllegalArgumentException.class, () -> new OffsetMap(24, 1.0));
        assertThrows(IllegalArgumentException.class, () -> new OffsetMap(24 * 2, 0.5));
        try (OffsetMap map = new OffsetMap(24 * 2, 0.9))
        {
            assertFalse(map.isFull(), "(int)(2 * 0.9) = 1 entry");
        }
    }

    @Test
    void aClosedMapThrowsRatherThanTouchFreedMemory()
    {
        final OffsetMap map = new OffsetMap(24 * 16, 0.9);
        put(map, "a", 1);
        map.close();
        assertThrows(IllegalStateException.class, () -> put(map, "a", 2));
        assertThrows(IllegalStateException.class, () -> get(map, "a"));
        assertThrows(IllegalStateException.class, map::clear);
        map.close(); // a second close does nothing
    }

    @Test
    void fullAtTheLoadFactorAsKafkasCleanerCounts()
    {
        try (OffsetMap map = new OffsetMap(24 * 10, 0.75))
        {
            for (int i = 0; i < 7; i++)
            {
                assertFalse(map.isFull(), "(int)(10 * 0.75) = 7 entries make it full, " + i + " do not");
                put(map, "k" + i, i);
            }
            assertTrue(map.isFull());
            put(map, "k7", 7); // full only advises the loader: the slots are still there
            assertEquals(8, map.size());
        }
        assertEquals(128 * 1024 * 1024 / 2, OffsetMap.memoryPerThread(OffsetMap.DEFAULT_DEDUPE_BUFFER_SIZE, 2));
        assertEquals(Integer.MAX_VALUE, OffsetMap.memoryPerThread(8L << 30, 1));
    }

    @Test
    void clearEmptiesEverySlot()
    {
        try (OffsetMap map = new OffsetMap(24 * 50, 0.9))
        {
            for (int i = 0; i < 40; i++)
            {
                put(map, "k" + i, i);
            }
            map.clear();
            assertEquals(0, map.size());
            assertEquals(-1, map.latestOffset());
            for (int i = 0; i < 40; i++)
            {
                assertEquals(OffsetMap.NO_OFFSET, get(map, "k" + i));
            }
            for (int i = 0; i < 45; i++)
            {
                put(map, "n" + i, 1000 + i);
            }
            assertEquals(45, map.size(), "after a clear every slot is free again");
            assertEquals(1044, get(map, "n44"));
        }
    }

    /**
     * The same keys put into Kafka's SkimpyOffsetMap of the same size: every key's latest offset, keys never put,
     * the size and the latest offset are the same; both blocks hold one 24-byte slot per key, its hash (MD5 in
     * Kafka's, {@link KeyHash} in ours) and its latest offset, big-endian; and with our hash Kafka's block is ours,
     * byte for byte (checked in {@link #besideKafkas}).
     */
    @Test
    void answersAndSlotsAreKafkasWithAnotherHash() throws Exception
    {
        besideKafkas(24 * 997 + 5, 42, (kafka, ours, random) ->
        {
            final Map<String, Long> model = new HashMap<>();
            for (long offset = 0; offset < 3000 && ours.size() < 990; offset++)
            {
                final byte[] k = new byte[random.nextInt(20)];
                random.nextBytes(k);
                final String key = (k.length % 3 == 0 ? "hot" + random.nextInt(50) : new String(k, StandardCharsets.ISO_8859_1));
                final byte[] bytes = key.getBytes(StandardCharsets.ISO_8859_1);
                kafka.put(ByteBuffer.wrap(bytes), offset);
                ours.put(new UnsafeBuffer(bytes), 0, bytes.length, offset);
                model.put(key, offset);
            }
            assertEquals(model.size(), ours.size());
            assertEquals(kafka.latestOffset(), ours.latestOffset());
            for (final Map.Entry<String, Long> e : model.entrySet())
            {
                final byte[] bytes = e.getKey().getBytes(StandardCharsets.ISO_8859_1);
                assertEquals(e.getValue(), ours.get(new UnsafeBuffer(bytes), 0, bytes.length));
                assertEquals(e.getValue(), kafka.get(ByteBuffer.wrap(bytes)));
            }
            for (int i = 0; i < 200; i++)
            {
                final byte[] absent = ("absent-" + i).getBytes(StandardCharsets.ISO_8859_1);
                assertEquals(OffsetMap.NO_OFFSET, ours.get(new UnsafeBuffer(absent), 0, absent.length));
                assertEquals(-1L, kafka.get(ByteBuffer.wrap(absent)));
            }
            return model;
        });
    }

    /**
     * A clear zeroes only the pages puts wrote: after a clear of a map of 29 pages and new keys, every byte is the one
     * a new map (all zeros, as Kafka's clear leaves its whole block) holds after the same puts; and the map answers
     * as Kafka's after the same puts, clear and puts.
     */
    @Test
    void aClearOfTheWrittenPagesLeavesANewMapsBytes() throws Exception
    {
        final int memory = 24 * 5000 + 11;
        besideKafkas(memory, 7, (kafka, ours, random) ->
        {
            Map<String, Long> model = null;
            for (int round = 0; round < 3; round++)
            {
                kafka.clear();
                ours.clear();
                model = new HashMap<>();
                // made as ours: its region after a clear the whole block, or 4 096 slots growing (to the block in round 1)
                try (OffsetMap fresh = new OffsetMap(memory, 0.9, null, ours.regionSlots()))
                {
                    final int keys = round == 1 ? 4400 : 60;
                    for (int i = 0; i < keys; i++)
                    {
                        final String key = "r" + round + "k" + random.nextInt(1_000_000);
                        final byte[] bytes = key.getBytes(StandardCharsets.ISO_8859_1);
                        kafka.put(ByteBuffer.wrap(bytes), i);
                        ours.put(new UnsafeBuffer(bytes), 0, bytes.length, i);
                        fresh.put(new UnsafeBuffer(bytes), 0, bytes.length, i);
                        model.put(key, (long)i);
                    }
                    assertArrayEquals(ourBytes(fresh), ourBytes(ours), "round " + round);
                }
            }
            return model;
        });
    }

    /** What a test does to a Kafka map and ours of the same size (with its seeded random): the keys' latest offsets. */
    private interface BothMaps
    {
        Map<String, Long> accept(SkimpyOffsetMap kafka, OffsetMap ours, Random random) throws Exception;
    }

    /**
     * Runs {@code body} four times, each time over a new Kafka map and a new one of ours of {@code memory} bytes and a
     * random of {@code seed}: with Kafka's MD5, then with our {@link KeyHash} as Kafka's digest ({@link KeyHashDigest}),
     * each with a map of ours whose region grows from 4 096 slots (as the cleaner's grows from
     * {@link OffsetMap#FIRST_REGION_SLOTS}) and with one whose region is its whole block from the start. Each time it
     * finds the same size, every key's latest offset the same in both, and in each block exactly one slot a key: its
     * hash (big-endian, {@link KeyHash}'s high then low half in ours) then its latest offset big-endian, every other
     * slot 24 zero bytes. With one hash in both and our region the whole block, the blocks are equal byte for byte:
     * every key in the slot Kafka's probe sequence gives it, which the sets of slots alone would not show.
     */
    private static void besideKafkas(final int memory, final long seed, final BothMaps body) throws Exception
    {
        KeyHashDigest.register();
        for (final String algorithm : new String[] {"MD5", KeyHashDigest.ALGORITHM})
        {
            for (final boolean wholeBlock : new boolean[] {false, true})
            {
                final String what = algorithm + (wholeBlock ? ", the whole block" : ", a growing region");
                final SkimpyOffsetMap kafka = new SkimpyOffsetMap(memory, algorithm);
                try (OffsetMap ours = new OffsetMap(memory, 0.9, null, wholeBlock ? Integer.MAX_VALUE : 4096))
                {
                    final Map<String, Long> latest = body.accept(kafka, ours, new Random(seed));
                    assertEquals(kafka.size(), ours.size(), what);
                    assertEquals(latest.size(), ours.size(), what);
                    final Map<String, Long> kafkaSlots = new HashMap<>();
                    final Map<String, Long> ourSlots = new HashMap<>();
                    final MessageDigest kafkasHash = MessageDigest.getInstance(algorithm);
                    final KeyHash hash = new KeyHash();
                    for (final Map.Entry<String, Long> e : latest.entrySet())
                    {
                        final byte[] bytes = e.getKey().getBytes(StandardCharsets.ISO_8859_1);
                        assertEquals(e.getValue(), ours.get(new UnsafeBuffer(bytes), 0, bytes.length), e.getKey());
                        assertEquals(e.getValue(), kafka.get(ByteBuffer.wrap(bytes)), e.getKey());
                        kafkaSlots.put(hex(kafkasHash.digest(bytes)), e.getValue());
                        hash.hash(new UnsafeBuffer(bytes), 0, bytes.length);
                        ourSlots.put(hex(ByteBuffer.allocate(16).putLong(hash.high()).putLong(hash.low()).array()), e.getValue());
                    }
                    assertEquals(kafkaSlots, slotsHeld(kafkaBytes(kafka, ours.slots())), what);
                    assertEquals(ourSlots, slotsHeld(ourBytes(ours)), what);
                    if (algorithm.equals(KeyHashDigest.ALGORITHM) && wholeBlock)
                    {
                        assertArrayEquals(kafkaBytes(kafka, ours.slots()), ourBytes(ours), "slot layout and probe order are Kafka's");
                    }
                }
            }
        }
    }

    /** The non-empty slots of a block: hash (hex) to offset, each hash once. */
    private static Map<String, Long> slotsHeld(final byte[] block)
    {
        final Map<String, Long> held = new HashMap<>();
        final ByteBuffer slots = ByteBuffer.wrap(block);
        final byte[] zero = new byte[24];
        for (int position = 0; position + 24 <= block.length; position += 24)
        {
            final byte[] slot = new byte[24];
            slots.get(position, slot);
            if (!Arrays.equals(zero, slot))
            {
                final byte[] hash = Arrays.copyOf(slot, 16);
                assertEquals(null, held.put(hex(hash), slots.getLong(position + 16)), "a hash in two slots");
            }
        }
        return held;
    }

    private static String hex(final byte[] bytes)
    {
        return HexFormat.of().formatHex(bytes);
    }

    /**
     * A key alone in a slot that straddles two 4 KiB pages (its first bytes on one, its offset's tail on the next):
     * the clear zeroes both pages, so the map is all zeros again, as Kafka's. With the put marking only the slot's
     * first page, the tail stayed and the next clean would see a phantom occupied slot. The slot is found with the
     * map's own probe (attempt 0 of an empty map: the hash's first big-endian int, Kafka's abs, modulo the slots),
     * and the put is checked to have written the key there.
     */
    @Test
    void aClearZeroesASlotThatStraddlesTwoPages() throws Exception
    {
        final int slots = 4096;
        final KeyHash hash = new KeyHash();
        String straddling = null;
        int position = -1;
        for (int i = 0; straddling == null; i++)
        {
            final String candidate = "straddle-" + i;
            hash.hash(key(candidate), 0, candidate.length());
            final int probe = (int)(hash.high() >>> 32);
            final int slot = (probe == Integer.MIN_VALUE ? 0 : Math.abs(probe)) % slots;
            if ((slot * 24) % 4096 > 4096 - 24)
            {
                straddling = candidate;
                position = slot * 24;
            }
        }
        try (OffsetMap map = new OffsetMap(24 * slots, 0.9))
        {
            final long offset = 0x7efd_fcfb_faf9_f8f7L; // every byte of the offset is set
            put(map, straddling, offset);
            assertEquals(offset, get(map, straddling));
            final byte[] expected = ByteBuffer.allocate(24).putLong(hash.high()).putLong(hash.low()).putLong(offset).array();
            assertArrayEquals(expected, Arrays.copyOfRange(ourBytes(map), position, position + 24),
                "the key is in the straddling slot the probe gives it");
            map.clear();
            assertArrayEquals(new byte[slots * 24], ourBytes(map), "every byte zero after the clear");
            assertEquals(OffsetMap.NO_OFFSET, get(map, straddling));
        }
    }

    @Test
    void putAndGetAllocateNothingEvenWhenTheRegionGrows()
    {
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final int keyCount = 5000; // past half of 4 096 and of 8 192 slots: each window grows the region twice
        final UnsafeBuffer keys = new UnsafeBuffer(ByteBuffer.allocateDirect(16 * keyCount));
        for (int i = 0; i < keyCount; i++)
        {
            keys.putLong(i * 16, i * 31L);
            keys.putLong(i * 16 + 8, i);
        }
        try (OffsetMap map = new OffsetMap(24 * 16_384, 0.9, null, 4096))
        {
            long fewest = Long.MAX_VALUE;
            long sum = 0;
            for (int window = 0; window < 5; window++)
            {
                final long before = threads.getCurrentThreadAllocatedBytes();
                map.clear();
                for (int n = 0; n < 20_000; n++)
                {
                    final int i = n % keyCount;
                    map.put(keys, i * 16, 16, n);
                    sum += map.get(keys, i * 16, 16);
                }
                assertEquals(16_384, map.regionSlots());
                fewest = Math.min(fewest, threads.getCurrentThreadAllocatedBytes() - before);
            }
            assertTrue(sum > 0);
            assertEquals(0, fewest, "bytes allocated by a clear and 20000 puts and gets of off-heap keys, two growths among them");
        }
    }

    /**
     * Until it grows, a region of 4 096 slots at the start of a larger block holds its keys byte for byte where Kafka's
     * map of 4 096 slots does (the mask takes Kafka's slot), the rest of the block untouched; the put that finds it half
     * full doubles it, and every key is found after the move; a clear makes it 4 096 slots again.
     */
    @Test
    void aRegionHoldsItsKeysWhereKafkasMapOfItsSizeDoes() throws Exception
    {
        KeyHashDigest.register();
        final SkimpyOffsetMap kafka = new SkimpyOffsetMap(24 * 4096, KeyHashDigest.ALGORITHM);
        try (OffsetMap map = new OffsetMap(24 * 100_000, 0.9, null, 4096))
        {
            for (int round = 0; round < 2; round++)
            {
                kafka.clear();
                map.clear();
                assertEquals(4096, map.regionSlots());
                for (int i = 0; i < 2048; i++)
                {
                    final byte[] key = ("round-" + round + "-key-" + i).getBytes(StandardCharsets.ISO_8859_1);
                    kafka.put(ByteBuffer.wrap(key), 10L * i);
                    map.put(new UnsafeBuffer(key), 0, key.length, 10L * i);
                }
                assertEquals(4096, map.regionSlots(), "2 048 keys fill half of the region: not grown yet");
                final byte[] block = ourBytes(map);
                assertArrayEquals(kafkaBytes(kafka, 4096), Arrays.copyOf(block, 24 * 4096), "round " + round);
                assertArrayEquals(new byte[block.length - 24 * 4096], Arrays.copyOfRange(block, 24 * 4096, block.length));
                put(map, "round-" + round + "-key-0", 1); // an update, and a put: the region grows first
                assertEquals(8192, map.regionSlots());
                assertEquals(1, get(map, "round-" + round + "-key-0"));
                for (int i = 1; i < 2048; i++)
                {
                    assertEquals(10L * i, get(map, "round-" + round + "-key-" + i));
                }
                assertEquals(2048, map.size());
            }
        }
    }

    /**
     * The broker's map (a block of 48 MiB here, 2 097 152 slots: past the last doubled region of 12 MiB, so a doubling
     * would not pass it) doubles its region from 65 536 slots to 524 288, and the put that finds that half full makes
     * the whole block the region at once (not 1 048 576 slots): every key is still found, and a clear starts over.
     */
    @Test
    void pastTwelveMibTheRegionBecomesTheWholeBlock(@TempDir final Path dir)
    {
        final UnsafeBuffer key = new UnsafeBuffer(ByteBuffer.allocateDirect(8));
        try (OffsetMap map = new OffsetMap(24 << 21, 0.9, dir))
        {
            for (int round = 0; round < 2; round++)
            {
                map.clear();
                assertEquals(OffsetMap.FIRST_REGION_SLOTS, map.regionSlots());
                final int keys = OffsetMap.LAST_DOUBLED_REGION_SLOTS / 2;
                for (int i = 0; i < keys; i++)
                {
                    key.putLong(0, round * 10_000_000L + i);
                    map.put(key, 0, 8, i);
                }
                assertEquals(OffsetMap.LAST_DOUBLED_REGION_SLOTS, map.regionSlots(), "half full: not grown yet");
                key.putLong(0, -1);
                map.put(key, 0, 8, keys);
                assertEquals(map.slots(), map.regionSlots());
                assertEquals(keys + 1, map.size());
                assertEquals(keys, map.get(key, 0, 8));
                for (int i = 0; i < keys; i++)
                {
                    key.putLong(0, round * 10_000_000L + i);
                    assertEquals(i, map.get(key, 0, 8));
                }
            }
        }
    }

    /**
     * A map whose region starts at one slot grows through every power of two to its whole block of 1 000 slots, moving
     * its keys ten times, and still answers every key as a map over the model, fills at Kafka's count, takes every slot
     * at load factor 1 and then refuses a new key, as {@link #collisionsProbeOnUntilEverySlotIsTakenThenANewKeyIsRefused}.
     */
    @Test
    void growingFromOneSlotToTheWholeBlockKeepsEveryKey()
    {
        try (OffsetMap map = new OffsetMap(24 * 1000 + 7, 1.0, null, 1))
        {
            final Map<String, Long> model = new HashMap<>();
            final Random random = new Random(11);
            long offset = 0;
            while (model.size() < 1000)
            {
                assertFalse(map.isFull(), model.size() + " keys");
                final String key = random.nextInt(4) == 0 && !model.isEmpty() ? "k" + random.nextInt(model.size()) : "k" + model.size();
                put(map, key, offset);
                model.put(key, offset++);
                assertEquals(model.size(), map.size());
                if (Integer.bitCount(model.size()) == 1 || model.size() % 97 == 0)
                {
                    for (final Map.Entry<String, Long> e : model.entrySet())
                    {
                        assertEquals(e.getValue(), get(map, e.getKey()), e.getKey() + " among " + model.size() + " keys");
                    }
                }
            }
            assertEquals(1000, map.regionSlots());
            assertTrue(map.isFull());
            for (final Map.Entry<String, Long> e : model.entrySet())
            {
                assertEquals(e.getValue(), get(map, e.getKey()));
            }
            assertEquals(OffsetMap.NO_OFFSET, get(map, "absent"));
            assertThrows(IllegalStateException.class, () -> put(map, "one more", 1));
        }
    }

    /**
     * The same keys put into Kafka's SkimpyOffsetMap and ours of 20 000 slots, filled to Kafka's capacity at load
     * factor 0.9 (18 000 keys) through our region's growths (4 096, 8 192, 16 384 slots, then the block), updates among
     * them: the same answers and the same (hash, offset) slots.
     */
    @Test
    void aMapFilledToItsCapacityThroughItsGrowthsAnswersAsKafkas() throws Exception
    {
        besideKafkas(24 * 20_000 + 3, 5, (kafka, ours, random) ->
        {
            final Map<String, Long> model = new HashMap<>();
            for (long offset = 0; !ours.isFull(); offset++)
            {
                final String key = random.nextInt(3) == 0 && !model.isEmpty() ? "key-" + random.nextInt(model.size())
                    : "key-" + model.size();
                final byte[] bytes = key.getBytes(StandardCharsets.ISO_8859_1);
                kafka.put(ByteBuffer.wrap(bytes), offset);
                ours.put(new UnsafeBuffer(bytes), 0, bytes.length, offset);
                model.put(key, offset);
            }
            assertEquals(18_000, ours.size(), "full at (int)(20 000 * 0.9) keys");
            assertEquals(20_000, ours.regionSlots());
            return model;
        });
    }

    @Test
    void aNegativeOffsetIsRefused()
    {
        try (OffsetMap map = new OffsetMap(24 * 100, 0.9))
        {
            assertThrows(IllegalArgumentException.class, () -> put(map, "k", -1));
            assertEquals(0, map.size());
        }
    }

    /**
     * A map of Kafka's default 128 MiB holding a few keys, its file in a directory on disk, costs resident memory only
     * for the pages the keys landed in, when made, filled and cleared (Linux: /proc/self/status). Allocated and zeroed
     * as before (allocateDirect, a clear over the whole block), RssAnon grew by 128 MiB here.
     */
    @Test
    void aLargeMapIsResidentOnlyWhereUsed(@TempDir final Path dir) throws Exception
    {
        Assumptions.assumeTrue(Files.isReadable(STATUS), "no /proc/self/status");
        Assumptions.assumeFalse(inMemory(dir), "the test directory is on tmpfs");
        try (MachineLock shmLock = MachineLock.hold(MachineLock.DEV_SHM)) // no other test JVM moves the system's Shmem meanwhile
        {
            System.gc();
            final long before = unreclaimableKb();
            try (OffsetMap map = new OffsetMap(OffsetMap.memoryPerThread(OffsetMap.DEFAULT_DEDUPE_BUFFER_SIZE, 1), 0.9, dir))
            {
                assertTrue(map.residentOnlyWhereUsed());
                try (var files = Files.list(dir))
                {
                    assertEquals(0, files.count(), "the map's file is deleted once mapped");
                }
                for (int round = 0; round < 2; round++)
                {
                    map.clear();
                    for (int i = 0; i < 200; i++)
                    {
                        put(map, "key-" + round + "-" + i, i);
                    }
                    assertEquals(199, get(map, "key-" + round + "-199"));
                }
                map.clear();
                final long grownKb = unreclaimableKb() - before;
                // 400 keys touch at most 800 pages (3.2 MiB); the rest of the margin is the JVM's own
                assertTrue(grownKb < 32 * 1024, "RssAnon+RssShmem+Shmem grew by " + grownKb + " KiB for a 128 MiB map holding 200 keys");
            }
        }
    }

    /**
     * A map whose directory is on tmpfs takes direct memory (resident whole, once) rather than a file there, whose every
     * page a clean reads then writes would cost a shared-memory page besides the anonymous copy: filled, it costs about
     * its size, not twice. With the map's file on /dev/shm (the branch before: a file in java.io.tmpdir, on tmpfs on
     * many systems) RssAnon+RssShmem+Shmem grew by 50 768 KiB for the map's 32 MiB here (7 084 KiB with the fallback:
     * the figures are noisy, the JVM's own memory moves too, hence a bound of 1.25 times).
     */
    @Test
    void aMapOnTmpfsIsDirectMemoryNotTwiceResident() throws Exception
    {
        final Path shm = Path.of("/dev/shm");
        Assumptions.assumeTrue(Files.isReadable(STATUS) && Files.isWritable(shm) && inMemory(shm), "no writable /dev/shm on tmpfs");
        try (MachineLock shmLock = MachineLock.hold(MachineLock.DEV_SHM)) // no other test JVM moves the system's Shmem meanwhile
        {
            final Path dir = Files.createTempDirectory(shm, "offset-map-test-");
            try
            {
                final UnsafeBuffer key = new UnsafeBuffer(ByteBuffer.allocateDirect(8));
                System.gc();
                final long before = unreclaimableKb();
                final int bytes = 32 << 20;
                try (OffsetMap map = new OffsetMap(bytes, 0.9, dir))
                {
                    assertFalse(map.residentOnlyWhereUsed());
                    for (int i = 0; i < 200_000; i++) // about 24 keys a page: every page read, then written
                    {
                        key.putLong(0, i);
                        map.put(key, 0, 8, i);
                    }
                    final long grownKb = unreclaimableKb() - before;
                    assertTrue(grownKb < (bytes >> 10) * 5 / 4, "RssAnon+RssShmem+Shmem grew by " + grownKb + " KiB for a map of " +
                        (bytes >> 10) + " KiB");
                }
            }
            finally
            {
                Files.deleteIfExists(dir);
            }
        }
    }

    /** A map whose directory cannot take its file (gone, here) still works, in direct memory. */
    @Test
    void aMapWithoutItsFileIsDirectMemory(@TempDir final Path dir)
    {
        try (OffsetMap map = new OffsetMap(24 * 1000, 0.9, dir.resolve("missing")))
        {
            assertFalse(map.residentOnlyWhereUsed());
            put(map, "k", 7);
            assertEquals(7, get(map, "k"));
        }
    }

    private static final Path STATUS = Path.of("/proc/self/status");

    private static boolean inMemory(final Path dir) throws Exception
    {
        final String type = Files.getFileStore(dir).type();
        return type.equals("tmpfs") || type.equals("ramfs");
    }

    /** What the process holds that no page-out of a file frees: RssAnon and RssShmem, plus the system's Shmem. */
    private static long unreclaimableKb() throws Exception
    {
        return field(STATUS, "RssAnon:") + field(STATUS, "RssShmem:") + field(Path.of("/proc/meminfo"), "Shmem:");
    }

    private static long field(final Path file, final String name) throws Exception
    {
        for (final String line : Files.readAllLines(file))
        {
            if (line.startsWith(name))
            {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new AssertionError("no " + name + " in " + file);
    }

    private static byte[] kafkaBytes(final SkimpyOffsetMap kafka, final int slots) throws Exception
    {
        final Field field = SkimpyOffsetMap.class.getDeclaredField("bytes");
        field.setAccessible(true);
        final ByteBuffer kafkaBytes = (ByteBuffer)field.get(kafka);
        final byte[] expected = new byte[slots * 24];
        System.arraycopy(kafkaBytes.array(), kafkaBytes.arrayOffset(), expected, 0, expected.length);
        return expected;
    }

    private static byte[] ourBytes(final OffsetMap ours) throws Exception
    {
        final Field memoryField = OffsetMap.class.getDeclaredField("slotsBuffer");
        memoryField.setAccessible(true);
        final UnsafeBuffer slots = (UnsafeBuffer)memoryField.get(ours);
        final byte[] actual = new byte[ours.slots() * 24];
        slots.getBytes(0, actual);
        return actual;
    }
}
