package io.ferrite.replication;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import io.ferrite.testing.Await;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.CreateTopicsResponseData.CreatableTopicResult;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.metadata.BrokerState;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.server.fault.LoggingFaultHandler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * One voter with Kafka's controller on it: the node registers as a broker and is unfenced, a client creates a
 * topic through the controller listener (CreateTopics, as a broker forwards it), and the node's view holds it with this node as leader and hears it.
 */
class ClusterControllerSingleNodeTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @Test
    void aNodeRegistersIsUnfencedAndLeadsATopicCreatedThroughItsController() throws Exception
    {
        final int port;
        try (ServerSocket probe = new ServerSocket(0))
        {
            port = probe.getLocalPort();
        }
        final QuorumSettings settings = QuorumSettings.from(Map.of(QuorumSettings.NODE_ID, "1",
            "controller.quorum.voters", "1@127.0.0.1:" + port, QuorumSettings.CLUSTER_ID, "RmVycml0ZVRlc3QwMDAwMQ"));
        final LoggingFaultHandler faults = new LoggingFaultHandler("test", () -> { });
        final ConcurrentLinkedQueue<String> heard = new ConcurrentLinkedQueue<>();
        try (MetadataQuorum quorum = MetadataQuorum.start(settings, dir.resolve("quorum"), (offset, record) -> { });
             ClusterController controller = ClusterController.start(quorum, Map.of(), faults);
             ClusterView view = ClusterView.start(quorum, new ClusterView.PartitionChanges()
             {
                 @Override
                 public void becameLeader(final TopicPartition partition, final Uuid topicId, final PartitionRegistration state)
                 {
                     heard.add("leader " + partition + " epoch " + state.leaderEpoch);
                 }

                 @Override
                 public void becameFollower(final TopicPartition partition, final Uuid topicId, final PartitionRegistration state)
                 {
                     heard.add("follower " + partition + " epoch " + state.leaderEpoch);
                 }
             }, faults);
             BrokerMembership membership = BrokerMembership.start(quorum, view,
                 new InetSocketAddress("127.0.0.1", 9092), dir.resolve("data"), Uuid.randomUuid(), Map.of()))
        {
            membership.unfenced().get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
            assertEquals(BrokerState.RUNNING, membership.state());
            Await.await(() -> view.liveBrokers().size() == 1, DEADLINE, () -> "broker 1 unfenced in the view: " + view.brokers());
            assertEquals(9092, view.brokers().get(1).listeners().get("PLAINTEXT").port());

            final CreatableTopicResult created = ControllerRpc.createTopic(
                List.of(new InetSocketAddress("127.0.0.1", port)), "orders", 2, (short)1);
            assertEquals(Errors.NONE.code(), created.errorCode(), created::errorMessage);
            final PartitionRegistration partition = Await.awaitValue(() -> view.partition("orders", 1).orElse(null),
                found -> found != null, DEADLINE, () -> "orders-1 in the view");
            assertEquals(1, partition.leader);
            assertArrayEquals(new int[] {1}, partition.replicas);
            assertArrayEquals(new int[] {1}, partition.isr);
            Await.await(() -> heard.size() == 2, DEADLINE, () -> "both partitions heard as led: " + heard);
            assertEquals(List.of("leader orders-0 epoch 0", "leader orders-1 epoch 0"), heard.stream().sorted().toList());
        }
    }
}
