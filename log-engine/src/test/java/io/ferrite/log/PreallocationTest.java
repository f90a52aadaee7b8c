package io.ferrite.log;

import org.agrona.concurrent.SystemEpochClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the preallocator keeps ahead of a writer follows the writer's pace: nothing for a partition
 * nobody writes (every page ahead is a disk block and a resident page: at 2 MiB ahead of every
 * partition, 2 000 idle partitions held 3.2 GB of RSS), a few pages for a slow writer, the full
 * lookahead for a fast one. Each look here is the preallocator thread's, made by hand (no
 * preallocator runs with the inline environment).
 */
class PreallocationTest
{
    @TempDir
    Path dir;

    private PartitionLog open() throws IOException
    {
        return LogLoader.load("p", 0, dir.resolve("p-0"), LogConfig.of(Map.of()), WriteStrategy.MAPPED, SystemEpochClock.INSTANCE,
            LogEnvironment.INLINE, false, 0, 0);
    }

    private static int ahead(final PartitionLog log)
    {
        final Segment active = log.segments()[log.segments().length - 1];
        return active.log.allocatedAhead(active.size());
    }

    @Test
    void aPartitionNobodyWritesGetsNothingAhead() throws IOException
    {
        try (PartitionLog log = open())
        {
            for (int look = 0; look < 10; look++)
            {
                log.preallocate();
            }
            assertEquals(0, ahead(log), "bytes allocated ahead of an empty, unwritten partition");
        }
    }

    @Test
    void theLookaheadFollowsTheWritersPace() throws IOException
    {
        try (PartitionLog log = open())
        {
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            batches.records(1, 1, System.currentTimeMillis()); // a few dozen bytes between two looks
            log.preallocate();
            log.append(batches.buffer, 0, batches.length, result);
            assertEquals(AppendResult.OK, result.status);
            log.preallocate();
            final int slow = ahead(log);
            assertTrue(slow >= batches.length && slow <= 64 * 1024, slow + " bytes ahead of a slow writer");

            // ~35 KiB between two looks: 64 looks of it is past the most, which the writer gets once
            // the file holds as much (a file never gets more ahead than it holds)
            for (int i = 0; i < 80; i++)
            {
                batches.records(600, 2, System.currentTimeMillis());
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status);
                log.preallocate();
            }
            for (int look = 0; look < 4; look++)
            {
                log.preallocate();
            }
            assertTrue(ahead(log) >= SegmentFile.LOOKAHEAD / 2, ahead(log) + " bytes ahead of a fast writer");
        }
    }

    @Test
    void aPartitionThatHoldsLittleGetsNoMoreAheadThanItHolds() throws IOException
    {
        try (PartitionLog log = open())
        {
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            batches.records(3, 1, System.currentTimeMillis()); // a few hundred bytes, then nothing
            log.preallocate();
            log.append(batches.buffer, 0, batches.length, result);
            assertEquals(AppendResult.OK, result.status);
            for (int look = 0; look < 10; look++)
            {
                log.preallocate();
            }
            final Segment active = log.segments()[0];
            assertTrue(active.size() + ahead(log) <= 4096, ahead(log) + " bytes ahead of " + active.size() + ": more than one page");
        }
    }

    @Test
    void aRollKeepsTheLookaheadAFastWriterReached() throws IOException
    {
        final Map<String, String> small = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, Integer.toString(8 << 20));
        try (PartitionLog log = LogLoader.load("p", 0, dir.resolve("p-0"), LogConfig.of(small), WriteStrategy.MAPPED,
            SystemEpochClock.INSTANCE, LogEnvironment.INLINE, false, 0, 0))
        {
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            while (log.segments().length == 1)
            {
                batches.records(600, 2, System.currentTimeMillis());
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status);
                log.preallocate();
            }
            final Segment fresh = log.segments()[1];
            for (int look = 0; look < 4; look++)
            {
                log.preallocate();
            }
            assertTrue(fresh.log.allocatedAhead(fresh.size()) >= SegmentFile.LOOKAHEAD / 2,
                fresh.log.allocatedAhead(fresh.size()) + " bytes ahead of " + fresh.size() + " in the segment after the roll");
        }
    }
}
