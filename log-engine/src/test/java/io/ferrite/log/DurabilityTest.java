package io.ferrite.log;

import io.ferrite.testing.Await;
import org.agrona.concurrent.AgentInvoker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Group commit in fsync durability, and Kafka's flush.messages and flush.ms in flush durability. */
class DurabilityTest
{
    @TempDir
    Path dir;

    /**
     * Steps the group committer with an {@link AgentInvoker} instead of running its thread: every
     * append made while no round runs is covered by the next round, one fsync per log.
     */
    @Test
    void oneRoundOfFsyncsCoversEveryAppendThatWaitedForIt() throws Exception
    {
        final Map<String, List<Long>> reported = new ConcurrentHashMap<>();
        final DurabilityListener listener = (log, durable) -> reported.computeIfAbsent(log.toString(), k -> new ArrayList<>())
            .add(durable);
        final List<PartitionLog> logs = new ArrayList<>();
        final GroupCommitter committer = new GroupCommitter("group-commit-test", () -> logs, new AgentErrors("group-commit-test"));
        // the log manager's environment, its background work not started: the test is the committer's thread
        final LogBackgroundWork background = new LogBackgroundWork(LogManagerConfig.of(dir), () -> new PartitionLog[0]);
        final LogEnvironment env = new DirEnvironment(committer, background, listener, LogManagerConfig.DEFAULT_PRODUCER_ID_EXPIRATION_MS,
            new CleanerManager(new Object(), () -> new PartitionLog[0], d -> List.of(), new AgentErrors("unused")),
            () -> { }); // no truncation here: no checkpoint to write
        final List<Throwable> errors = new ArrayList<>();
        try (AgentInvoker invoker = new AgentInvoker(errors::add, null, committer))
        {
            invoker.start();
            for (int p = 0; p < 8; p++)
            {
                logs.add(LogLoader.load("durable", p, dir.resolve("durable-" + p),
                    LogConfig.of(Map.of(LogConfig.DURABILITY, LogConfig.DURABILITY_FSYNC)), WriteStrategy.MAPPED,
                    System::currentTimeMillis, env, false, 0, 0));
            }
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            batches.records(1, 0, System.currentTimeMillis());
            logs.get(0).append(batches.buffer, 0, batches.length, result);
            assertEquals(0, logs.get(0).durableOffset(), "nothing is durable before a round");
            assertEquals(1, invoker.invoke(), "the first round flushes the one log asked for");
            assertEquals(1, logs.get(0).durableOffset());
            for (int i = 0; i < 50; i++)
            {
                for (final PartitionLog log : logs)
                {
                    batches.records(2, i, System.currentTimeMillis());
                    log.append(batches.buffer, 0, batches.length, result);
                    assertEquals(AppendResult.OK, result.status);
                    assertTrue(log.durableOffset() < log.logEndOffset(), "acknowledged only after the fsync");
                }
            }
            // 400 appends on 8 partitions, queued behind the first round: one round covers them all
            assertEquals(8, invoker.invoke(), "each log is flushed once");
            assertEquals(2, committer.rounds());
            for (final PartitionLog log : logs)
            {
                assertEquals(log.logEndOffset(), log.durableOffset(), log + " is durable");
                final List<Long> offsets = reported.get(log.toString());
                assertEquals(log.logEndOffset(), offsets.get(offsets.size() - 1));
                for (int i = 1; i < offsets.size(); i++)
                {
                    assertTrue(offsets.get(i) > offsets.get(i - 1), "durable offsets only grow");
                }
            }
            assertEquals(0, invoker.invoke(), "nothing is asked for: an idle cycle");
            assertEquals(2, committer.rounds());
            assertEquals(List.of(), errors);
        }
        finally
        {
            for (final PartitionLog log : logs)
            {
                log.close();
            }
            background.stopTasks();
            background.stopThreads();
        }
    }

    /**
     * flush.ms by the manager's clock: the scheduler, stepped by the test, asks for the flush on the
     * first step once flush.ms has passed since the log's last flush, and not on the step before.
     */
    @Test
    void flushMessagesAndFlushMsAdvanceTheDurableOffset() throws Exception
    {
        final MutableClock clock = new MutableClock(1_700_000_000_000L);
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock).withFlushCheckIntervalMs(1), true))
        {
            final AgentInvoker scheduler = manager.background().schedulerInvoker();
            final PartitionLog byCount = manager.createLog("count", 0, Map.of(LogConfig.FLUSH_MESSAGES, "10"));
            final PartitionLog byTime = manager.createLog("time", 0, Map.of(LogConfig.FLUSH_MS, "50"));
            final PartitionLog never = manager.createLog("never", 0, Map.of());
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            for (final PartitionLog log : List.of(byCount, byTime, never))
            {
                batches.records(4, 1, clock.time());
                log.append(batches.buffer, 0, batches.length, result);
            }
            assertEquals(0, byCount.durableOffset(), "4 messages: below flush.messages");
            batches.records(6, 2, clock.time());
            byCount.append(batches.buffer, 0, batches.length, result);
            Await.await(() -> byCount.durableOffset() == 10, Duration.ofSeconds(60), "flush.messages=10 reached");

            clock.advance(49);
            scheduler.invoke();
            assertFalse(byTime.flushDue(clock.time()), "flush.ms has not passed");
            clock.advance(1);
            assertTrue(byTime.flushDue(clock.time()), "flush.ms has passed");
            scheduler.invoke();
            Await.await(() -> byTime.durableOffset() == 4, Duration.ofSeconds(60), "the step after flush.ms asked for the flush");
            assertEquals(0, never.durableOffset(), "Kafka's defaults never flush on their own");
        }
    }

    @Test
    void recoveryAfterACleanCloseSkipsTheScan() throws IOException
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("clean", 0, Map.of());
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            batches.records(3, 1, System.currentTimeMillis());
            log.append(batches.buffer, 0, batches.length, result);
        }
        assertTrue(java.nio.file.Files.exists(dir.resolve(LogManager.CLEAN_SHUTDOWN_FILE)));
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            assertEquals(3, manager.log("clean", 0).logEndOffset());
            assertTrue(!java.nio.file.Files.exists(dir.resolve(LogManager.CLEAN_SHUTDOWN_FILE)), "removed while running");
        }
    }
}
