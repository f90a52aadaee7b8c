package io.ferrite.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A new partition is made with its log file only (and the caller's files): its indexes are made at
 * their first entry, or empty when the segment is closed or rolled. Creation is bound by the
 * filesystem's file creations (on the test machine a single mkdir cost 0.6-0.8 ms), and the
 * indexes were two of the five a new partition made. Starts after a clean and an unclean stop find
 * what they found before.
 */
class NewPartitionFilesTest
{
    private static final String LOG = Segment.fileName(0, Segment.LOG_SUFFIX);
    private static final String INDEX = Segment.fileName(0, Segment.INDEX_SUFFIX);
    private static final String TIME_INDEX = Segment.fileName(0, Segment.TIME_INDEX_SUFFIX);

    @TempDir
    Path dir;

    @Test
    void aNewPartitionHasItsLogFileOnlyUntilItsIndexesTakeAnEntry() throws Exception
    {
        final Path data = dir.resolve("data");
        final Batches batches = new Batches();
        final AppendResult result = new AppendResult();
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
        {
            final PartitionLog idle = manager.createLogs("idle", 0, 1, Map.of())[0];
            final PartitionLog busy = manager.createLogs("busy", 0, 1, Map.of("index.interval.bytes", "100"))[0];
            assertEquals(Set.of(LOG), names(idle.dir()), "made");
            assertEquals(Set.of(LOG, PartitionOverrides.PARTITION_CONFIG_FILE), names(busy.dir()), "made, with its overrides");

            batches.records(1, 0, System.currentTimeMillis());
            idle.append(batches.buffer, 0, batches.length, result); // one small batch: no index entry
            assertEquals(AppendResult.OK, result.status);
            assertEquals(Set.of(LOG), names(idle.dir()), "no index entry yet");
            for (int i = 0; i < 20; i++)
            {
                batches.records(5, busy.logEndOffset(), System.currentTimeMillis());
                busy.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status);
            }
            assertEquals(Set.of(LOG, INDEX, TIME_INDEX, PartitionOverrides.PARTITION_CONFIG_FILE), names(busy.dir()),
                "index entries taken");
            OpenFilesTest.copy(data, dir.resolve("unclean")); // the files as a SIGKILL now would leave them: idle's indexes absent
        }
        assertEquals(Set.of(LOG, INDEX, TIME_INDEX), segmentFiles(data.resolve("idle-0")),
            "a clean stop leaves every segment its index files, as before");
        final Path unclean = dir.resolve("unclean");
        assertEquals(Set.of(LOG), segmentFiles(unclean.resolve("idle-0")), "what a kill leaves");
        for (final Path start : new Path[] {data, unclean})
        {
            try (LogManager manager = LogManager.open(LogManagerConfig.of(start)))
            {
                assertEquals(1, manager.log("idle", 0).logEndOffset(), start.getFileName() + ": idle's record");
                assertEquals(100, manager.log("busy", 0).logEndOffset(), start.getFileName() + ": busy's records");
                final FileRegion region = new FileRegion();
                assertEquals(PartitionLog.READ_OK, manager.log("busy", 0).read(73, 1024, Long.MAX_VALUE, true, region));
                assertTrue(region.firstBatchOffset <= 73 && region.nextOffset > 73 && !region.isEmpty(),
                    start.getFileName() + ": busy read in the middle, through its index: " + region);
            }
        }
    }

    @Test
    void aRollBeforeAnyIndexEntryLeavesTheRolledSegmentItsEmptyIndexes() throws Exception
    {
        final Batches batches = new Batches();
        final AppendResult result = new AppendResult();
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            // segments of 1 KiB: rolled long before the first index entry's 4 KiB
            final PartitionLog log = manager.createLogs("t", 0, 1, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "1024"))[0];
            while (log.segmentCount() < 2)
            {
                batches.records(5, log.logEndOffset(), System.currentTimeMillis());
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status);
            }
            assertTrue(names(log.dir()).containsAll(Set.of(LOG, INDEX, TIME_INDEX)), "the rolled segment's files: " + names(log.dir()));
            assertEquals(0, Files.size(log.dir().resolve(INDEX)));
        }
    }

    /**
     * The preallocator makes a busy segment's index files ahead of its first entry (past half an
     * index interval of log), so that the writer does not make them; an idle one's it leaves alone.
     */
    @Test
    void thePreallocatorMakesTheIndexFilesAheadOfTheFirstEntry() throws Exception
    {
        final Batches batches = new Batches();
        final AppendResult result = new AppendResult();
        // the channel strategy starts no preallocator thread: the test makes the preallocator's calls itself
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withWriteStrategy(WriteStrategy.CHANNEL), true))
        {
            final PartitionLog log = manager.createLogs("t", 0, 1, Map.of("index.interval.bytes", "1000"))[0];
            batches.records(1, 0, System.currentTimeMillis()); // well below half an interval
            log.append(batches.buffer, 0, batches.length, result);
            assertTrue(batches.length < 500, "a small batch: " + batches.length);
            assertEquals(0, log.makeIndexFilesAhead());
            assertEquals(Set.of(LOG, PartitionOverrides.PARTITION_CONFIG_FILE), names(log.dir()), "an idle segment's");
            while (log.sizeInBytes() < 500)
            {
                batches.records(1, log.logEndOffset(), System.currentTimeMillis());
                log.append(batches.buffer, 0, batches.length, result);
            }
            assertEquals(Set.of(LOG, PartitionOverrides.PARTITION_CONFIG_FILE), names(log.dir()), "no entry yet: " + log.sizeInBytes());
            assertEquals(2, log.makeIndexFilesAhead(), "made by the preallocator past half an interval");
            assertEquals(Set.of(LOG, INDEX, TIME_INDEX, PartitionOverrides.PARTITION_CONFIG_FILE), names(log.dir()));
            assertEquals(0, log.makeIndexFilesAhead(), "once");
        }
    }

    /** Many partitions reaching their first entry together: at most two file creations a preallocator cycle. */
    @Test
    void thePreallocatorMakesAtMostTwoIndexFilesACycle() throws Exception
    {
        final Batches batches = new Batches();
        final AppendResult result = new AppendResult();
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withWriteStrategy(WriteStrategy.CHANNEL), true))
        {
            final PartitionLog[] logs = manager.createLogs("t", 0, 3, Map.of("index.interval.bytes", "100"));
            for (final PartitionLog log : logs)
            {
                batches.records(5, 0, System.currentTimeMillis()); // past half an interval, no entry yet
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status);
            }
            final Preallocator preallocator = new Preallocator(() -> logs, new AgentErrors("test-preallocator"));
            int[] made = new int[3];
            for (int cycle = 0; cycle < 3; cycle++)
            {
                preallocator.doWork();
                made[cycle] = indexFiles(logs);
            }
            assertEquals(2, made[0], "the first cycle's budget");
            assertEquals(4, made[1]);
            assertEquals(6, made[2]);
        }
    }

    private static int indexFiles(final PartitionLog[] logs) throws IOException
    {
        int n = 0;
        for (final PartitionLog log : logs)
        {
            n += (Files.exists(log.dir().resolve(INDEX)) ? 1 : 0) + (Files.exists(log.dir().resolve(TIME_INDEX)) ? 1 : 0);
        }
        return n;
    }

    private static Set<String> names(final Path dir) throws IOException
    {
        try (Stream<Path> files = Files.list(dir))
        {
            final Set<String> names = new TreeSet<>();
            files.forEach(f -> names.add(f.getFileName().toString()));
            return names;
        }
    }

    private static Set<String> segmentFiles(final Path dir) throws IOException
    {
        final Set<String> names = names(dir);
        names.removeIf(n -> !n.startsWith("0000"));
        names.removeIf(n -> n.endsWith(".snapshot"));
        return names;
    }
}
