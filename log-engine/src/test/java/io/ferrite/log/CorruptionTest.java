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
 * Files damaged at random bytes: a log file truncated or overwritten recovers to its last valid
 * batch, keeping everything before; damaged indexes and snapshots are rebuilt; reads stay
 * byte-exact throughout.
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
                // every batch wholly before the first damaged byte survives; the rest are gone
                final long survivingEnd = survivingEnd(victimBase, nextBase, firstBad);
                try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
                {
                    final PartitionLog log = manager.log("c", 0);
                    assertEquals(survivingEnd, log.logEndOffset(), "damage at " + firstBad + " of " + victim.getFileName());
                    assertReadsExact(log, survivingEnd);
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
     * The log end offset once the segment holding offsets [{@code segmentBase}, {@code nextBase}) is
     * cut before its byte {@code firstBad}: its batches wholly before that byte stay, and so does
     * everything before the segment; the rest of it and every later segment go.
     */
    private long survivingEnd(final long segmentBase, final long nextBase, final int firstBad)
    {
        long position = 0;
        for (int i = 0; i < BATCHES; i++)
        {
            if (bases.get(i) < segmentBase)
            {
                continue;
            }
            if (bases.get(i) >= nextBase)
            {
                return lastOffset() + 1; // the damage changed no byte of this segment's batches
            }
            position += written.get(i).length;
            if (position > firstBad)
            {
                return bases.get(i);
            }
        }
        return lastOffset() + 1;
    }

    private long lastOffset()
    {
        return bases.get(BATCHES - 1) + 1 + (BATCHES - 1) % 5 - 1;
    }

    private void assertReadsExact(final PartitionLog log, final long end) throws IOException
    {
        final FileRegion region = new FileRegion();
        for (int i = 0; i < BATCHES && bases.get(i) < end; i++)
        {
            assertEquals(PartitionLog.READ_OK, log.read(bases.get(i), 1, end, true, region));
            final byte[] expected = written.get(i).clone();
            java.nio.ByteBuffer.wrap(expected).putLong(0, bases.get(i)).putInt(12, 0);
            assertArrayEquals(expected, PartitionLogTest.readRegion(region), "batch " + i);
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
                    assertReadsExact(log, log.logEndOffset());
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
