package io.ferrite.log;

import io.ferrite.log.clean.LogCompaction;
import io.ferrite.testing.Await;
import org.agrona.concurrent.AgentInvoker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A clean in progress against what ends it (Kafka's {@code abortAndPauseCleaning} and {@code checkDone}): the
 * partition's deletion, the retention of its log, the log manager's close; and a cleaner that cannot start.
 * The clean is a {@link LogCompaction} of the test's that holds the log (as a real one holds a batch of a
 * mapped segment) until its throttle tells it to stop.
 */
class CleanerAbortTest
{
    private static final Map<String, String> COMPACT = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600", LogConfig.CLEANUP_POLICY, "compact",
        LogConfig.FILE_DELETE_DELAY_MS, "0");

    @TempDir
    Path dir;

    private final Batches batches = new Batches();
    private final AppendResult result = new AppendResult();
    private final MutableClock clock = new MutableClock(1_000_000_000L);

    /** The clean answers its end offset when told to stop, instead of throwing. */
    private volatile boolean finishAtStop;
    private final AtomicReference<io.ferrite.log.clean.CleanerThrottle> throttleOf = new AtomicReference<>();
    private final CountDownLatch holding = new CountDownLatch(1);
    private final AtomicBoolean sawStop = new AtomicBoolean();
    private final AtomicBoolean interruptedAtStop = new AtomicBoolean();
    /** Set when the log was closed (its segments readied for unmapping) while the clean still held it. */
    private final AtomicBoolean closedUnderTheClean = new AtomicBoolean();

    /** Holds the log, calling its throttle as a clean does per batch, until the throttle throws (or the log is closed under it). */
    private final LogCompaction holder = (log, firstDirty, firstUncleanable, deleteRetentionMs, nowMs, stats) ->
    {
        holding.countDown();
        while (true)
        {
            if (log.isClosed())
            {
                closedUnderTheClean.set(true);
                return LogCompaction.ABANDONED;
            }
            if (Thread.currentThread().isInterrupted())
            {
                interruptedAtStop.set(true);
                return LogCompaction.ABANDONED;
            }
            try
            {
                throttleOf.get().maybeThrottle(1);
            }
            catch (final InterruptedException ex)
            {
                interruptedAtStop.set(Thread.currentThread().isInterrupted());
                sawStop.set(true);
                if (finishAtStop)
                {
                    return firstUncleanable; // a clean that ended just as the abort came: it answers where it got
                }
                throw ex;
            }
            Thread.onSpinWait();
        }
    };

    private CleanerConfig cleaner(final boolean enable, final double loadFactor)
    {
        final CleanerConfig d = CleanerConfig.defaults();
        return new CleanerConfig(enable, 1, 1024 * 1024, loadFactor, d.ioBufferSize(), d.maxIoBytesPerSecond(), 10, (map, throttle) ->
        {
            throttleOf.set(throttle);
            return holder;
        });
    }

    private void fill(final PartitionLog log, final int segments, final long timestamp)
    {
        LogCleanerManagerTest.fill(batches, result, log, segments, timestamp);
    }

    /** The test's agent, invoked once on a thread of its own: it cleans the one dirty log until told to stop. */
    private Thread cleanOnAnotherThread(final LogManager logs, final AgentErrors errors)
    {
        final AgentInvoker agent = new AgentInvoker(errors, null, logs.cleaner().newAgent(0, errors));
        agent.start();
        final Thread t = new Thread(agent::invoke, "test-cleaner");
        t.start();
        return t;
    }

    @Test
    void aDeletionAbortsTheCleanOfItsLogAndWaitsForItBeforeItClosesTheLog() throws Exception
    {
        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir).withClock(clock).withCleaner(cleaner(false, 0.9)), true))
        {
            final PartitionLog a = logs.createLog("a", 0, COMPACT);
            fill(a, 4, clock.time());
            final AgentErrors errors = new AgentErrors("test-cleaner");
            final Thread cleanerThread = cleanOnAnotherThread(logs, errors);
            holding.await();

            logs.deleteLog("a", 0); // file.delete.delay.ms=0: the segments are unmapped as soon as the log is closed

            assertTrue(sawStop.get(), "the deletion returned only after the clean saw its abort");
            assertFalse(closedUnderTheClean.get(), "the log was not closed while the clean held it");
            cleanerThread.join();
            assertEquals(0, errors.count(), "an abort is no failure");
            assertFalse(logs.cleaner().manager().isUncleanable(a));
            assertFalse(logs.cleaner().manager().isInProgress(a));
        }
    }

    @Test
    void aCleanThatEndsWhileItsLogIsDeletedLeavesNoCheckpointEntryForTheLogOfTheSameNameMadeAfter() throws Exception
    {
        finishAtStop = true;
        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir).withClock(clock).withCleaner(cleaner(false, 0.9)), true))
        {
            final PartitionLog a = logs.createLog("a", 0, COMPACT);
            final PartitionLog b = logs.createLog("b", 0, COMPACT);
            fill(a, 4, clock.time());
            final AgentErrors errors = new AgentErrors("test-cleaner");
            final Thread cleanerThread = cleanOnAnotherThread(logs, errors);
            holding.await();

            logs.deleteLog("a", 0);
            final PartitionLog again = logs.createLog("a", 0, COMPACT);
            cleanerThread.join();

            assertTrue(sawStop.get());
            assertNull(logs.cleaner().manager().checkpoint(again), "the new log starts without the old one's entry");
            assertEquals(Map.of(), OffsetCheckpoint.read(dir.resolve(CleanerCheckpoints.FILE)), "nor is one on disk");
            assertNull(logs.cleaner().manager().checkpoint(b));
            assertEquals(0, errors.count());
        }
    }

    /** A log manager with a compact,delete log "a" of 4 segments, 2 s past its retention.ms; cleaner threads running or not. */
    private LogManager compactDeleteLog(final boolean threads) throws Exception
    {
        final LogManager logs = LogManager.open(LogManagerConfig.of(dir).withClock(clock).withCleaner(cleaner(true, 0.9)
            .withCompaction((m, t) -> (log, firstDirty, firstUncleanable, deleteRetentionMs, nowMs, stats) -> firstUncleanable)
            .withEnable(threads)), true);
        final PartitionLog a = logs.createLog("a", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600", LogConfig.CLEANUP_POLICY,
            "compact,delete", LogConfig.FILE_DELETE_DELAY_MS, "0", LogConfig.RETENTION_MS, "1000"));
        fill(a, 4, clock.time());
        return logs;
    }

    @Test
    void theRetentionOfACompactedLogRunsOnTheCleanerThreadNeverBesideACleanOfIt() throws Exception
    {
        try (LogManager logs = compactDeleteLog(false))
        {
            final PartitionLog a = logs.log("a", 0);
            final CleanerManager manager = logs.cleaner().manager();
            final CleanerManager.LogToClean cleaning = manager.grabFilthiest(clock.time()); // a clean of a in progress
            assertEquals(a, cleaning.log());
            clock.advance(2000);

            final AgentErrors errors = new AgentErrors("test-cleaner");
            final AgentInvoker agent = new AgentInvoker(errors, null, logs.cleaner().newAgent(0, errors));
            agent.start();
            agent.invoke();
            assertEquals(4, a.segmentCount(), "not while another thread cleans it");
            manager.doneCleaning(cleaning, cleaning.firstDirtyOffset());
            clock.advance(CleanerConfig.DEFAULT_BACKOFF_MS);
            agent.invoke();
            assertEquals(1, a.segmentCount(), "the expired segments went in the cleaner's cycle");
            assertEquals(0, errors.count());
        }
    }

    @Test
    void noRetentionTaskTouchesACompactedLogWhileTheCleanerThreadsRun() throws Exception
    {
        try (LogManager logs = compactDeleteLog(true))
        {
            final PartitionLog a = logs.log("a", 0);
            final PartitionLog d = logs.createLog("d", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600", LogConfig.RETENTION_MS, "1000"));
            fill(d, 4, clock.time());
            final CleanerManager manager = logs.cleaner().manager();
            manager.abortAndPause(a); // the running cleaner thread leaves a alone from now on
            clock.advance(2000);
            logs.runRetention();
            assertEquals(1, d.segmentCount(), "a delete-only log's retention is the task's");
            assertEquals(4, a.segmentCount(), "a compacted log's retention is the cleaner threads'");
            manager.resume(a);
        }
    }

    @Test
    void closeStopsACleanInProgressAtItsNextCheckWithoutAnInterrupt() throws Exception
    {
        final LogManager logs = LogManager.open(LogManagerConfig.of(dir).withCleaner(cleaner(true, 0.9)));
        final PartitionLog a = logs.createLog("a", 0, COMPACT);
        fill(a, 4, System.currentTimeMillis());
        holding.await();
        logs.close();
        assertTrue(sawStop.get(), "the clean saw the stop at its throttle");
        assertFalse(interruptedAtStop.get(), "no interrupt was needed (Agrona interrupts only after " + LogAgents.STOP_WAIT_MS + " ms)");
        assertFalse(closedUnderTheClean.get());
    }

    @Test
    void aCleanerThatCannotMakeItsOffsetMapFailsTheStartNotALog() throws Exception
    {
        final IllegalStateException bad = assertThrows(IllegalStateException.class,
            () -> LogManager.open(LogManagerConfig.of(dir).withCleaner(cleaner(true, 1.5))));
        assertTrue(bad.getMessage().contains("log.cleaner.io.buffer.load.factor=1.5"), bad.getMessage());

        final AtomicReference<io.ferrite.log.clean.OffsetMap> given = new AtomicReference<>();
        assertThrows(IllegalStateException.class, () -> LogManager.open(LogManagerConfig.of(dir).withCleaner(cleaner(true, 0.9)
            .withCompaction((map, throttle) ->
            {
                given.set(map);
                throw new IllegalArgumentException("a compaction that cannot be made");
            }))));
        final IllegalStateException freed = assertThrows(IllegalStateException.class, () -> given.get().clear(),
            "the map made for it was freed");
        assertTrue(freed.getMessage().contains("closed"), freed.getMessage());

        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir).withCleaner(cleaner(true, 0.9)))) // the directory's lock was let go
        {
            assertNull(logs.log("a", 0));
        }
    }

    /**
     * A clean of a compact log in progress (marked so, as a cleaner thread's grab does), then the topic switched to
     * cleanup.policy=delete (which neither aborts nor waits for the clean) with file.delete.delay.ms=0. Neither a
     * DeleteRecords nor the retention task deletes a segment while the clean holds the log: they would be unmapped
     * under it. Once the clean is done, each deletes them. Before, both decided by the current policy and deleted at once.
     */
    @Test
    void aCleanBegunUnderCompactKeepsItsSegmentsFromDeleteRecordsAndRetentionAfterASwitchToDelete() throws Exception
    {
        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir).withClock(clock).withCleaner(cleaner(false, 0.9)), true))
        {
            final PartitionLog a = logs.createLog("a", 0, COMPACT);
            fill(a, 5, clock.time());
            final CleanerManager manager = logs.cleaner().manager();
            final CleanerManager.LogToClean cleaning = manager.grabFilthiest(clock.time());
            assertEquals(a, cleaning.log());
            logs.updateConfig("a", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600", LogConfig.CLEANUP_POLICY, "delete",
                LogConfig.FILE_DELETE_DELAY_MS, "0", LogConfig.RETENTION_MS, "1000"));
            final long thirdBase = a.segments()[2].baseOffset;

            assertEquals(thirdBase, a.deleteRecordsBefore(thirdBase));
            assertEquals(5, a.segmentCount(), "DeleteRecords deletes no segment while a clean holds the log");
            clock.advance(2000); // every segment past retention.ms
            logs.runRetention();
            assertEquals(5, a.segmentCount(), "the retention task skips a log a clean holds");
            assertEquals(thirdBase, a.logStartOffset());

            manager.doneCleaning(cleaning, cleaning.firstDirtyOffset());
            assertEquals(thirdBase + 1, a.deleteRecordsBefore(thirdBase + 1)); // inside the third segment
            assertEquals(3, a.segmentCount(), "the segments below the start go once the clean let go of the log");
            logs.runRetention();
            assertEquals(1, a.segmentCount(), "the expired segments go once the clean let go of the log");
            assertFalse(manager.isInProgress(a));
        }
    }
}
