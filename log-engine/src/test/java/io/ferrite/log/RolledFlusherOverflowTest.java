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
 * A roll whose flush request met the rolled-segment flusher's queue full is not lost: the flusher's
 * next cycle flushes every log (its overflow flag), so the sealed segment still reaches the disk and
 * the recovery point moves past it. Without the flag every other test stays green.
 */
class RolledFlusherOverflowTest
{
    @TempDir
    Path dir;

    @Test
    void aRollWhoseRequestFoundTheQueueFullIsStillFlushed() throws Exception
    {
        final List<PartitionLog> logs = new ArrayList<>();
        final LogManagerConfig config = LogManagerConfig.of(dir);
        final LogBackgroundWork background = new LogBackgroundWork(config, () -> logs.toArray(new PartitionLog[0]));
        final LogEnvironment env = new DirEnvironment(new GroupCommitter("unused", List::of, new AgentErrors("unused")), background,
            DurabilityListener.NONE, LogManagerConfig.DEFAULT_PRODUCER_ID_EXPIRATION_MS,
            new CleanerManager(new Object(), () -> new PartitionLog[0], d -> List.of(), new AgentErrors("unused")),
            () -> { }); // no truncation here: no checkpoint to write
        try (AgentInvoker flusher = new AgentInvoker(new AgentErrors("test"), null, background.rolledFlusher()))
        {
            flusher.start();
            for (final String topic : List.of("noisy", "late"))
            {
                logs.add(LogLoader.load(topic, 0, dir.resolve(topic + "-0"), LogConfig.of(Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048")),
                    WriteStrategy.MAPPED, System::currentTimeMillis, env, false, 0, 0));
            }
            for (int i = 0; i < 1024; i++)
            {
                background.rolledFlusher().request(logs.get(0));
            }
            final PartitionLog late = logs.get(1);
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            while (late.segmentCount() < 3)
            {
                batches.records(5, late.logEndOffset(), System.currentTimeMillis());
                late.append(batches.buffer, 0, batches.length, result);
            }
            assertEquals(0, late.recoveryPoint());
            flusher.invoke();
            assertEquals(late.segments()[late.segmentCount() - 1].baseOffset, late.recoveryPoint(), "the overflowed roll was flushed");
            while (flusher.invoke() > 0)
            {
                // the full queue's requests drain, a cycle at a time
            }
        }
        finally
        {
            for (final PartitionLog log : logs)
            {
                log.close();
            }
        }
    }
}
