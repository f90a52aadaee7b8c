package io.ferrite.broker.cluster;

import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Three nodes: {@code __transaction_state} (50 partitions, the default) grown to 57 by CreatePartitions, which Kafka
 * 4.4 allows. Its transaction coordinator placed ids by the count fixed at start, for FindCoordinator and for itself
 * alike; Ferrite's placement read the live count while its coordinator kept the fixed one, so an id that 50 and 57
 * place on partitions led by different nodes was sent to a node that answered NOT_COORDINATOR for ever. With one count
 * for both, fixed at the topic's first sight, its transactions commit.
 */
@Tag("slow") // three broker JVMs: about a minute
final class TxnStateGrownPartitionsTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(120);
    private static final String TOPIC = "grown-events";
    private static final String TXN_STATE = "__transaction_state";
    private static final int BEFORE = 50;
    private static final int AFTER = 57;

    @RegisterExtension
    final ThreeNodes cluster = new ThreeNodes();

    @Test
    void transactionsCommitAfterTheTransactionStateTopicIsGrown() throws Exception
    {
        cluster.start();
        try (Admin admin = cluster.admin(1))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)3))).all().get(60, TimeUnit.SECONDS);
        }
        commit("first-txn"); // FindCoordinator has the controller create __transaction_state
        final TopicDescription grown;
        try (Admin admin = cluster.admin(1))
        {
            Await.awaitValue(() -> describe(admin), t -> t != null && t.partitions().size() == BEFORE
                && t.partitions().stream().allMatch(p -> p.leader() != null), DEADLINE, () -> TXN_STATE + " with leaders");
            admin.createPartitions(Map.of(TXN_STATE, NewPartitions.increaseTo(AFTER))).all().get(60, TimeUnit.SECONDS);
            grown = Await.awaitValue(() -> describe(admin), t -> t != null && t.partitions().size() == AFTER
                && t.partitions().stream().allMatch(p -> p.leader() != null), DEADLINE, () -> TXN_STATE + " grown, with leaders");
        }
        // ids whose partition under 50 and under 57 are led by different nodes: the locator and the coordinator
        // disagreeing on the count sends them where they are not coordinated
        final List<String> ids = new ArrayList<>();
        for (int i = 0; i < 10_000 && ids.size() < 3; i++)
        {
            final String id = "grown-txn-" + i;
            final int before = CoordinatorTopic.partitionFor(id, BEFORE);
            final int after = CoordinatorTopic.partitionFor(id, AFTER);
            if (before != after && leader(grown, before) != leader(grown, after))
            {
                ids.add(id);
            }
        }
        assertFalse(ids.isEmpty(), "ids placed apart by 50 and 57 on different leaders: " + grown);
        for (final String id : ids)
        {
            try
            {
                commit(id);
            }
            catch (final KafkaException ex)
            {
                throw new AssertionError(id + " (partition " + CoordinatorTopic.partitionFor(id, BEFORE) + " of " + BEFORE + ", " +
                    CoordinatorTopic.partitionFor(id, AFTER) + " of " + AFTER + ") did not commit after the growth: " + grown, ex);
            }
        }
    }

    private void commit(final String id)
    {
        try (KafkaProducer<String, String> producer = ThreeNodes.transactionalProducer(cluster.bootstrap(), id))
        {
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, 0, id, id));
            producer.commitTransaction();
        }
    }

    private static int leader(final TopicDescription topic, final int partition)
    {
        return topic.partitions().stream().filter(p -> p.partition() == partition).findFirst().orElseThrow().leader().id();
    }

    private static TopicDescription describe(final Admin admin) throws InterruptedException
    {
        try
        {
            return admin.describeTopics(List.of(TXN_STATE)).allTopicNames().get(30, TimeUnit.SECONDS).get(TXN_STATE);
        }
        catch (final java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException ex)
        {
            return null;
        }
    }
}
