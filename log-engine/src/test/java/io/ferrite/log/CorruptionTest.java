package io.ferrite.log;

import io.ferrite.wire.testing.Property;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Files damaged at random bytes: a log file truncated or overwritten is cut before its first
 * invalid batch, keeping everything before it and every other segment (a gap of offsets where the
 * damage was, when it is not the last segment); damaged indexes and snapshots are rebuilt; reads
 * stay byte-exact throughout.
 */
class CorruptionTest
{
    private static final int BATCHES = 60;

    @TempDir
    Path root;

    private Path pristine;
    private final List<byte[]> written = new ArrayList<>();
    private final List<Long> bases = new ArrayList<>();

    @BeforeEach
    void writeALog() throws IOException
    {
        pristine = root.resolve("pristine");
        try (LogManager manager = LogManager.open(LogManagerConfig.of(pristine)))
        {
            final PartitionLog log = manager.createLog("c", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "6000",
                LogConfig.INDEX_INTERVAL_BYTES, "300", LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE)));
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            for (int i = 0; i < BATCHES; i++)
            {
                batches.build(1 + i % 5, i, 1_700_000_000_000L + i, io.ferrite.wire.compress.CompressionType.NONE, 7, (short)0,
                    (int)(long)(bases.isEmpty() ? 0 : bases.get(i - 1) + 1 + (i - 1) % 5));
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status, result.toString());
                bases.add(result.firstOffset);
                written.add(batches.bytes());
            }
        }
    }

    private Path copy(final String name) throws IOException
    {
        final Path target = root.resolve(name);
        try (Stream<Path> files = Files.walk(pristine))
        {
            for (final Path p : (Iterable<Path>)files::iterator)
            {
                final Path to = target.resolve(pristine.relativize(p).toString());
                if (Files.isDirectory(p))
                {
                    Files.createDirectories(to);
                }
                else if (!p.getFileName().toString().equals(LogManager.LOCK_FILE))
                {
                    Files.copy(p, to, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
        return target;
    }

    private static List<Path> files(final Path dir, final String suffix) throws IOException
    {
        try (Stream<Path> files = Files.list(dir.resolve("c-0")))
        {
            return files.filter(p -> p.toString().endsWith(suffix)).sorted(Comparator.comparing(Path::toString)).toList();
        }
    }

    @Test
    void aTruncatedOrOverwrittenLogRecoversToItsLastValidBatch()
    {
        final int[] run = new int[1];
        Property.check("damaged log", 30, r ->
        {
            try
            {
                final Path dir = copy("log" + run[0]++);
                final List<Path> logs = files(dir, ".log");
                final int v = r.nextInt(logs.size());
                final Path victim = logs.get(v);
                final long victimBase = baseOf(victim);
                final long nextBase = v + 1 < logs.size() ? baseOf(logs.get(v + 1)) : Long.MAX_VALUE;
                final int firstBad = damage(victim, r);
                Files.deleteIfExists(dir.resolve(LogManager.CLEAN_SHUTDOWN_FILE)); // an unclean stop: recover
                Files.deleteIfExists(dir.resolve(OffsetCheckpoint.RECOVERY_POINTS)); // from the start
                // every batch of the damaged segment wholly before the first damaged byte survives, the
                // rest of that segment is gone, every other segment stays
                final boolean[] survives = surviving(victimBase, nextBase, firstBad);
                final long end = nextBase == Long.MAX_VALUE ? survivingEnd(survives) : lastOffset() + 1;
                final String what = "damage at " + firstBad + " of " + victim.getFileName();
                try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
                {
                    final PartitionLog log = manager.log("c", 0);
                    assertEquals(end, log.logEndOffset(), what);
                    assertEquals(logs.size(), log.segmentCount(), what + ": no segment is deleted");
                    assertReadsExact(log, survives, what);
                    CrashRecoveryTest.verifyIndexes(log);
                }
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
        });
    }

    /** Truncates or overwrites {@code file} at random; returns the first position whose byte changed. */
    private static int damage(final Path file, final Random r) throws IOException
    {
        final byte[] before = Files.readAllBytes(file);
        if (before.length == 0)
        {
            return 0;
        }
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            if (r.nextBoolean())
            {
                final int cut = r.nextInt(before.length);
                raf.setLength(cut);
                return cut;
            }
            final int at = r.nextInt(before.length);
            final byte[] junk = new byte[1 + r.nextInt(r.nextBoolean() ? 4 : 200)];
            r.nextBytes(junk);
            raf.seek(at);
            raf.write(junk, 0, Math.min(junk.length, before.length - at));
        }
        final byte[] after = Files.readAllBytes(file);
        for (int i = 0; i < before.length; i++)
        {
            if (before[i] != after[i])
            {
                return i;
            }
        }
        return before.length; // the junk matched what was there: nothing changed
    }

    private static long baseOf(final Path segmentFile)
    {
        return Long.parseLong(segmentFile.getFileName().toString().substring(0, 20));
    }

    /**
     * Which batches survive once the segment holding offsets [{@code segmentBase}, {@code nextBase})
     * is cut before its byte {@code firstBad}: its batches wholly before that byte, and every batch of
     * every other segment.
     */
    private boolean[] surviving(final long segmentBase, final long nextBase, final int firstBad)
    {
        final boolean[] survives = new boolean[BATCHES];
        long position = 0;
        boolean cut = false;
        for (int i = 0; i < BATCHES; i++)
        {
            if (bases.get(i) < segmentBase || bases.get(i) >= nextBase)
            {
                survives[i] = true;
                continue;
            }
            position += written.get(i).length;
            cut |= position > firstBad;
            survives[i] = !cut;
        }
        return survives;
    }

    /** The log end offset when the last segment is the damaged one: after its last surviving batch. */
    private long survivingEnd(final boolean[] survives)
    {
        for (int i = BATCHES - 1; i >= 0; i--)
        {
            if (survives[i])
            {
                return i == BATCHES - 1 ? lastOffset() + 1 : bases.get(i + 1);
            }
        }
        return 0;
    }

    private long lastOffset()
    {
        return bases.get(BATCHES - 1) + 1 + (BATCHES - 1) % 5 - 1;
    }

    /**
     * Every surviving batch reads back exactly, at its own offsets and, for an offset lost to the
     * damage (a gap), as the next surviving batch.
     */
    private void assertReadsExact(final PartitionLog log, final boolean[] survives, final String what) throws IOException
    {
        final FileRegion region = new FileRegion();
        final long end = log.logEndOffset();
        int next = 0;
        for (long offset = 0; offset < end; offset++)
        {
            while (!survives[next] || bases.get(next) + 1 + next % 5 <= offset)
            {
                next++;
            }
            assertEquals(PartitionLog.READ_OK, log.read(offset, 1, end, true, region), what + " at " + offset);
            final byte[] expected = written.get(next).clone();
            java.nio.ByteBuffer.wrap(expected).putLong(0, bases.get(next)).putInt(12, 0);
            assertArrayEquals(expected, PartitionLogTest.readRegion(region), what + ": batch " + next + " at " + offset);
        }
    }

    @Test
    void damagedIndexesAndSnapshotsAreRebuilt()
    {
        final int[] run = new int[1];
        Property.check("damaged indexes", 30, r ->
        {
            try
            {
                final Path dir = copy("idx" + run[0]++);
                for (final String suffix : new String[] {".index", ".timeindex", ".snapshot"})
                {
                    for (final Path f : files(dir, suffix))
                    {
                        if (r.nextInt(3) == 0)
                        {
                            try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw"))
                            {
                                switch (r.nextInt(4))
                                {
                                    case 0 -> raf.setLength(Math.max(0, raf.length() - 1 - r.nextInt(7)));
                                    case 1 -> Files.delete(f);
                                    case 2 ->
                                    {
                                        final byte[] junk = new byte[8 + r.nextInt(24)];
                                        r.nextBytes(junk);
                                        raf.seek(r.nextInt((int)Math.max(1, raf.length())));
                                        raf.write(junk);
                                    }
                                    default -> raf.setLength(raf.length() + 24); // zeros at the end
                                }
                            }
                        }
                    }
                }
                try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
                {
                    final PartitionLog log = manager.log("c", 0);
                    assertEquals(lastOffset() + 1, log.logEndOffset());
                    final boolean[] all = new boolean[BATCHES];
                    java.util.Arrays.fill(all, true);
                    assertReadsExact(log, all, "damaged indexes");
                    // the producer's next batch is in sequence: its state survived or was rebuilt
                    final Batches next = new Batches();
                    final long nextOffset = log.logEndOffset();
                    next.build(1, 99, 1_700_000_000_100L, io.ferrite.wire.compress.CompressionType.NONE, 7, (short)0, (int)nextOffset);
                    final AppendResult result = new AppendResult();
                    log.append(next.buffer, 0, next.length, result);
                    assertEquals(AppendResult.OK, result.status, result.toString());
                    assertTrue(result.firstOffset == nextOffset);
                }
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
        });
    }
}
