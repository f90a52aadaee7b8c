package io.ferrite.broker.logthread;

import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.AppendResult;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.log.LogTransactions;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The log thread's duty cycle stepped with an {@link AgentInvoker} on the test's thread: each
 * {@code invoke()} is one cycle, so what it answers when is deterministic — down to the order of a
 * produce's verification and a transaction marker.
 */
class LogThreadTest
{
    @TempDir
    Path dir;

    private LogManager logs;
    private TopicRegistry registry;
    private LogThread thread;
    private AgentInvoker invoker;
    private final AtomicInteger[] completions = {new AtomicInteger(), new AtomicInteger()};
    private final AtomicInteger advanced = new AtomicInteger();

    @BeforeEach
    void start() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        registry = new TopicRegistry(logs, 1);
        registry.load();
        thread = new LogThread(0, 2, 8, new LogThread.Completion()
        {
            @Override
            public void completed(final int networkThread)
            {
                completions[networkThread].incrementAndGet();
            }

            @Override
            public void highWatermarkAdvanced(final Partition partition)
            {
                advanced.incrementAndGet();
            }
        });
        invoker = new AgentInvoker(thread.faults(), null, thread);
        invoker.start();
    }

    @AfterEach
    void stop() throws Exception
    {
        invoker.close();
        logs.close();
    }

    private static int batch(final ExpandableDirectByteBuffer buffer, final int records)
    {
        final RecordBatchBuilder builder = new RecordBatchBuilder().wrap(buffer, 0);
        final UnsafeBuffer value = new UnsafeBuffer(new byte[100]);
        for (int i = 0; i < records; i++)
        {
            builder.appendRecord(System.currentTimeMillis(), null, 0, -1, value, 0, 100);
        }
        return builder.build();
    }

    /** One duty cycle, then what came back for {@code networkThread}. */
    private AppendCommand step(final int networkThread)
    {
        invoker.invoke();
        return thread.poll(networkThread);
    }

    @Test
    void appendsComeBackToTheNetworkThreadThatSentThemAndMoveTheHighWatermark() throws Exception
    {
        final Partition partition = registry.create("flush", 1, Map.of()).partitions[0];
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);
        final int length = batch(buffer, 3);

        final AppendCommand first = new AppendCommand();
        first.set(1, null, 7, partition, buffer, 0, length, (short)1);
        assertTrue(thread.offer(1, first));
        assertSame(first, step(1));
        assertEquals(AppendResult.OK, first.result.status, first.result.message);
        assertEquals(0, first.result.firstOffset);
        assertEquals(2, first.result.lastOffset);
        assertEquals(3, partition.log.highWatermark());
        assertEquals(1, completions[1].get());
        assertEquals(0, completions[0].get());
        assertNull(thread.poll(0));

        partition.fetchParked(0);
        final AppendCommand second = new AppendCommand();
        second.set(0, null, 0, partition, buffer, 0, batch(buffer, 2), (short)-1);
        assertTrue(thread.offer(0, second));
        assertSame(second, step(0));
        assertEquals(3, second.result.firstOffset);
        assertEquals(5, partition.log.highWatermark());
        assertEquals(1, advanced.get(), "parked fetches are told the high watermark moved");
        partition.fetchUnparked();
    }

    @Test
    void aRejectedBatchComesBackWithItsErrorAndLeavesTheLogAlone() throws Exception
    {
        final Partition partition = registry.create("bad", 1, Map.of()).partitions[0];
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);
        final int length = batch(buffer, 1);
        buffer.putByte(length - 1, (byte)(buffer.getByte(length - 1) ^ 1)); // breaks the CRC
        final AppendCommand command = new AppendCommand();
        command.set(0, null, 0, partition, buffer, 0, length, (short)1);
        assertTrue(thread.offer(0, command));
        assertSame(command, step(0));
        assertEquals(AppendResult.CORRUPT_MESSAGE, command.result.status);
        assertEquals(0, partition.log.logEndOffset());
    }

    @Test
    void acksAllInFsyncDurabilityComesBackOnlyOnceAnFsyncCoversIt() throws Exception
    {
        final Topic topic = registry.create("durable", 1, Map.of("ferrite.durability", "fsync"));
        final Partition partition = topic.partitions[0];
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);
        for (int round = 0; round < 20; round++)
        {
            final AppendCommand command = new AppendCommand();
            command.set(0, null, 0, partition, buffer, 0, batch(buffer, 2), (short)-1);
            assertTrue(thread.offer(0, command));
            AppendCommand back = step(0); // held until an fsync covers it, unless one already did
            if (back == null)
            {
                assertTrue(partition.log.awaitDurable(command.result.lastOffset + 1, 30_000), "the group committer fsyncs it");
                back = step(0);
            }
            assertSame(command, back);
            assertEquals(AppendResult.OK, command.result.status, command.result.message);
            assertTrue(partition.log.durableOffset() > command.result.lastOffset,
                "durable " + partition.log.durableOffset() + " covers " + command.result.lastOffset);
        }
    }

    @Test
    void tasksRunInTheDutyCycle()
    {
        final AtomicInteger ran = new AtomicInteger();
        thread.execute(ran::incrementAndGet);
        assertEquals(0, ran.get());
        invoker.invoke();
        assertEquals(1, ran.get());
    }

    /** A produce's command for a transactional batch of producer 42 at {@code sequence}, as ProduceHandler sends it first. */
    private static AppendCommand transactionalBatch(final Partition partition, final ExpandableDirectByteBuffer buffer, final int sequence)
    {
        final RecordBatchBuilder builder = new RecordBatchBuilder().wrap(buffer, 0).producer(42, (short)0, sequence).transactional(true);
        builder.appendRecord(System.currentTimeMillis(), null, 0, -1, new UnsafeBuffer(new byte[10]), 0, 10);
        final AppendCommand command = new AppendCommand();
        command.set(0, null, 0, partition, buffer, 0, builder.build(), (short)-1);
        command.verification = LogTransactions.VERIFY_FIRST;
        return command;
    }

    private AppendCommand roundTrip(final AppendCommand command)
    {
        assertTrue(thread.offer(0, command));
        assertSame(command, step(0));
        return command;
    }

    private void commitMarker(final Partition partition)
    {
        final AppendCommand marker = new AppendCommand();
        marker.setMarker(0, null, 0, partition, 42, (short)0, 0, true, false);
        assertEquals(AppendResult.OK, roundTrip(marker).result.status, marker.result.toString());
    }

    /**
     * The race Kafka's VerificationGuard closes: a transactional batch comes back to be verified, the
     * coordinator says its partition is in the ongoing transaction, and before the batch's second
     * append the transaction ends — its marker written through the same log thread. The late batch
     * must not open a transaction nobody will end (a "hanging transaction" pinning the last stable
     * offset): INVALID_TXN_STATE, nothing appended.
     */
    @Test
    void aTransactionalBatchVerifiedBeforeItsTransactionsMarkerAndAppendedAfterItIsRefused() throws Exception
    {
        final Partition partition = registry.create("orders", 1, Map.of()).partitions[0];
        final AppendCommand batch = roundTrip(transactionalBatch(partition, new ExpandableDirectByteBuffer(4096), 0));
        assertEquals(AppendResult.VERIFICATION_NEEDED, batch.result.status, batch.result.toString());
        assertEquals(0, partition.log.logEndOffset(), "nothing appended before the verification");
        batch.verification = batch.result.verificationGuard; // the coordinator said: in the ongoing transaction

        commitMarker(partition); // meanwhile EndTxn: the transaction's marker reaches the partition first

        roundTrip(batch);
        assertEquals(AppendResult.INVALID_TXN_STATE, batch.result.status, batch.result.toString());
        assertEquals(1, partition.log.logEndOffset(), "only the marker");
        assertEquals(1, partition.log.transactions().lastStableOffset(), "no transaction left open on the partition");
    }

    /** In the other order the batch is in the transaction, and the transaction's next batches are appended at once. */
    @Test
    void aTransactionalBatchAppendedBeforeTheMarkerIsInTheTransactionAndTheNextAreNotVerified() throws Exception
    {
        final Partition partition = registry.create("orders", 1, Map.of()).partitions[0];
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);
        final AppendCommand batch = roundTrip(transactionalBatch(partition, buffer, 0));
        assertEquals(AppendResult.VERIFICATION_NEEDED, batch.result.status);
        batch.verification = batch.result.verificationGuard;
        assertEquals(AppendResult.OK, roundTrip(batch).result.status, batch.result.toString());
        assertEquals(AppendResult.OK, roundTrip(transactionalBatch(partition, buffer, 1)).result.status, "open here: appended at once");
        assertEquals(0, partition.log.transactions().lastStableOffset(), "open from offset 0");
        commitMarker(partition);
        assertEquals(3, partition.log.transactions().lastStableOffset());
    }

    /** Production runs the agent on its own thread, which a command handed over wakes from its park. */
    @Test
    void aRunnerRunsItOnAThreadNamedForItsRole() throws Exception
    {
        invoker.close();
        final LogThread running = new LogThread(1, 1, 8, new LogThread.Completion()
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
        // parks an hour at a time once idle: only a wake-up gets an answer before the deadline
        final long hour = TimeUnit.HOURS.toNanos(1);
        final BackoffIdleStrategy parks = new BackoffIdleStrategy(1, 1, hour, hour);
        try (LogThreadRunner runner = new LogThreadRunner(running, parks))
        {
            runner.start();
            final CompletableFuture<String> name = new CompletableFuture<>();
            running.execute(() -> name.complete(Thread.currentThread().getName()));
            assertEquals("ferrite-log-1", name.get(30, TimeUnit.SECONDS));

            final Partition partition = registry.create("woken", 1, Map.of()).partitions[0];
            final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);
            final AppendCommand command = new AppendCommand();
            command.set(0, null, 0, partition, buffer, 0, batch(buffer, 1), (short)1);
            assertTrue(running.offer(0, command));
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            AppendCommand done;
            while ((done = running.poll(0)) == null && System.nanoTime() < deadline)
            {
                Thread.onSpinWait();
            }
            assertSame(command, done, "the offer woke the parked thread");
            assertEquals(AppendResult.OK, command.result.status, command.result.message);
        }
        assertTrue(running.stopped(), "closing the runner ends the agent");
    }
}
