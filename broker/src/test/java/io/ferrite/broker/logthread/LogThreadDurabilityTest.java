package io.ferrite.broker.logthread;

import io.ferrite.broker.Errors;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.AppendResult;
import io.ferrite.log.DurabilityListener;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.log.PartitionLog;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a log thread answers in {@code ferrite.durability=fsync}: no success — an append, at acks=1 or
 * all, or an idempotent retry answered with the original offsets — before an fsync covers the
 * batch, and an error, not OK, for a batch whose log closed before any fsync covered it. The group
 * fsync is held back by a durability listener that blocks the committer inside a round, so what
 * must wait for it cannot come back by luck; the log thread is stepped with an {@link AgentInvoker},
 * one duty cycle per {@code invoke()}, so what it answers in a cycle is exactly what was due.
 */
class LogThreadDurabilityTest
{
    private static final long PRODUCER_ID = 4711;

    @TempDir
    Path dir;

    private final HeldFsync held = new HeldFsync();
    private LogManager logs;
    private TopicRegistry registry;
    private LogThread thread;
    private AgentInvoker invoker;
    private Partition partition;

    /** Blocks the group committer in the first round after {@link #hold()} until {@link #release()}. */
    private static final class HeldFsync implements DurabilityListener
    {
        private final CountDownLatch entered = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);
        private volatile boolean armed;

        @Override
        public void onDurable(final PartitionLog log, final long durableOffset)
        {
            if (armed)
            {
                entered.countDown();
                try
                {
                    released.await(60, TimeUnit.SECONDS);
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
            }
        }

        void hold()
        {
            armed = true;
        }

        void awaitHeld() throws InterruptedException
        {
            assertTrue(entered.await(30, TimeUnit.SECONDS), "the committer reached a round");
        }

        void release()
        {
            armed = false;
            released.countDown();
        }
    }

    @BeforeEach
    void start() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir).withDurabilityListener(held));
        registry = new TopicRegistry(logs, 1);
        registry.load();
        partition = registry.create("durable", 1, Map.of("ferrite.durability", "fsync")).partitions[0];
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
        invoker = new AgentInvoker(thread.faults(), null, thread);
        invoker.start();
    }

    @AfterEach
    void stop() throws Exception
    {
        held.release();
        invoker.close();
        logs.close();
    }

    private static int batch(final ExpandableDirectByteBuffer buffer, final int records, final long producerId)
    {
        final RecordBatchBuilder builder = new RecordBatchBuilder().wrap(buffer, 0);
        if (producerId >= 0)
        {
            builder.producer(producerId, (short)0, 0);
        }
        final UnsafeBuffer value = new UnsafeBuffer(new byte[100]);
        for (int i = 0; i < records; i++)
        {
            builder.appendRecord(1_700_000_000_000L + i, null, 0, -1, value, 0, 100);
        }
        return builder.build();
    }

    private AppendCommand send(final int records, final long producerId, final short acks)
    {
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);
        final AppendCommand command = new AppendCommand();
        command.set(0, null, 0, partition, buffer, 0, batch(buffer, records, producerId), acks);
        assertTrue(thread.offer(0, command));
        return command;
    }

    /** A batch with a broken CRC: answered at once whatever the durability, so it marks "the thread got this far". */
    private AppendCommand sendMarker()
    {
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);
        final int length = batch(buffer, 1, -1);
        buffer.putByte(length - 1, (byte)(buffer.getByte(length - 1) ^ 1));
        final AppendCommand command = new AppendCommand();
        command.set(0, null, 0, partition, buffer, 0, length, (short)-1);
        assertTrue(thread.offer(0, command));
        return command;
    }

    /** One duty cycle, then the next command that came back (null if none). */
    private AppendCommand step()
    {
        invoker.invoke();
        return thread.poll(0);
    }

    /** Waits (with a deadline) until an fsync covers {@code command}, then steps the thread to answer it. */
    private AppendCommand durable(final AppendCommand command) throws InterruptedException
    {
        assertTrue(partition.log.awaitDurable(command.result.lastOffset + 1, 30_000), "an fsync covers " + command.result);
        return step();
    }

    /** Appends one batch and waits for its answer, then holds the committer inside the round that fsyncs it. */
    private void holdTheGroupFsync() throws InterruptedException
    {
        held.hold();
        final AppendCommand first = send(1, -1, (short)-1);
        AppendCommand back = step(); // held for the fsync, unless the committer's round was quicker than the check
        held.awaitHeld(); // the round has moved the durable offset over it, and blocks in the listener
        if (back == null)
        {
            back = step();
        }
        assertSame(first, back);
        assertEquals(AppendResult.OK, first.result.status, first.result.message);
    }

    @Test
    void anIdempotentRetryIsAnsweredOnlyOnceAnFsyncCoversTheOriginal() throws Exception
    {
        holdTheGroupFsync();
        final AppendCommand original = send(2, PRODUCER_ID, (short)-1);
        final AppendCommand retry = send(2, PRODUCER_ID, (short)-1); // the same batch again: the answer was lost
        final AppendCommand marker = sendMarker();
        assertSame(marker, step());
        assertNull(thread.poll(0), "nothing of the producer's is answered while the fsync is held");
        assertEquals(AppendResult.CORRUPT_MESSAGE, marker.result.status);
        assertTrue(partition.log.durableOffset() < partition.log.logEndOffset(), "the original is not durable yet");

        held.release();
        assertSame(original, durable(retry));
        assertSame(retry, thread.poll(0), "the retry comes back in the same cycle, after the original");
        assertEquals(AppendResult.OK, original.result.status, original.result.message);
        assertEquals(AppendResult.DUPLICATE, retry.result.status, retry.result.message);
        assertEquals(original.result.firstOffset, retry.result.firstOffset, "the retry gets the original offsets");
        assertEquals(original.result.lastOffset, retry.result.lastOffset);
        assertTrue(partition.log.durableOffset() > retry.result.lastOffset, "durable when answered");
        assertEquals(Errors.NONE, Errors.ofAppend(retry.result.status));
    }

    @Test
    void aRetryOfADurableBatchIsAnsweredAtOnce() throws Exception
    {
        final AppendCommand original = send(2, PRODUCER_ID, (short)-1);
        final AppendCommand back = step();
        assertSame(original, back != null ? back : durable(original));
        holdTheGroupFsync(); // no fsync can come now: the retry's answer must not need one
        final AppendCommand retry = send(2, PRODUCER_ID, (short)-1);
        assertSame(retry, step());
        assertEquals(AppendResult.DUPLICATE, retry.result.status, retry.result.message);
        assertEquals(original.result.firstOffset, retry.result.firstOffset);
    }

    @Test
    void acksOneInFsyncDurabilityAlsoWaitsForTheFsync() throws Exception
    {
        holdTheGroupFsync();
        final AppendCommand leaderOnly = send(3, -1, (short)1);
        final AppendCommand marker = sendMarker();
        assertSame(marker, step());
        assertNull(thread.poll(0), "acks=1 is not answered while the fsync is held");

        held.release();
        assertSame(leaderOnly, durable(leaderOnly));
        assertEquals(AppendResult.OK, leaderOnly.result.status, leaderOnly.result.message);
        assertTrue(partition.log.durableOffset() > leaderOnly.result.lastOffset, "durable when answered");
    }

    @Test
    void aBatchWhoseLogClosesBeforeAnyFsyncCoversItIsAnsweredWithAnError() throws Exception
    {
        holdTheGroupFsync();
        final AppendCommand waiting = send(2, -1, (short)-1);
        final AppendCommand marker = sendMarker();
        assertSame(marker, step());
        assertNull(thread.poll(0));

        // close flushes too, but only after the committer's round it waits behind: meanwhile the log is closed
        final CompletableFuture<Void> closing = CompletableFuture.runAsync(() ->
        {
            try
            {
                partition.log.close();
            }
            catch (final java.io.IOException ex)
            {
                throw new java.io.UncheckedIOException(ex);
            }
        });
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!partition.log.isClosed() && System.nanoTime() < deadline)
        {
            Thread.onSpinWait();
        }
        assertTrue(partition.log.isClosed());
        assertSame(waiting, step(), "a closed log's waiting batch is answered, not left hanging");
        assertEquals(AppendResult.LOG_CLOSED, waiting.result.status, "no fsync covered it: not OK");
        assertEquals(Errors.NOT_LEADER_OR_FOLLOWER, Errors.ofAppend(waiting.result.status));

        held.release();
        closing.get(30, TimeUnit.SECONDS);
    }
}
