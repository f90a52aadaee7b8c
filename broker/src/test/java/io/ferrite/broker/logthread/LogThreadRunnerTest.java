package io.ferrite.broker.logthread;

import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.AppendResult;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The log thread on a real thread, as production runs it: Agrona's AgentRunner ends its run on any
 * Error that gets past the agent (a SIGBUS's late InternalError can surface in the runner's own
 * loop). The Error is injected where the runner meets the configured idle strategy — its
 * {@code reset()} after a cycle that did work — so that it reaches the runner every time.
 */
class LogThreadRunnerTest
{
    @TempDir
    Path dir;

    private LogManager logs;
    private Partition partition;
    private LogThread thread;
    private LogThreadRunner runner;

    /** Backs off as the broker's default does; its next {@code reset()} throws {@link #fault} once. */
    private static final class FailingReset implements IdleStrategy
    {
        private final IdleStrategy backoff = new BackoffIdleStrategy();
        volatile Error fault;

        @Override
        public void idle(final int workCount)
        {
            backoff.idle(workCount);
        }

        @Override
        public void idle()
        {
            backoff.idle();
        }

        @Override
        public void reset()
        {
            final Error f = fault;
            if (f != null)
            {
                fault = null;
                throw f;
            }
            backoff.reset();
        }
    }

    private final FailingReset idle = new FailingReset();

    @BeforeEach
    void start() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        final TopicRegistry registry = new TopicRegistry(logs, 1);
        registry.load();
        partition = registry.create("run", 1, Map.of()).partitions[0];
        thread = new LogThread(0, 1, 8, new LogThread.Completion()
        {
            @Override
            public void completed(final int networkThread)
            {
            }

            @Override
            public void highWatermarkAdvanced(final Partition partition)
            {
            }
        });
        runner = new LogThreadRunner(thread, idle);
        runner.start();
    }

    @AfterEach
    void stop() throws Exception
    {
        runner.close();
        logs.close();
    }

    private AppendCommand append()
    {
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);
        final RecordBatchBuilder builder = new RecordBatchBuilder().wrap(buffer, 0);
        builder.appendRecord(System.currentTimeMillis(), null, 0, -1, new UnsafeBuffer(new byte[10]), 0, 10);
        final AppendCommand command = new AppendCommand();
        command.set(0, null, 0, partition, buffer, 0, builder.build(), (short)1);
        assertTrue(thread.offer(0, command));
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        AppendCommand done;
        while ((done = thread.poll(0)) == null && System.nanoTime() < deadline)
        {
            Thread.onSpinWait();
        }
        assertSame(command, done, "the command comes back");
        return command;
    }

    @Test
    void aSurvivableErrorThatEndsTheRunnersRunCostsNotTheThread()
    {
        idle.fault = new InternalError("injected: a SIGBUS surfacing late");
        assertEquals(AppendResult.OK, append().result.status, "answered before the fault");
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (thread.faults().count() == 0 && System.nanoTime() < deadline)
        {
            Thread.onSpinWait();
        }
        assertEquals(1, thread.faults().count(), "the runner's error handler counted it");
        final AppendCommand next = append();
        assertEquals(AppendResult.OK, next.result.status, "a new run of the same agent serves on: " + next.result);
        assertEquals(1, next.result.firstOffset);
        assertTrue(!thread.stopped());
    }

    @Test
    void aFatalErrorThatEndsTheRunnersRunEndsTheAgentAndEveryLaterCommandIsAnswered()
    {
        idle.fault = new StackOverflowError("injected");
        assertEquals(AppendResult.OK, append().result.status, "answered before the fault");
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!thread.stopped() && System.nanoTime() < deadline)
        {
            Thread.onSpinWait();
        }
        assertTrue(thread.stopped(), "the agent's end ran, although the runner skipped onClose");
        final AppendCommand later = append();
        assertEquals(AppendResult.STORAGE_ERROR, later.result.status, String.valueOf(later.result));
        assertTrue(later.result.message.contains("StackOverflowError"), later.result.message);
    }

    @Test
    void anInterruptOfTheThreadCostsNotTheThread()
    {
        // Agrona's AgentRunner ends its run, with onClose, when its thread is found interrupted
        thread.execute(() -> Thread.currentThread().interrupt()); // a task leaving the flag set
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (thread.faults().count() == 0 && !thread.stopped() && System.nanoTime() < deadline)
        {
            Thread.onSpinWait();
        }
        assertTrue(!thread.stopped(), "the interrupt ended the log thread");
        assertEquals(1, thread.faults().count(), "the interrupt is counted");
        final AppendCommand next = append();
        assertEquals(AppendResult.OK, next.result.status, "the thread serves on: " + next.result);
    }
}
