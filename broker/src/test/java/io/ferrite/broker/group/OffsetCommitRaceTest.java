package io.ferrite.broker.group;

import io.ferrite.broker.Broker;
import io.ferrite.broker.config.BrokerConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.lang.management.MonitorInfo;
import java.lang.management.ThreadInfo;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * An OffsetCommit's generation check and its store are one step: a rebalance (here the member
 * leaving, which moves the group to the next generation) cannot come between them. The coordinator's
 * first test hook runs right after the check: from it another thread makes the member leave, and it
 * waits until that leave is blocked on the coordinator (or, wrongly, done). The second hook runs right
 * before the batch is sent to its log thread (whose answer stores it; the group's later writes come
 * behind it, see GroupLogThreadWritesTest for a rebalance while it is on its way): there the test records which hold of the coordinator's lock it is in (the frame
 * that took it), whether the leave got in (it is given the chance: the hook waits until it is done or
 * blocked again) and the group's generation. One lock hold for check and store means the same hold at
 * both hooks, the leave still waiting, and the validated generation.
 */
class OffsetCommitRaceTest
{
    private static final String TOPIC = "orders";
    private static final String GROUP = "packers";

    @TempDir
    Path dir;

    @Test
    void aRebalanceCannotComeBetweenTheGenerationCheckAndTheStore() throws Exception
    {
        final Broker broker = Broker.start(BrokerConfig.of(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0",
            BrokerConfig.LOG_DIR, dir.toString(), "group.initial.rebalance.delay.ms", "0", "offsets.topic.num.partitions", "1")));
        try
        {
            broker.admin().createTopic(TOPIC, 1, Map.of()).get(20, java.util.concurrent.TimeUnit.SECONDS);
            final GroupCoordinator coordinator = broker.groups();
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.address().getPort(),
                ConsumerConfig.GROUP_ID_CONFIG, GROUP, ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false, ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 30_000,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class)))
            {
                consumer.subscribe(List.of(TOPIC));
                await(() ->
                {
                    consumer.poll(Duration.ofMillis(100));
                    return !consumer.assignment().isEmpty();
                }, Duration.ofSeconds(30), "the consumer joined and assigned");
                assertEquals(1, consumer.assignment().size(), "joined and assigned");
                final ConsumerGroupMetadata member = consumer.groupMetadata();

                final AtomicReference<Thread> leaver = new AtomicReference<>();
                final AtomicReference<String> holdAtCheck = new AtomicReference<>();
                final AtomicReference<String> holdAtStore = new AtomicReference<>();
                final AtomicReference<String> hookProblem = new AtomicReference<>();
                final AtomicInteger generationAtStore = new AtomicInteger(-2);
                final AtomicBoolean leftBeforeStore = new AtomicBoolean();
                final Runnable afterValidated = () ->
                {
                    coordinator.commitHooks = null; // this commit only
                    holdAtCheck.set(lockHold(coordinator));
                    final Thread t = new Thread(() -> coordinator.leave(GROUP,
                        List.of(new GroupCoordinator.MemberIdentity(member.memberId(), null))), "leaver");
                    leaver.set(t);
                    t.start();
                    if (!awaitDoneOrBlocked(t, coordinator))
                    {
                        hookProblem.set("the leave neither completed nor waited for the coordinator");
                    }
                };
                final Runnable beforeStored = () ->
                {
                    holdAtStore.set(lockHold(coordinator));
                    // with the store in a lock hold of its own the leave may have got in before it: give it the chance to finish
                    awaitDoneOrBlocked(leaver.get(), coordinator);
                    leftBeforeStore.set(!leaver.get().isAlive());
                    generationAtStore.set(coordinator.describe(GROUP) == null ? -1 : generation(coordinator));
                };
                coordinator.commitHooks = new OffsetCommits.Hooks(afterValidated, beforeStored);
                final TopicPartition tp = new TopicPartition(TOPIC, 0);
                consumer.commitSync(Map.of(tp, new OffsetAndMetadata(7)));
                assertNull(hookProblem.get());
                assertNotNull(holdAtCheck.get(), "the check's hook ran inside a hold of the coordinator's lock");
                assertNotNull(holdAtStore.get(), "the store's hook ran inside a hold of the coordinator's lock");
                assertEquals(holdAtCheck.get(), holdAtStore.get(),
                    "the coordinator's lock was taken once for the check and the store (where each hold was taken)");
                assertFalse(leftBeforeStore.get(), "the member left between its commit's generation check and the store");
                assertEquals(member.generationId(), generationAtStore.get(), "the group's generation when the commit was stored");
                assertEquals(7, coordinator.committed(GROUP, TOPIC, 0).offset(), "stored");
                leaver.get().join(TimeUnit.SECONDS.toMillis(20));
                assertFalse(leaver.get().isAlive(), "the leave completed once the commit was done");
            }
        }
        finally
        {
            broker.close();
        }
    }

    /** Waits (up to 20 s) until the thread has ended or waits to enter the monitor; false if neither. */
    private static boolean awaitDoneOrBlocked(final Thread thread, final Object monitor)
    {
        try
        {
            // false, not a throw: this runs in the coordinator's hook, where the test reads the answer later
            await(() -> !thread.isAlive() || blockedOn(thread, monitor), Duration.ofSeconds(20), "the thread done or blocked");
            return true;
        }
        catch (final AssertionError ex)
        {
            return false;
        }
    }

    /** The group's generation, read by the thread that holds the coordinator's lock (reentrant). */
    private static int generation(final GroupCoordinator coordinator)
    {
        synchronized (coordinator)
        {
            final java.lang.reflect.Field groups;
            try
            {
                groups = GroupCoordinator.class.getDeclaredField("groups");
                groups.setAccessible(true);
                return ((Group)((Map<?, ?>)groups.get(coordinator)).get(GROUP)).generationId;
            }
            catch (final ReflectiveOperationException ex)
            {
                throw new AssertionError(ex);
            }
        }
    }

    /**
     * Which hold of the monitor the current thread is in: the frame that took it (outermost, if taken
     * reentrantly), counted from the bottom of the stack. Two points of one hold give the same answer;
     * a release and a new acquisition in between would give another frame (or line).
     */
    private static String lockHold(final Object monitor)
    {
        final ThreadInfo info = ManagementFactory.getThreadMXBean().getThreadInfo(new long[] {Thread.currentThread().getId()}, true, false)[0];
        MonitorInfo outermost = null;
        for (final MonitorInfo m : info.getLockedMonitors())
        {
            if (m.getIdentityHashCode() == System.identityHashCode(monitor) && m.getClassName().equals(monitor.getClass().getName()) &&
                (outermost == null || m.getLockedStackDepth() > outermost.getLockedStackDepth()))
            {
                outermost = m;
            }
        }
        return outermost == null ? null : (info.getStackTrace().length - outermost.getLockedStackDepth()) + " " +
            outermost.getLockedStackFrame();
    }

    /** Whether the thread waits to enter the coordinator's monitor. */
    private static boolean blockedOn(final Thread thread, final Object monitor)
    {
        final ThreadInfo info = ManagementFactory.getThreadMXBean().getThreadInfo(thread.getId());
        return info != null && info.getThreadState() == Thread.State.BLOCKED && info.getLockName() != null &&
            info.getLockName().equals(monitor.getClass().getName() + "@" + Integer.toHexString(System.identityHashCode(monitor)));
    }
}
