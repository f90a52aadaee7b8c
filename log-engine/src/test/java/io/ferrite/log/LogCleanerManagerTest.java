package io.ferrite.log;

import io.ferrite.log.clean.LogCompaction;
import org.agrona.concurrent.AgentInvoker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The cleaner threads around one clean (Kafka's LogCleaner / LogCleanerManager), over real partition
 * logs, with a recording {@link LogCompaction} written here (the clean itself is another class's): which
 * log is chosen and over which offsets, the {@code cleaner-offset-checkpoint}, backoff, failures, deletion.
 * The agent is stepped on the test's thread with a clock of the test's.
 */
class LogCleanerManagerTest
{
    private static final Map<String, String> COMPACT = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600", LogConfig.CLEANUP_POLICY, "compact");
    private static final long HOUR = 3_600_000L;

    @TempDir
    Path dir;

    private final Batches batches = new Batches();
    private final AppendResult result = new AppendResult();
    private final MutableClock clock = new MutableClock(1_000L * HOUR);
    private final List<String> calls = new ArrayList<>();
    /** What the recording compaction answers for a log (default: everything it was given is clean now). */
    private ToLongFunction<long[]> answer = range -> range[1];

    private final LogCompaction recording = (log, firstDirty, firstUncleanable, deleteRetentionMs, nowMs, stats) ->
    {
        calls.add(log.topic() + " [" + firstDirty + ", " + firstUncleanable + ") " + deleteRetentionMs);
        return answer.applyAsLong(new long[] {firstDirty, firstUncleanable});
    };

    /** The test's clock, and no cleaner thread of the log manager's: the tests step their own agent. */
    private LogManagerConfig config()
    {
        return LogManagerConfig.of(dir).withClock(clock).withCleaner(cleaner(false, CleanerConfig.DEFAULT_BACKOFF_MS));
    }

    private void fill(final PartitionLog log, final int segments, final long timestamp)
    {
        fill(batches, result, log, segments, timestamp);
    }

    /** Appends batches of 3 records at {@code timestamp} until the log has {@code segments} segments; all of it under the high watermark. */
    static void fill(final Batches batches, final AppendResult result, final PartitionLog log, final int segments, final long timestamp)
    {
        while (log.segmentCount() < segments)
        {
            batches.records(3, log.logEndOffset(), timestamp);
            log.append(batches.buffer, 0, batches.length, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
        }
        log.highWatermark(log.logEndOffset());
    }

    private static long activeBase(final PartitionLog log)
    {
        final Segment[] segs = log.segments();
        return segs[segs.length - 1].baseOffset;
    }

    @Test
    void theDirtiestCompactedLogFirstNeverADeleteOnlyOneNeverTwiceAndBackoffWhenNoneIsDirty() throws Exception
    {
        try (LogManager logs = LogManager.open(config(), true))
        {
            final PartitionLog a = logs.createLog("a", 0, COMPACT);
            final PartitionLog b = logs.createLog("b", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600", LogConfig.CLEANUP_POLICY, "compact,delete",
                LogConfig.DELETE_RETENTION_MS, "1234"));
            final PartitionLog c = logs.createLog("c", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600"));
            fill(a, 4, clock.time());
            fill(b, 6, clock.time());
            fill(c, 8, clock.time());
            final CleanerManager manager = logs.cleaner().manager();

            final CleanerManager.LogToClean first = manager.grabFilthiest(clock.time());
            final CleanerManager.LogToClean second = manager.grabFilthiest(clock.time());
            assertNotNull(first);
            assertNotNull(second);
            assertTrue(first.log() != second.log(), "a log being cleaned is not chosen again");
            assertNull(manager.grabFilthiest(clock.time()), "the delete-only log is never chosen");
            manager.doneCleaning(first, first.firstDirtyOffset()); // nothing cleaned: nothing recorded
            manager.doneCleaning(second, second.firstDirtyOffset());
            assertNull(manager.checkpoint(a));

            final AgentErrors errors = new AgentErrors("test-cleaner");
            final AgentInvoker cleaner = new AgentInvoker(errors, null, logs.cleaner().newAgent(0, errors));
            cleaner.start();
            assertEquals(1, cleaner.invoke());
            assertEquals(1, cleaner.invoke());
            assertEquals(List.of("a [0, " + activeBase(a) + ") 86400000", "b [0, " + activeBase(b) + ") 1234").stream().sorted().toList(),
                calls.stream().sorted().toList(), "both compacted logs, each over [log start, active segment)");
            assertEquals(activeBase(a), manager.checkpoint(a));
            assertEquals(Map.of("a-0", activeBase(a), "b-0", activeBase(b)),
                OffsetCheckpoint.read(dir.resolve(CleanerCheckpoints.FILE)), "Kafka's cleaner-offset-checkpoint");

            assertEquals(0, cleaner.invoke(), "nothing dirty");
            final long cleanBase = activeBase(a);
            fill(a, 5, clock.time()); // one more segment: 1 of 4 inactive segments dirty, below the 0.5 ratio
            clock.advance(CleanerConfig.DEFAULT_BACKOFF_MS);
            assertEquals(0, cleaner.invoke(), "below its min.cleanable.dirty.ratio");
            logs.updateConfig("a", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600", LogConfig.CLEANUP_POLICY, "compact",
                LogConfig.MIN_CLEANABLE_DIRTY_RATIO, "0.1"));
            clock.advance(CleanerConfig.DEFAULT_BACKOFF_MS - 1);
            assertEquals(0, cleaner.invoke(), "backing off for log.cleaner.backoff.ms");
            assertEquals(2, calls.size());
            clock.advance(1);
            assertEquals(1, cleaner.invoke(), "dirty enough for its new min.cleanable.dirty.ratio");
            assertEquals("a [" + cleanBase + ", " + activeBase(a) + ") 86400000", calls.get(2), "from the checkpoint on");
            assertEquals(0, errors.count());
        }
    }

    @Test
    void theLogWithTheLargestShareOfDirtyBytesIsChosenFirst() throws Exception
    {
        try (LogManager logs = LogManager.open(config(), true))
        {
            final Map<String, String> lowRatio = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600", LogConfig.CLEANUP_POLICY, "compact",
                LogConfig.MIN_CLEANABLE_DIRTY_RATIO, "0.1");
            final PartitionLog half = logs.createLog("half", 0, lowRatio);
            final PartitionLog all = logs.createLog("all", 0, lowRatio);
            fill(half, 5, clock.time());
            final CleanerManager manager = logs.cleaner().manager();
            final CleanerManager.LogToClean first = manager.grabFilthiest(clock.time());
            assertEquals(half, first.log(), "the only log with data");
            manager.doneCleaning(first, half.segments()[2].baseOffset); // clean up to half of its 4 inactive segments
            fill(all, 5, clock.time());

            final CleanerManager.LogToClean dirtiest = manager.grabFilthiest(clock.time());
            final CleanerManager.LogToClean next = manager.grabFilthiest(clock.time());
            assertEquals(all, dirtiest.log(), "all of its inactive bytes are dirty");
            assertEquals(1.0, dirtiest.cleanableRatio());
            assertEquals(half, next.log());
            assertTrue(next.cleanableRatio() < 1.0 && next.cleanableRatio() > 0.1, "half dirty: " + next.cleanableRatio());
            manager.doneCleaning(dirtiest, dirtiest.firstDirtyOffset());
            manager.doneCleaning(next, next.firstDirtyOffset());

            logs.updateConfig("half", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600", LogConfig.CLEANUP_POLICY, "compact",
                LogConfig.MIN_CLEANABLE_DIRTY_RATIO, "0.9"));
            assertEquals(all, manager.grabFilthiest(clock.time()).log());
            assertNull(manager.grabFilthiest(clock.time()), "half is at or below its ratio and needs no compaction now");
        }
    }

    @Test
    void aResetCheckpointThatCannotBeWrittenLeavesTheLogCleanableFromItsStart() throws Exception
    {
        try (LogManager logs = LogManager.open(config(), true))
        {
            final PartitionLog a = logs.createLog("a", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600", LogConfig.CLEANUP_POLICY, "compact",
                LogConfig.MIN_CLEANABLE_DIRTY_RATIO, "0.01"));
            fill(a, 5, clock.time());
            final CleanerManager manager = logs.cleaner().manager();
            final CleanerManager.LogToClean ltc = manager.grabFilthiest(clock.time());
            final long cleanTo = a.segments()[2].baseOffset;
            manager.doneCleaning(ltc, cleanTo);
            final Path file = dir.resolve(CleanerCheckpoints.FILE);
            java.nio.file.Files.delete(file);
            java.nio.file.Files.createDirectories(file.resolve("in-the-way")); // the file cannot be replaced now

            a.deleteRecordsBefore(cleanTo + 1);
            final CleanerManager.LogToClean after = manager.grabFilthiest(clock.time());
            assertNotNull(after, "still chosen");
            assertEquals(cleanTo + 1, after.firstDirtyOffset(), "from its new log start");
            assertFalse(manager.isUncleanable(a));
            manager.doneCleaning(after, after.firstDirtyOffset());
        }
    }

    @Test
    void theBackoffRunsOnTheMonotonicClockNotTheWallClock() throws Exception
    {
        final long[] nanos = {0};
        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir).withClocks(clock, () -> nanos[0])
            .withCleaner(cleaner(false, CleanerConfig.DEFAULT_BACKOFF_MS)), true))
        {
            final AgentErrors errors = new AgentErrors("test-cleaner");
            final AgentInvoker cleaner = new AgentInvoker(errors, null, logs.cleaner().newAgent(0, errors));
            cleaner.start();
            assertEquals(0, cleaner.invoke(), "nothing to clean: backs off");
            final PartitionLog a = logs.createLog("a", 0, COMPACT);
            fill(a, 4, clock.time());
            clock.advance(-HOUR); // the wall clock steps back
            nanos[0] += java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(CleanerConfig.DEFAULT_BACKOFF_MS - 1);
            assertEquals(0, cleaner.invoke(), "still backing off");
            nanos[0] += java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(1);
            assertEquals(1, cleaner.invoke(), "the backoff is over by the monotonic clock");
            assertEquals(1, calls.size());
        }
    }

    @Test
    void theFirstUncleanableOffsetIsTheHighWatermarkTheActiveSegmentOrTheFirstSegmentYoungerThanTheMinLag() throws Exception
    {
        try (LogManager logs = LogManager.open(config(), true))
        {
            final PartitionLog a = logs.createLog("a", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600", LogConfig.CLEANUP_POLICY, "compact",
                LogConfig.MIN_COMPACTION_LAG_MS, Long.toString(HOUR)));
            fill(a, 3, clock.time() - 2 * HOUR);
            final long firstYoung = a.logEndOffset();
            fill(a, 6, clock.time());
            long young = -1;
            for (final Segment s : a.segments())
            {
                young = s.baseOffset <= firstYoung ? s.baseOffset : young;
            }
            final CleanerManager manager = logs.cleaner().manager();
            CleanerManager.LogToClean ltc = manager.grabFilthiest(clock.time());
            assertEquals(young, ltc.firstUncleanableOffset(), "the first segment with a record younger than min.compaction.lag.ms");
            manager.doneCleaning(ltc, ltc.firstDirtyOffset());

            clock.advance(2 * HOUR);
            a.highWatermark(young - 1);
            ltc = manager.grabFilthiest(clock.time());
            assertEquals(young - 1, ltc.firstUncleanableOffset(), "not beyond the high watermark (the last stable offset)");
            manager.doneCleaning(ltc, ltc.firstDirtyOffset());

            a.highWatermark(a.logEndOffset());
            ltc = manager.grabFilthiest(clock.time());
            assertEquals(activeBase(a), ltc.firstUncleanableOffset(), "never the active segment");
            manager.doneCleaning(ltc, ltc.firstDirtyOffset());
        }
    }

    @Test
    void maxCompactionLagCleansALogBelowItsDirtyRatio() throws Exception
    {
        try (LogManager logs = LogManager.open(config(), true))
        {
            final Map<String, String> never = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600", LogConfig.CLEANUP_POLICY, "compact",
                LogConfig.MIN_CLEANABLE_DIRTY_RATIO, "1", LogConfig.MAX_COMPACTION_LAG_MS, Long.toString(3 * HOUR));
            final PartitionLog a = logs.createLog("a", 0, never);
            fill(a, 4, clock.time() - 2 * HOUR);
            final CleanerManager manager = logs.cleaner().manager();
            assertNull(manager.grabFilthiest(clock.time()), "a ratio of 1 is never exceeded, and the lag has not passed");
            clock.advance(2 * HOUR);
            final CleanerManager.LogToClean ltc = manager.grabFilthiest(clock.time());
            assertNotNull(ltc, "max.compaction.lag.ms passed");
            assertTrue(ltc.needCompactionNow());
        }
    }

    @Test
    void theCheckpointIsReadAtOpenResetToTheLogStartAndDroppedWithItsPartition() throws Exception
    {
        final long cleanTo;
        try (LogManager logs = LogManager.open(config(), true))
        {
            final PartitionLog a = logs.createLog("a", 0, COMPACT);
            fill(a, 5, clock.time());
            final AgentErrors errors = new AgentErrors("test-cleaner");
            final AgentInvoker cleaner = new AgentInvoker(errors, null, logs.cleaner().newAgent(0, errors));
            cleaner.start();
            answer = range -> range[1] - 2; // the map filled up before the end
            assertEquals(1, cleaner.invoke());
            cleanTo = activeBase(a) - 2;
        }
        try (LogManager logs = LogManager.open(config(), true))
        {
            final PartitionLog a = logs.log("a", 0);
            logs.updateConfig("a", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600", LogConfig.CLEANUP_POLICY, "compact",
                LogConfig.MIN_CLEANABLE_DIRTY_RATIO, "0"));
            final CleanerManager manager = logs.cleaner().manager();
            assertEquals(cleanTo, manager.checkpoint(a), "read at open");
            final CleanerManager.LogToClean ltc = manager.grabFilthiest(clock.time());
            assertEquals(cleanTo, ltc.firstDirtyOffset(), "the next clean starts at the checkpoint");
            manager.doneCleaning(ltc, ltc.firstDirtyOffset());

            a.deleteRecordsBefore(cleanTo + 1);
            final CleanerManager.LogToClean after = manager.grabFilthiest(clock.time());
            if (after != null)
            {
                manager.doneCleaning(after, after.firstDirtyOffset());
            }
            assertEquals(cleanTo + 1, manager.checkpoint(a), "reset to the log start that moved past it");
            assertEquals(Map.of("a-0", cleanTo + 1), OffsetCheckpoint.read(dir.resolve(CleanerCheckpoints.FILE)));

            logs.deleteLog("a", 0);
            assertEquals(Map.of(), OffsetCheckpoint.read(dir.resolve(CleanerCheckpoints.FILE)), "the deleted partition's entry goes");
            final PartitionLog again = logs.createLog("a", 0, COMPACT);
            assertNull(manager.checkpoint(again), "a new log of the name starts with no checkpoint");
        }
    }

    @Test
    void aFailedCleanMarksItsLogUncleanableAndTheOthersGoOnAndAnAbandonedOneRecordsNothing() throws Exception
    {
        try (LogManager logs = LogManager.open(config(), true))
        {
            final PartitionLog a = logs.createLog("a", 0, COMPACT);
            final PartitionLog b = logs.createLog("b", 0, COMPACT);
            fill(a, 4, clock.time());
            fill(b, 4, clock.time());
            answer = range -> calls.size() == 1 ? throwing() : LogCompaction.ABANDONED;
            final AgentErrors errors = new AgentErrors("test-cleaner");
            final AgentInvoker cleaner = new AgentInvoker(errors, null, logs.cleaner().newAgent(0, errors));
            cleaner.start();
            final CleanerManager manager = logs.cleaner().manager();

            assertEquals(0, cleaner.invoke(), "the clean failed");
            assertEquals(1, errors.count(), "reported to the agent's error handler");
            final PartitionLog failed = manager.isUncleanable(a) ? a : b;
            final PartitionLog other = failed == a ? b : a;
            assertTrue(manager.isUncleanable(failed));
            clock.advance(CleanerConfig.DEFAULT_BACKOFF_MS);
            assertEquals(1, cleaner.invoke(), "the other log is cleaned");
            assertTrue(calls.get(1).startsWith(other.topic() + " "), calls.toString());
            assertNull(manager.checkpoint(other), "abandoned: nothing recorded");
            assertFalse(manager.isUncleanable(other));

            logs.deleteLog(failed.topic(), 0);
            manager.maintainUncleanable();
            assertFalse(manager.isUncleanable(failed), "forgotten with its partition");
        }
    }

    private static long throwing()
    {
        throw new IllegalStateException("a clean that fails");
    }

    @Test
    void aBrokerCleansOnItsOwnThreadsAndNoneRunWhenTheCleanerIsDisabled() throws Exception
    {
        final List<Thread> threads;
        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir).withCleaner(cleaner(true, 10))))
        {
            final PartitionLog a = logs.createLog("a", 0, COMPACT);
            fill(a, 4, clock.time());
            io.ferrite.testing.Await.await(() -> logs.cleaner().manager().checkpoint(a) != null, java.time.Duration.ofSeconds(30),
                "the cleaner thread cleaned a");
            threads = logs.cleaner().threads();
            assertEquals(1, threads.size());
            assertEquals("ferrite-log-cleaner-0", threads.get(0).getName());
            assertTrue(threads.get(0) != Thread.currentThread() && threads.get(0).isAlive(), "its own thread");
        }
        assertFalse(threads.get(0).isAlive(), "stopped with the log manager");
        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir.resolve("off")).withCleaner(cleaner(false, 10))))
        {
            assertEquals(List.of(), logs.cleaner().threads(), "log.cleaner.enable=false");
        }
    }

    private CleanerConfig cleaner(final boolean enable, final long backoffMs)
    {
        final CleanerConfig d = CleanerConfig.defaults();
        return new CleanerConfig(enable, 1, 1024 * 1024, d.dedupeBufferLoadFactor(), d.ioBufferSize(), d.maxIoBytesPerSecond(), backoffMs,
            (m, t) -> recording);
    }

    @Test
    void aCompactedLogsActiveSegmentRollsAtItsMaxCompactionLag() throws Exception
    {
        try (LogManager logs = LogManager.open(config(), true))
        {
            final PartitionLog compacted = logs.createLog("a", 0, Map.of(LogConfig.CLEANUP_POLICY, "compact", LogConfig.MAX_COMPACTION_LAG_MS, "60000"));
            final PartitionLog deleted = logs.createLog("d", 0, Map.of(LogConfig.MAX_COMPACTION_LAG_MS, "60000"));
            for (final PartitionLog log : new PartitionLog[] {compacted, deleted})
            {
                for (final long timestamp : new long[] {clock.time(), clock.time() + 61_000})
                {
                    batches.records(3, log.logEndOffset(), timestamp);
                    log.append(batches.buffer, 0, batches.length, result);
                    assertEquals(AppendResult.OK, result.status, result.toString());
                }
            }
            assertEquals(2, compacted.segmentCount(), "rolled: the cleaner never cleans the active segment, so it rolls at the lag");
            assertEquals(1, deleted.segmentCount(), "a delete-only log rolls at segment.ms only");
        }
    }

    @Test
    void theThrottleSleepsAsKafkasThrottlerDoes() throws InterruptedException
    {
        final long[] nanos = {0};
        final List<Long> sleeps = new ArrayList<>();
        final CleanerThrottler throttle = new CleanerThrottler(1000.0, () -> nanos[0], ms ->
        {
            sleeps.add(ms);
            nanos[0] += ms * 1_000_000L;
        });
        throttle.maybeThrottle(500);
        nanos[0] += 200_000_000L; // within the 300 ms check interval: no check
        throttle.maybeThrottle(500);
        assertEquals(List.of(), sleeps);
        nanos[0] += 200_000_000L; // 400 ms, 1500 bytes at 1000 B/s: 1100 ms more
        throttle.maybeThrottle(500);
        assertEquals(List.of(1100L), sleeps);
        nanos[0] += 400_000_000L; // a new period: 100 bytes in 400 ms is within the budget
        throttle.maybeThrottle(100);
        assertEquals(List.of(1100L), sleeps);
        assertTrue(CleanerThrottler.of(Double.MAX_VALUE, () -> 0) == io.ferrite.log.clean.CleanerThrottle.NONE, "Kafka's default: none");
    }
}
