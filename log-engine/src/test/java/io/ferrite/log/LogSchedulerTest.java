package io.ferrite.log;

import io.ferrite.testing.Await;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.AgentRunner;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The log scheduler as an agent stepped by the test ({@link AgentInvoker}) with a clock of the
 * test's: each periodic duty runs on the first step at or after its due time and not on one before,
 * and a duty that fails — an {@code Error} included — is counted and the scheduler goes on.
 */
class LogSchedulerTest
{
    @TempDir
    Path dir;

    @Test
    void retentionRunsOnTheFirstStepAfterTheCheckIntervalAndNotBefore() throws Exception
    {
        final MutableClock clock = new MutableClock(1_700_000_000_000L);
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock).withRetentionCheckIntervalMs(1_000), true))
        {
            final AgentInvoker scheduler = manager.background().schedulerInvoker();
            final PartitionLog log = manager.createLog("aged", 0,
                Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048", LogConfig.RETENTION_MS, "100"));
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            while (log.segmentCount() < 4)
            {
                batches.records(5, log.logEndOffset(), clock.time());
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status);
            }
            log.highWatermark(log.logEndOffset()); // the owner's: nothing above it is deleted
            final long activeBase = log.segments()[log.segmentCount() - 1].baseOffset;

            clock.advance(999); // every sealed segment is past retention.ms, but the check is not due
            scheduler.invoke();
            assertEquals(4, log.segmentCount(), "retention did not run before its interval");
            assertEquals(0, log.logStartOffset());

            clock.advance(1);
            scheduler.invoke();
            assertEquals(1, log.segmentCount(), "the step at the interval deleted every expired sealed segment");
            assertEquals(activeBase, log.logStartOffset());
        }
    }

    @Test
    void aCheckpointIsWrittenOnTheFirstStepAfterItsIntervalAndNotBefore() throws Exception
    {
        final MutableClock clock = new MutableClock(1_700_000_000_000L);
        final LogManagerConfig config = LogManagerConfig.of(dir).withClock(clock);
        try (LogManager manager = LogManager.open(config, true))
        {
            final AgentInvoker scheduler = manager.background().schedulerInvoker();
            final PartitionLog log = manager.createLog("points", 0, Map.of());
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            batches.records(3, 0, clock.time());
            log.append(batches.buffer, 0, batches.length, result);
            log.flush();
            assertEquals(3, log.recoveryPoint());
            final Path points = dir.toAbsolutePath().normalize().resolve(OffsetCheckpoint.RECOVERY_POINTS);

            clock.advance(config.checkpointIntervalMs() - 1);
            scheduler.invoke();
            assertNull(OffsetCheckpoint.read(points).get("points-0"), "no checkpoint before the interval");

            clock.advance(1);
            scheduler.invoke();
            assertEquals(3L, OffsetCheckpoint.read(points).get("points-0"), "the step at the interval wrote the checkpoint");
        }
    }

    /** A step of the wall clock back (NTP, an admin) must not hold retention back by the size of the step. */
    @Test
    void aWallClockStepBackDoesNotHoldRetentionBack() throws Exception
    {
        final MutableClock wall = new MutableClock(1_700_000_000_000L);
        final MutableClock monotonic = new MutableClock(0);
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withClocks(wall, () -> monotonic.time() * 1_000_000L)
            .withRetentionCheckIntervalMs(1_000), true))
        {
            final AgentInvoker scheduler = manager.background().schedulerInvoker();
            final PartitionLog log = manager.createLog("aged", 0,
                Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048", LogConfig.RETENTION_MS, "100"));
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            while (log.segmentCount() < 4)
            {
                batches.records(5, log.logEndOffset(), wall.time() - 7_200_000);
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status);
            }
            log.highWatermark(log.logEndOffset());
            wall.advance(-3_600_000);
            monotonic.advance(1_000);
            scheduler.invoke();
            assertEquals(1, log.segmentCount(), "retention ran on its interval, whatever the wall clock did");
        }
    }

    /** A writer's roll for retention asks for a pass at the next cycle; the periodic pass stays due when it was. */
    @Test
    void aPassAskedForRunsAtTheNextCycleAndLeavesThePeriodicOneWhereItWas()
    {
        final MutableClock clock = new MutableClock(0);
        final LogManagerConfig config = LogManagerConfig.of(dir).withClock(clock).withRetentionCheckIntervalMs(1_000);
        final AtomicInteger retentions = new AtomicInteger();
        final AgentErrors errors = new AgentErrors("scheduler-test");
        final LogScheduler agent = new LogScheduler(config, () -> new PartitionLog[0], () -> { }, retentions::incrementAndGet,
            log -> { }, errors);
        try (AgentInvoker invoker = new AgentInvoker(errors, null, agent))
        {
            invoker.start();
            clock.advance(600);
            invoker.invoke();
            assertEquals(0, retentions.get(), "not due yet");
            agent.retentionSoon();
            invoker.invoke();
            assertEquals(1, retentions.get(), "the pass asked for, at once");
            invoker.invoke();
            assertEquals(1, retentions.get(), "once");
            clock.advance(400);
            invoker.invoke();
            assertEquals(2, retentions.get(), "the periodic pass at its time, 1 000 ms after the start");
        }
    }

    @Test
    void aDutyThatThrowsAnErrorIsCountedOnceLoggedAndTheSchedulerGoesOn()
    {
        final MutableClock clock = new MutableClock(0);
        final LogManagerConfig config = LogManagerConfig.of(dir).withClock(clock);
        final AtomicInteger checkpoints = new AtomicInteger();
        final AtomicInteger retentions = new AtomicInteger();
        final AgentErrors errors = new AgentErrors("scheduler-test");
        final LogScheduler agent = new LogScheduler(config, () -> new PartitionLog[0], () ->
        {
            checkpoints.incrementAndGet();
            throw new InternalError("a fault occurred in an unsafe memory access operation"); // a SIGBUS on a mapping
        }, retentions::incrementAndGet, log -> { }, errors);
        try (AgentInvoker invoker = new AgentInvoker(errors, null, agent))
        {
            invoker.start();
            for (int cycle = 1; cycle <= 2; cycle++)
            {
                clock.advance(config.retentionCheckIntervalMs()); // both due: the checkpoint's interval is shorter
                invoker.invoke();
                assertTrue(invoker.isRunning(), "the scheduler goes on after the Error");
                assertEquals(cycle, checkpoints.get());
                assertEquals(cycle, retentions.get(), "retention ran in the same cycle as the failed checkpoint");
            }
            assertEquals(2, errors.count(), "every failure is counted");
            assertEquals(1, errors.distinct(), "the same failure is one distinct error, logged once");
        }
    }

    /** On its {@code AgentRunner}, where Agrona would end the thread on an Error escaping a duty cycle. */
    @Test
    void onItsRunnerTheSchedulerOutlivesAnError()
    {
        final LogManagerConfig config = LogManagerConfig.of(dir).withRetentionCheckIntervalMs(1);
        final AtomicInteger retentions = new AtomicInteger();
        final AgentErrors errors = new AgentErrors("scheduler-test");
        final LogScheduler agent = new LogScheduler(config, () -> new PartitionLog[0], () -> { }, () ->
        {
            if (retentions.incrementAndGet() == 1)
            {
                throw new InternalError("a fault occurred in an unsafe memory access operation");
            }
        }, log -> { }, errors);
        final AgentRunner runner = LogAgents.start(agent, errors, agent.idleStrategy());
        final Thread thread;
        try
        {
            Await.await(() -> retentions.get() >= 3, Duration.ofSeconds(10), () -> "retention ran " + retentions + " times");
            assertEquals(1, errors.count());
            thread = runner.thread();
            assertTrue(thread.isAlive(), "the scheduler's thread goes on");
        }
        finally
        {
            LogAgents.stop(runner);
        }
        assertFalse(thread.isAlive(), "a stop ends it");
    }
}
