package io.ferrite.broker.logthread;

import io.ferrite.broker.Errors;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.AppendResult;
import io.ferrite.log.BatchClaim;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A fault inside an append costs that command only: the log thread, the only writer of all its
 * partitions, answers it KAFKA_STORAGE_ERROR, counts it and goes on serving. The fault is a real
 * one — the active segment's file truncated under its mapping, so the append's copy into the
 * mapping takes a SIGBUS, which the JVM raises as an {@link InternalError}. The thread is stepped
 * with an {@link AgentInvoker} (one duty cycle per {@code invoke()}), except under the SIGBUS,
 * which needs a thread of its own (see that test).
 */
class LogThreadFaultTest
{
    @TempDir
    Path dir;

    private LogManager logs;
    private TopicRegistry registry;
    private LogThread thread;
    private AgentInvoker invoker;
    /** Set by the test that runs the thread on a real thread instead of stepping it. */
    private LogThreadRunner runner;

    @BeforeEach
    void start() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        registry = new TopicRegistry(logs, 1);
        registry.load();
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
    }

    @AfterEach
    void stop() throws Exception
    {
        if (runner != null)
        {
            runner.close();
        }
        else
        {
            invoker.close();
        }
        try
        {
            logs.close();
        }
        catch (final java.io.IOException ex)
        {
            // the damaged segment may refuse its last flush; that is not what these tests are about
        }
    }

    private AppendCommand append(final Partition partition) throws InterruptedException
    {
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);
        final RecordBatchBuilder builder = new RecordBatchBuilder().wrap(buffer, 0);
        final UnsafeBuffer value = new UnsafeBuffer(new byte[100]);
        for (int i = 0; i < 3; i++)
        {
            builder.appendRecord(System.currentTimeMillis(), null, 0, -1, value, 0, 100);
        }
        final AppendCommand command = new AppendCommand();
        command.set(0, null, 0, partition, buffer, 0, builder.build(), (short)1);
        assertTrue(thread.offer(0, command));
        AppendCommand done;
        if (runner == null)
        {
            done = step();
        }
        else
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while ((done = thread.poll(0)) == null && System.nanoTime() < deadline)
            {
                Thread.onSpinWait();
            }
        }
        assertSame(command, done, "the command comes back");
        return command;
    }

    /** One duty cycle, then the next command that came back (null if none). */
    private AppendCommand step()
    {
        if (!invoker.isStarted())
        {
            invoker.start();
        }
        invoker.invoke();
        return thread.poll(0);
    }

    private static void truncateSegments(final Path partitionDir) throws Exception
    {
        try (Stream<Path> files = Files.list(partitionDir))
        {
            for (final Path file : (Iterable<Path>)files::iterator)
            {
                if (file.getFileName().toString().endsWith(".log"))
                {
                    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE))
                    {
                        channel.truncate(0);
                    }
                }
            }
        }
    }

    /**
     * The JVM raises a SIGBUS taken in compiled code as an InternalError only at a later safepoint,
     * so which command gets it is not deterministic (the faulting append, or one after it): what is
     * asserted is what must hold whatever it hits — every command comes back, answered OK or
     * KAFKA_STORAGE_ERROR, the fault is counted, and the other partition is served on. Run by a
     * LogThreadRunner, as in production: stepped from the test's thread, a late InternalError could
     * surface in the test's own code after {@code invoke()} returned.
     */
    @Test
    void aSigbusOnAMappedSegmentCostsCommandsNotTheThread() throws Exception
    {
        runner = new LogThreadRunner(thread, new BackoffIdleStrategy());
        runner.start();
        final Topic topic = registry.create("faulty", 2, Map.of());
        final Partition broken = topic.partitions[0];
        final Partition healthy = topic.partitions[1];
        assertEquals(AppendResult.OK, append(broken).result.status);
        assertEquals(AppendResult.OK, append(healthy).result.status);

        // the preallocator may still be writing zeros ahead, which grows the file back over the
        // write position; it stops 2 MiB ahead, so a few rounds reach an append into nothing
        for (int round = 0; round < 100 && thread.faults().count() == 0; round++)
        {
            truncateSegments(dir.resolve("faulty-0"));
            final AppendCommand command = append(broken); // comes back: asserted inside
            assertTrue(command.result.status == AppendResult.OK || command.result.status == AppendResult.STORAGE_ERROR,
                String.valueOf(command.result));
        }
        assertTrue(thread.faults().count() >= 1, "an append into the truncated mapping faulted");

        // one fault raises one error: at most one more command can take it
        AppendCommand after = append(healthy);
        if (after.result.status == AppendResult.STORAGE_ERROR)
        {
            assertTrue(after.result.message.contains("InternalError"), after.result.message);
            assertEquals(Errors.KAFKA_STORAGE_ERROR, Errors.ofAppend(after.result.status));
            after = append(healthy);
        }
        assertEquals(AppendResult.OK, after.result.status, after.result.message);
        assertEquals(healthy.log.logEndOffset() - 3, after.result.firstOffset, "the other partition goes on where it was");
    }

    @Test
    void anAppendThatThrowsARuntimeExceptionIsAStorageError() throws Exception
    {
        final Topic topic = registry.create("claimed", 2, Map.of());
        final Partition held = topic.partitions[0];
        // a claim left open on the log: its next append throws IllegalStateException (commit or abort first)
        final BatchClaim claim = new BatchClaim();
        final CompletableFuture<Boolean> claimed = new CompletableFuture<>();
        thread.execute(() -> claimed.complete(held.log.claim(1024, claim, new AppendResult())));
        assertNull(step());
        assertTrue(claimed.getNow(false));

        // the same fault twice, from one call site: the same stack, as on the log thread's own runner
        // (the distinct-error log tells errors apart by class, message and stack)
        final AppendCommand[] failed = new AppendCommand[2];
        final long[] counted = new long[2];
        for (int i = 0; i < 2; i++)
        {
            failed[i] = append(held);
            counted[i] = thread.faults().count();
        }
        assertEquals(AppendResult.STORAGE_ERROR, failed[0].result.status);
        assertTrue(failed[0].result.message.contains("IllegalStateException"), failed[0].result.message);
        assertEquals(Errors.KAFKA_STORAGE_ERROR, Errors.ofAppend(failed[0].result.status));
        assertEquals(AppendResult.STORAGE_ERROR, failed[1].result.status, "the same fault again");
        assertArrayEquals(new long[] {1, 2}, counted, "every failed command is counted");
        assertEquals(1, thread.faults().distinctCauses(), "one cause, logged once");
        assertEquals(AppendResult.OK, append(topic.partitions[1]).result.status, "the other partition is served");

        final CompletableFuture<Boolean> aborted = new CompletableFuture<>();
        thread.execute(() ->
        {
            held.log.abort(claim);
            aborted.complete(true);
        });
        assertNull(step());
        assertTrue(aborted.getNow(false));
        assertEquals(AppendResult.OK, append(held).result.status, "once the claim ends the log takes appends again");
    }

    @Test
    void aTaskThatThrowsAnErrorDoesNotStopTheThread() throws Exception
    {
        thread.execute(() ->
        {
            throw new NoClassDefFoundError("a class the task needed is missing");
        });
        final CompletableFuture<Boolean> next = new CompletableFuture<>();
        thread.execute(() -> next.complete(true));
        assertNull(step());
        assertTrue(next.getNow(false), "the next task ran in the same cycle");
        assertEquals(1, thread.faults().count());
        assertTrue(!thread.stopped());
        final Partition partition = registry.create("after", 1, Map.of()).partitions[0];
        assertEquals(AppendResult.OK, append(partition).result.status, "appends go on too");
    }
    /** A batch buffer whose reads of the batch header throw {@code fatal}: an append that fails with an Error the thread cannot survive. */
    private static final class FailingBuffer extends ExpandableDirectByteBuffer
    {
        private final Error fatal;

        FailingBuffer(final Error fatal)
        {
            super(4096);
            this.fatal = fatal;
        }

        @Override
        public int getInt(final int index, final java.nio.ByteOrder order)
        {
            throw fatal;
        }
    }

    /**
     * Issue 11: an Error the thread cannot survive (out of memory here) used to end it and leave
     * every command queued to it unanswered — its produce requests hung until the client gave up.
     * Now the faulting command is answered, the thread stops, its end answers every command it
     * still had, queued or held for an fsync, and every later one is answered at once: each
     * KAFKA_STORAGE_ERROR (a held one an fsync covered meanwhile, OK), each exactly once.
     */
    @Test
    void aFatalErrorAnswersEveryCommandQueuedToTheThreadAndEveryLaterOne() throws Exception
    {
        final Partition plain = registry.create("fatal", 1, Map.of()).partitions[0];
        final Partition durable = registry.create("fatal-durable", 1, Map.of("ferrite.durability", "fsync")).partitions[0];
        final AppendCommand heldForFsync = command(durable);
        assertTrue(thread.offer(0, heldForFsync));
        final AppendCommand answeredAlready = step();
        final AppendCommand fatal = new AppendCommand();
        fatal.set(0, null, 0, plain, new FailingBuffer(new OutOfMemoryError("injected: the JVM is out of memory")), 0, 100, (short)1);
        final AppendCommand queued = command(plain);
        assertTrue(thread.offer(0, fatal));
        assertTrue(thread.offer(0, queued));

        final java.util.List<AppendCommand> back = new java.util.ArrayList<>();
        if (answeredAlready != null)
        {
            back.add(answeredAlready); // an fsync covered it before the thread looked: OK, checked below
        }
        for (int cycle = 0; cycle < 3; cycle++)
        {
            invoker.invoke();
            for (AppendCommand c; (c = thread.poll(0)) != null; )
            {
                back.add(c);
            }
        }
        assertTrue(thread.stopped(), "the thread stopped");
        assertTrue(thread.faults().count() >= 1, "the fault is counted");
        final AppendCommand later = command(plain);
        assertTrue(thread.offer(0, later), "a stopped thread takes a command to answer it");
        assertTrue(thread.hasReturned(0), "answered at once");
        back.add(thread.poll(0));
        assertNull(thread.poll(0), "nothing more comes back");

        assertEquals(4, back.size(), "every command comes back: " + back);
        assertEquals(4, new java.util.HashSet<>(back).size(), "each once: " + back);
        for (final AppendCommand c : back)
        {
            if (c == heldForFsync && c.result.status == AppendResult.OK)
            {
                assertTrue(durable.log.durableOffset() > c.result.lastOffset, "OK only once durable");
                continue;
            }
            assertEquals(AppendResult.STORAGE_ERROR, c.result.status, String.valueOf(c.result));
            assertEquals(Errors.KAFKA_STORAGE_ERROR, Errors.ofAppend(c.result.status));
        }
        assertTrue(fatal.result.message.contains("OutOfMemoryError"), fatal.result.message);
        assertTrue(later.result.message.contains("OutOfMemoryError"), later.result.message);
    }

    private static AppendCommand command(final Partition partition)
    {
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);
        final RecordBatchBuilder builder = new RecordBatchBuilder().wrap(buffer, 0);
        builder.appendRecord(System.currentTimeMillis(), null, 0, -1, new UnsafeBuffer(new byte[10]), 0, 10);
        final AppendCommand command = new AppendCommand();
        command.set(0, null, 0, partition, buffer, 0, builder.build(), (short)1);
        return command;
    }
}
