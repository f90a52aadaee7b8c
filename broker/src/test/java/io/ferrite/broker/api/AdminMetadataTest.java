package io.ferrite.broker.api;

import io.ferrite.broker.net.Acceptor;
import io.ferrite.broker.net.NetworkThread;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.wire.message.ApiKeys;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Metadata as kafka-clients' Admin reads it: cluster, topic list, topic descriptions. */
class AdminMetadataTest
{
    @TempDir
    Path dir;

    private LogManager logs;
    private TopicRegistry registry;
    private NetworkThread network;
    private Acceptor acceptor;
    private Admin admin;
    private int port;

    @BeforeEach
    void start() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        registry = new TopicRegistry(logs, 1);
        registry.load();
        final MetadataHandler metadata = new MetadataHandler(registry, 3, "ferrite-test-cluster");
        final Apis apis = new Apis().register(ApiKeys.METADATA, metadata);
        network = new NetworkThread(0, apis, 1 << 20);
        network.start();
        acceptor = new Acceptor(new InetSocketAddress("127.0.0.1", 0), new NetworkThread[] {network});
        port = acceptor.address().getPort();
        metadata.advertise("127.0.0.1", port);
        acceptor.start();
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port,
            AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000", AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000"));
    }

    @AfterEach
    void stop() throws Exception
    {
        if (admin != null)
        {
            admin.close();
        }
        acceptor.close();
        network.close();
        logs.close();
    }

    @Test
    void adminSeesTheNodeAndTheTopics() throws Exception
    {
        final Topic orders = registry.create("orders", 3, Map.of());
        registry.create("prices", 1, Map.of());

        final DescribeClusterResult cluster = admin.describeCluster();
        assertEquals("ferrite-test-cluster", cluster.clusterId().get(20, TimeUnit.SECONDS));
        final List<Node> nodes = List.copyOf(cluster.nodes().get(20, TimeUnit.SECONDS));
        assertEquals(1, nodes.size());
        assertEquals(3, nodes.get(0).id());
        assertEquals(port, nodes.get(0).port());
        assertEquals(3, cluster.controller().get(20, TimeUnit.SECONDS).id());

        assertEquals(Set.of("orders", "prices"), admin.listTopics().names().get(20, TimeUnit.SECONDS));

        final TopicDescription description = admin.describeTopics(List.of("orders")).allTopicNames().get(20, TimeUnit.SECONDS)
            .get("orders");
        assertEquals(new Uuid(orders.idMostSignificantBits, orders.idLeastSignificantBits), description.topicId());
        assertEquals(3, description.partitions().size());
        for (int p = 0; p < 3; p++)
        {
            assertEquals(p, description.partitions().get(p).partition());
            assertEquals(3, description.partitions().get(p).leader().id());
            assertEquals(List.of(3), description.partitions().get(p).isr().stream().map(Node::id).toList());
        }
    }

    @Test
    void anUnknownTopicIsUnknownTopicOrPartition()
    {
        final ExecutionException ex = assertThrows(ExecutionException.class,
            () -> admin.describeTopics(List.of("missing")).allTopicNames().get(20, TimeUnit.SECONDS));
        assertInstanceOf(UnknownTopicOrPartitionException.class, ex.getCause());
    }
}
