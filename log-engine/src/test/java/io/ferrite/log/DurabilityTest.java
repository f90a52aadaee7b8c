package io.ferrite.log;

import io.ferrite.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Group commit in fsync durability, and Kafka's flush.messages and flush.ms in flush durability. */
class DurabilityTest
{
    @TempDir
    Path dir;

    @Test
    void oneRoundOfFsyncsCoversEveryAppendThatWaitedForIt() throws Exception
    {
        final CountDownLatch firstRound = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final Map<String, List<Long>> reported = new ConcurrentHashMap<>();
        final DurabilityListener listener = (log, durable) ->
        {
            reported.computeIfAbsent(log.toString(), k -> new ArrayList<>()).add(durable);
            firstRound.countDown();
            await(release); // hold the committer inside its first round while everything else queues up
        };
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withDurabilityListener(listener)))
        {
            final List<PartitionLog> logs = new ArrayList<>();
            for (int p = 0; p < 8; p++)
            {
                logs.add(manager.createLog("durable", p, Map.of(LogConfig.DURABILITY, LogConfig.DURABILITY_FSYNC)));
            }
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            batches.records(1, 0, System.currentTimeMillis());
            logs.get(0).append(batches.buffer, 0, batches.length, result);
            assertTrue(firstRound.await(10, TimeUnit.SECONDS));
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
            release.countDown();
            for (final PartitionLog log : logs)
            {
                assertTrue(log.awaitDurable(log.logEndOffset(), 10_000), log + " becomes durable");
                final List<Long> offsets = reported.get(log.toString());
                assertEquals(log.logEndOffset(), offsets.get(offsets.size() - 1));
                for (int i = 1; i < offsets.size(); i++)
                {
                    assertTrue(offsets.get(i) > offsets.get(i - 1), "durable offsets only grow");
                }
            }
            // 401 appends on 8 partitions: the first round, then one round for everything queued behind it
            Await.await(() -> manager.groupCommitRounds() >= 2, Duration.ofSeconds(10), "the second round ends");
            assertEquals(2, manager.groupCommitRounds());
        }
    }

    @Test
    void flushMessagesAndFlushMsAdvanceTheDurableOffset() throws Exception
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withFlushCheckIntervalMs(10)))
        {
            final PartitionLog byCount = manager.createLog("count", 0, Map.of(LogConfig.FLUSH_MESSAGES, "10"));
            final PartitionLog byTime = manager.createLog("time", 0, Map.of(LogConfig.FLUSH_MS, "50"));
            final PartitionLog never = manager.createLog("never", 0, Map.of());
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            for (final PartitionLog log : List.of(byCount, byTime, never))
            {
                batches.records(4, 1, System.currentTimeMillis());
                log.append(batches.buffer, 0, batches.length, result);
            }
            assertEquals(0, byCount.durableOffset(), "4 messages: below flush.messages");
            batches.records(6, 2, System.currentTimeMillis());
            byCount.append(batches.buffer, 0, batches.length, result);
            Await.await(() -> byCount.durableOffset() == 10, Duration.ofSeconds(10), "flush.messages=10 reached");
            Await.await(() -> byTime.durableOffset() == 4, Duration.ofSeconds(10), "flush.ms=50 passed");
            assertEquals(0, never.durableOffset(), "Kafka's defaults never flush on their own");
        }
    }

    private static void await(final CountDownLatch latch)
    {
        try
        {
            latch.await(10, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
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
