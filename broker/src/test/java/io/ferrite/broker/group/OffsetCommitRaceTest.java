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
import java.lang.management.ThreadInfo;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * An OffsetCommit's generation check and its store are one step: a rebalance (here the member
 * leaving, which moves the group to the next generation) cannot come between them. The coordinator's
 * test hook runs right after the check; from it another thread makes the member leave, and the hook
 * waits until that leave has either completed (it got in between: the stale commit would then be
 * stored and answered NONE) or is blocked on the coordinator (it waits for the commit to finish).
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
            broker.topics().create(TOPIC, 1, Map.of());
            final GroupCoordinator coordinator = broker.groups();
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.address().getPort(),
                ConsumerConfig.GROUP_ID_CONFIG, GROUP, ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false, ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 30_000,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class)))
            {
                consumer.subscribe(List.of(TOPIC));
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (consumer.assignment().isEmpty() && System.nanoTime() < deadline)
                {
                    consumer.poll(Duration.ofMillis(100));
                }
                assertEquals(1, consumer.assignment().size(), "joined and assigned");
                final ConsumerGroupMetadata member = consumer.groupMetadata();

                final AtomicReference<String> inBetween = new AtomicReference<>();
                final AtomicReference<String> hookProblem = new AtomicReference<>();
                coordinator.afterCommitValidated = () ->
                {
                    coordinator.afterCommitValidated = null;
                    final Thread leaver = new Thread(() -> coordinator.leave(GROUP,
                        List.of(new GroupCoordinator.MemberIdentity(member.memberId(), null))), "leaver");
                    leaver.start();
                    final long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                    while (leaver.isAlive() && !blockedOn(leaver, coordinator) && System.nanoTime() < until)
                    {
                        Thread.onSpinWait();
                    }
                    if (!leaver.isAlive())
                    {
                        inBetween.set("member " + member.memberId() + " of generation " + member.generationId() +
                            " left between the check of its commit's generation and the store");
                    }
                    else if (!blockedOn(leaver, coordinator))
                    {
                        hookProblem.set("the leave neither completed nor waited for the coordinator");
                    }
                };
                final TopicPartition tp = new TopicPartition(TOPIC, 0);
                consumer.commitSync(Map.of(tp, new OffsetAndMetadata(7)));
                assertNull(hookProblem.get());
                assertNull(coordinator.afterCommitValidated, "the hook ran");
                assertNull(inBetween.get(), "the commit was answered NONE, so nothing may have come between its check and its store");
                assertEquals(7, coordinator.committed(GROUP, TOPIC, 0).offset(), "stored");
            }
        }
        finally
        {
            broker.close();
        }
    }

    /** Whether the thread waits to enter the coordinator's monitor. */
    private static boolean blockedOn(final Thread thread, final Object monitor)
    {
        final ThreadInfo info = ManagementFactory.getThreadMXBean().getThreadInfo(thread.getId());
        return info != null && info.getThreadState() == Thread.State.BLOCKED && info.getLockName() != null &&
            info.getLockName().equals(monitor.getClass().getName() + "@" + Integer.toHexString(System.identityHashCode(monitor)));
    }
}
