package io.ferrite.broker.group;

import io.ferrite.broker.Broker;
import io.ferrite.broker.Errors;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.coordinator.CoordinatorAgent;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An OffsetCommit's generation check and its store are one step: a rebalance (here the member
 * leaving, which moves the group to the next generation) cannot come between them. The coordinator's
 * first test hook runs right after the check, on the coordinator's agent: from it the test queues the
 * member's leave on the agent and waits until it is queued (it could only run if the agent took it
 * in between). The second hook runs right before the batch is sent to its log thread (whose answer
 * stores it; the group's later writes come behind it, see GroupLogThreadWritesTest for a rebalance
 * while it is on its way): there the test records on which thread and in which of the agent's calls
 * it is, whether the leave got in, and the group's generation. One step for check and store means
 * the same thread and call at both hooks, the leave still queued, and the validated generation.
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
            final CoordinatorAgent agent = coordinator.agent();
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

                final AtomicReference<CompletableFuture<List<Short>>> leave = new AtomicReference<>();
                final AtomicReference<String> stepAtCheck = new AtomicReference<>();
                final AtomicReference<String> stepAtStore = new AtomicReference<>();
                final AtomicBoolean leaveQueuedAtStore = new AtomicBoolean();
                final AtomicBoolean leftBeforeStore = new AtomicBoolean();
                final AtomicInteger generationAtStore = new AtomicInteger(-2);
                final Runnable afterValidated = () ->
                {
                    coordinator.commitHooks = null; // this commit only
                    stepAtCheck.set(step(agent));
                    leave.set(agent.call(coordinator, (c, now) -> c.leave(GROUP, List.of(new GroupCoordinator.MemberIdentity(member.memberId(), null)))));
                };
                final Runnable beforeStored = () ->
                {
                    stepAtStore.set(step(agent));
                    leaveQueuedAtStore.set(agent.queued() > 0);
                    leftBeforeStore.set(leave.get().isDone());
                    generationAtStore.set(coordinator.describe(GROUP) == null ? -1 : generation(coordinator));
                };
                coordinator.commitHooks = new OffsetCommits.Hooks(afterValidated, beforeStored);
                final TopicPartition tp = new TopicPartition(TOPIC, 0);
                consumer.commitSync(Map.of(tp, new OffsetAndMetadata(7)));
                assertNotNull(stepAtCheck.get(), "the check's hook ran");
                assertNotNull(stepAtStore.get(), "the store's hook ran");
                assertEquals(stepAtCheck.get(), stepAtStore.get(),
                    "the check and the store ran in one call on the agent (the agent's thread and its calls run so far)");
                assertTrue(leaveQueuedAtStore.get(), "the leave was waiting for the agent when the commit was stored");
                assertFalse(leftBeforeStore.get(), "the member left between its commit's generation check and the store");
                assertEquals(member.generationId(), generationAtStore.get(), "the group's generation when the commit was stored");
                assertEquals(7, agent.call(coordinator, (c, now) -> c.committed(GROUP, TOPIC, 0)).get(20, TimeUnit.SECONDS).offset(), "stored");
                assertEquals(List.of(Errors.NONE), leave.get().get(20, TimeUnit.SECONDS), "the leave completed once the commit was done");
            }
        }
        finally
        {
            broker.close();
        }
    }

    /** Where a hook runs: the thread, and how many calls the agent had run before the one it is in. */
    private static String step(final CoordinatorAgent agent)
    {
        return Thread.currentThread().getName() + " in call " + agent.callsRun();
    }

    /** The group's generation (read on the agent, where the hook runs). */
    private static int generation(final GroupCoordinator coordinator)
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
