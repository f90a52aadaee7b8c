package io.ferrite.client;

import io.ferrite.testing.Await;
import io.ferrite.testing.BrokerNode;
import io.ferrite.testing.DroppingProxy;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * {@link ProducerInteropContract} and the other contracts against Apache Kafka 4.4 in a child JVM (single-node KRaft,
 * from the Maven jars), spawned by {@link KafkaInteropNode} when the test plan starts (its configs are there);
 * {@link IdempotentRetriesContract} through the node's proxy, on the same node. The broker's directory and log stay on
 * a failure.
 */
class KafkaInteropTest extends ProducerInteropContract implements ConsumerInteropContract, GroupOffsetsInteropContract,
    ProducerErrorsContract,
    GroupMembershipInteropContract,
    IdempotentRetriesContract
{
    static BrokerNode kafka;

    @BeforeAll
    static void start() throws Exception
    {
        kafka = KafkaInteropNode.take().awaitReady();
    }

    @AfterAll
    static void stop() throws Exception
    {
        KafkaInteropNode.stop();
    }

    @Override
    public DroppingProxy proxy()
    {
        return KafkaInteropNode.proxy();
    }

    @Override
    public String bootstrap()
    {
        return kafka.bootstrap();
    }

    @Override
    public void createTopic(final String name, final int partitions) throws Exception
    {
        createTopic(bootstrap(), name, partitions, Map.of());
    }

    @Override
    public void createTopic(final String name, final int partitions, final Map<String, String> configs) throws Exception
    {
        createTopic(bootstrap(), name, partitions, configs);
    }

    /** Creates the topic on Kafka at {@code bootstrap} and waits until its leader is elected (Kafka answers CreateTopics before that). */
    static void createTopic(final String bootstrap, final String name, final int partitions, final Map<String, String> configs)
        throws Exception
    {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap)))
        {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short)1).configs(configs))).all().get(60, TimeUnit.SECONDS);
            Await.await(() ->
            {
                try
                {
                    return admin.describeTopics(Set.of(name)).allTopicNames().get().get(name).partitions().stream()
                        .allMatch(p -> p.leader() != null);
                }
                catch (final java.util.concurrent.ExecutionException notServedYet)
                {
                    return false; // UNKNOWN_TOPIC_OR_PARTITION until the broker applied the creation's metadata
                }
            }, Duration.ofSeconds(60), "topic " + name + " with a leader");
            // The metadata can name the leader before its replica manager serves the partition: a produce then gets
            // NOT_LEADER_OR_FOLLOWER, which an acks=0 producer never sees (its records are lost). ListOffsets is
            // served by the same check, and Admin retries it until the partition is online.
            final Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> latest = new java.util.HashMap<>();
            for (int p = 0; p < partitions; p++)
            {
                latest.put(new org.apache.kafka.common.TopicPartition(name, p), org.apache.kafka.clients.admin.OffsetSpec.latest());
            }
            admin.listOffsets(latest).all().get(60, TimeUnit.SECONDS);
        }
    }
}
