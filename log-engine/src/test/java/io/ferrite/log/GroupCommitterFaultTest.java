package io.ferrite.log;

import io.ferrite.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The group committer is every fsync-durability answer's way out: Agrona's AgentRunner ends its
 * thread on an Error that reaches it, and ends its run on an interrupt; neither may stop group commit
 * (every later fsync-durability answer would wait for ever).
 */
class GroupCommitterFaultTest
{
    @TempDir
    Path dir;

    @Test
    void anErrorOnTheCommitterThreadStopsNotGroupCommit() throws Exception
    {
        final AtomicBoolean thrown = new AtomicBoolean();
        final DurabilityListener throwsOnce = (log, offset) ->
        {
            if (thrown.compareAndSet(false, true))
            {
                throw new StackOverflowError("injected: a listener that overflowed its stack");
            }
        };
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withDurabilityListener(throwsOnce)))
        {
            final PartitionLog log = manager.createLog("faulty", 0, Map.of(LogConfig.FLUSH_MESSAGES, "1"));
            appendAndAwaitDurable(log, 1);
            // the durable offset moves before the listener is told (LogFlusher#durableTo): the throw may follow it
            Await.await(thrown::get, Duration.ofSeconds(60), () -> "the listener threw on the first fsync");
            appendAndAwaitDurable(log, 2);
        }
    }

    @Test
    void anInterruptOfTheCommitterThreadStopsNotGroupCommit() throws Exception
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("interrupted", 0, Map.of(LogConfig.FLUSH_MESSAGES, "1"));
            appendAndAwaitDurable(log, 1);
            int interrupted = 0;
            for (final Thread t : Thread.getAllStackTraces().keySet())
            {
                if (t.getName().startsWith("ferrite-group-commit-"))
                {
                    t.interrupt();
                    interrupted++;
                }
            }
            assertEquals(1, interrupted, "one committer for one log directory");
            appendAndAwaitDurable(log, 2);
            appendAndAwaitDurable(log, 3);
        }
    }

    private static void appendAndAwaitDurable(final PartitionLog log, final long durable)
    {
        final Batches batches = new Batches();
        batches.records(1, 1, System.currentTimeMillis());
        final AppendResult result = new AppendResult();
        log.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.OK, result.status, String.valueOf(result));
        Await.await(() -> log.durableOffset() >= durable, Duration.ofSeconds(60),
            () -> "an fsync covers offset " + (durable - 1) + " (durable offset " + log.durableOffset() + ")");
    }
}
