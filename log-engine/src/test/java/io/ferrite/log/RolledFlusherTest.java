package io.ferrite.log;

import org.agrona.concurrent.AgentInvoker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The rolled-segment flusher stepped by the test ({@link AgentInvoker}) instead of running its
 * thread: a roll only queues its log; the next cycle flushes the sealed segments of each log queued,
 * once per log however often it rolled meanwhile, and moves its recovery point to the active base.
 */
class RolledFlusherTest
{
    @TempDir
    Path dir;

    @Test
    void aCycleFlushesEachRolledLogOnceAndMovesItsRecoveryPointToTheActiveBase() throws Exception
    {
        final List<String> flushed = new ArrayList<>();
        final DurabilityListener listener = (log, durable) -> flushed.add(log.topic());
        final LogManagerConfig config = LogManagerConfig.of(dir);
        // the manager's background work, not started: the test is the flusher's thread
        final LogBackgroundWork background = new LogBackgroundWork(config, () -> new PartitionLog[0]);
        final LogEnvironment env = new DirEnvironment(new GroupCommitter("unused", List::of, new AgentErrors("unused")), background,
            listener, LogManagerConfig.DEFAULT_PRODUCER_ID_EXPIRATION_MS,
            new CleanerManager(new Object(), () -> new PartitionLog[0], d -> List.of(), new AgentErrors("unused")),
            () -> { }); // no truncation here: no checkpoint to write
        final List<PartitionLog> logs = new ArrayList<>();
        final AgentErrors errors = new AgentErrors("rolled-flusher-test");
        try (AgentInvoker flusher = new AgentInvoker(errors, null, background.rolledFlusher()))
        {
            flusher.start();
            for (final String topic : List.of("twice", "once"))
            {
                logs.add(LogLoader.load(topic, 0, dir.resolve(topic + "-0"), LogConfig.of(Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048")),
                    WriteStrategy.MAPPED, System::currentTimeMillis, env, false, 0, 0));
            }
            final PartitionLog twice = logs.get(0);
            final PartitionLog once = logs.get(1);
            append(twice, 3);
            append(once, 2);
            assertEquals(0, twice.recoveryPoint(), "a roll only queues its flush");
            assertEquals(0, once.recoveryPoint());

            assertEquals(2, flusher.invoke(), "one cycle flushes both logs, the one that rolled twice once");
            assertEquals(List.of("twice", "once"), flushed);
            assertEquals(activeBase(twice), twice.recoveryPoint());
            assertEquals(activeBase(once), once.recoveryPoint());
            assertEquals(0, flusher.invoke(), "nothing queued: an idle cycle");
            assertEquals(0, errors.count());
        }
        finally
        {
            for (final PartitionLog log : logs)
            {
                log.close();
            }
        }
    }

    private static void append(final PartitionLog log, final int segments)
    {
        final Batches batches = new Batches();
        final AppendResult result = new AppendResult();
        while (log.segmentCount() < segments)
        {
            batches.records(5, log.logEndOffset(), System.currentTimeMillis());
            log.append(batches.buffer, 0, batches.length, result);
            assertEquals(AppendResult.OK, result.status);
        }
    }

    private static long activeBase(final PartitionLog log)
    {
        return log.segments()[log.segmentCount() - 1].baseOffset;
    }
}
