package io.ferrite.broker.logthread;

import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.AppendResult;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.log.WriterTasks;
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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The producer-id expiry on a log thread stepped with an {@link AgentInvoker}: a due check is walked over
 * the thread's own partitions {@value ProducerExpiryWalk#EXPIRE_PER_CYCLE} per duty cycle, not in one
 * burst; checks that come while a walk is under way are absorbed; a topic deleted during a walk is skipped
 * without a fault.
 */
class ProducerExpiryWalkTest
{
    private static final long EXPIRY_MS = 10_000;
    private static final int PARTITIONS = 40;

    @TempDir
    Path dir;

    private final AtomicLong now = new AtomicLong(1_700_000_000_000L);
    private LogManager logs;
    private TopicRegistry registry;
    private LogThread[] threads;
    private AgentInvoker invoker;
    private final LogThreadTasks tasks = new LogThreadTasks();

    @BeforeEach
    void start() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir).withClock(now::get)
            .withProducerIdExpiration(EXPIRY_MS, Long.MAX_VALUE / 2, WriterTasks.NONE)); // the test says when a check is due
        registry = new TopicRegistry(logs, 2);
        registry.load();
        registry.writer(Thread.currentThread());
        final LogThread.Completion completion = new LogThread.Completion()
        {
            @Override
            public void completed(final int networkThread)
            {
            }

            @Override
            public void highWatermarkAdvanced(final Partition partition)
            {
            }
        };
        // two log threads, the test's thread stepping the first: it owns about half of the partitions
        threads = new LogThread[] {new LogThread(0, 1, 8, completion), new LogThread(1, 1, 8, completion)};
        tasks.attach(registry, threads);
        invoker = new AgentInvoker(threads[0].faults(), null, threads[0]);
        invoker.start();
    }

    @AfterEach
    void stop() throws Exception
    {
        invoker.close();
        logs.close();
    }

    /** Appends one idempotent batch of its own producer to each of {@code topic}'s partitions thread 0 owns; returns how many. */
    private int producersOnThreadZero(final Topic topic)
    {
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(256);
        final AppendResult result = new AppendResult();
        int owned = 0;
        for (final Partition p : topic.partitions)
        {
            if (p.owner == 0)
            {
                final int length = new RecordBatchBuilder().wrap(buffer, 0).producer(1000 + p.index, (short)0, 0)
                    .appendRecord(now.get(), null, 0, -1, new UnsafeBuffer(new byte[8]), 0, 8).build();
                p.log.append(buffer, 0, length, result);
                assertEquals(AppendResult.OK, result.status, result.toString());
                owned++;
            }
        }
        return owned;
    }

    private static int remembered(final Topic topic)
    {
        final AtomicInteger n = new AtomicInteger();
        for (final Partition p : topic.partitions)
        {
            if (p.owner == 0)
            {
                p.log.transactions().forEachProducer((id, epoch, seq, ts, coordinatorEpoch, txn) -> n.incrementAndGet());
            }
        }
        return n.get();
    }

    @Test
    void aDueCheckIsWalkedAFewOwnedPartitionsPerDutyCycle() throws Exception
    {
        final Topic topic = registry.create("walked", PARTITIONS, Map.of());
        final int owned = producersOnThreadZero(topic);
        assertTrue(owned > ProducerExpiryWalk.EXPIRE_PER_CYCLE && owned < PARTITIONS, "thread 0 owns " + owned);
        now.addAndGet(EXPIRY_MS);

        invoker.invoke();
        assertEquals(owned, remembered(topic), "nothing before a check is due");
        tasks.producerExpiryDue();
        tasks.producerExpiryDue(); // a second check while the first is not walked yet: absorbed
        assertTrue(threads[0].hasWork(), "a due check is work: the thread does not park on it");

        int cycles = 0;
        while (remembered(topic) > 0)
        {
            final int before = remembered(topic);
            invoker.invoke();
            cycles++;
            assertEquals(Math.min(before, ProducerExpiryWalk.EXPIRE_PER_CYCLE), before - remembered(topic),
                "a cycle expires " + ProducerExpiryWalk.EXPIRE_PER_CYCLE + " logs, not all (cycle " + cycles + ")");
        }
        assertEquals((owned + ProducerExpiryWalk.EXPIRE_PER_CYCLE - 1) / ProducerExpiryWalk.EXPIRE_PER_CYCLE, cycles);
        invoker.invoke(); // the walk's end: fewer partitions left than a cycle looks at
        assertFalse(threads[0].hasWork(), "one walk for the two checks: the second was absorbed");

        tasks.producerExpiryDue(); // a check after the walk starts a new one
        assertTrue(threads[0].hasWork());
        invoker.invoke();
        assertFalse(threads[0].hasWork(), "nothing left to expire: one cycle walks all " + PARTITIONS + " partitions");
        assertEquals(0, threads[0].faults().count());
    }

    @Test
    void aTopicDeletedDuringAWalkIsSkipped() throws Exception
    {
        final Topic topic = registry.create("deleted", PARTITIONS, Map.of());
        final int owned = producersOnThreadZero(topic);
        now.addAndGet(EXPIRY_MS);
        tasks.producerExpiryDue();
        invoker.invoke();
        assertEquals(owned - ProducerExpiryWalk.EXPIRE_PER_CYCLE, remembered(topic));

        registry.delete(topic); // its logs closed while the walk is at it
        invoker.invoke();
        assertFalse(threads[0].hasWork(), "the rest of the deleted topic is skipped: the walk is over");
        assertEquals(0, threads[0].faults().count(), "nothing thrown");

        final Topic again = registry.create("deleted", PARTITIONS, Map.of());
        final int ownedAgain = producersOnThreadZero(again);
        tasks.producerExpiryDue();
        while (threads[0].hasWork())
        {
            invoker.invoke();
        }
        assertEquals(ownedAgain, remembered(again), "the recreated topic's producers are young");
        assertEquals(0, threads[0].faults().count());
    }
}
