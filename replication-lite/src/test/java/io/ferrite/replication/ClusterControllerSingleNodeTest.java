package io.ferrite.replication;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.ferrite.testing.Await;
import io.ferrite.testing.LoopbackPorts;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.internals.Topic;
import org.apache.kafka.common.message.BrokerHeartbeatRequestData;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData.CreatableTopicResult;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsRequestData.DeleteTopicState;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.message.ListPartitionReassignmentsRequestData;
import org.apache.kafka.common.requests.BrokerHeartbeatRequest;
import org.apache.kafka.common.requests.BrokerHeartbeatResponse;
import org.apache.kafka.common.requests.CreatePartitionsRequest;
import org.apache.kafka.common.requests.ElectLeadersRequest;
import org.apache.kafka.common.requests.ElectLeadersResponse;
import org.apache.kafka.common.requests.ListPartitionReassignmentsRequest;
import org.apache.kafka.common.requests.ListPartitionReassignmentsResponse;
import org.apache.kafka.common.requests.CreatePartitionsResponse;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.DeleteTopicsResponse;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.metadata.NoOpRecord;
import org.apache.kafka.metadata.BrokerState;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.server.fault.FaultHandler;
import org.apache.kafka.server.fault.FaultHandlerException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One voter with Kafka's controller on it: the node registers as a broker and is unfenced, a client creates a
 * topic through the controller listener (CreateTopics, as a broker forwards it), and the node's view holds it with
 * this node as leader and hears it; CreatePartitions grows it, ElectLeaders finds no election needed,
 * ListPartitionReassignments lists none, and DeleteTopics removes it; what Kafka's ControllerApis refuses is
 * refused. A topic config Kafka refuses is refused, a heartbeat past its deadline times out, MetadataQuorum.append
 * beside the controller is refused; a listener with no controller answers NOT_CONTROLLER. A broker that connected
 * before the controller started registers; one whose registration gives up sees unfenced() fail. Any fault of the
 * controller's fatal or the view's handler fails the test.
 */
class ClusterControllerSingleNodeTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    /** The controller's fatal and the view's fault handler: a fault fails the test (it would stop a node). */
    private final RecordingFaults faults = new RecordingFaults();

    @AfterEach
    void noFault()
    {
        assertEquals(List.of(), List.copyOf(faults.heard), "faults that would have stopped the node");
    }

    @Test
    void aNodeRegistersIsUnfencedAndLeadsATopicCreatedThroughItsController() throws Exception
    {
        final int port = LoopbackPorts.take();
        final QuorumSettings settings = settings(port);
        final ConcurrentLinkedQueue<String> heard = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<TopicPartition> stopped = new ConcurrentLinkedQueue<>();
        try (MetadataQuorum quorum = MetadataQuorum.start(settings, dir.resolve("quorum"), (offset, record) -> { });
             ClusterController controller = ClusterController.start(quorum, Map.of(), faults);
             ClusterView view = ClusterView.start(quorum, new ClusterView.PartitionChanges()
             {
                 @Override
                 public void leads(final TopicPartition partition, final Uuid topicId, final PartitionRegistration state)
                 {
                     heard.add("leader " + partition + " epoch " + state.leaderEpoch);
                 }

                 @Override
                 public void follows(final TopicPartition partition, final Uuid topicId, final PartitionRegistration state)
                 {
                     heard.add("follower " + partition + " epoch " + state.leaderEpoch);
                 }

                 @Override
                 public void stopped(final TopicPartition partition)
                 {
                     stopped.add(partition);
                 }
             }, faults);
             BrokerMembership membership = BrokerMembership.start(quorum, view,
                 new InetSocketAddress("127.0.0.1", 9092), dir.resolve("data"), Uuid.randomUuid(), Map.of()))
        {
            membership.unfenced().get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
            // Kafka's lifecycle manager completes the future before it moves its state from RECOVERY to RUNNING
            Await.await(() -> membership.state() == BrokerState.RUNNING, DEADLINE, () -> "RUNNING, not " + membership.state());
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

            final InetSocketAddress listener = new InetSocketAddress("127.0.0.1", port);
            final CreatePartitionsResponse grown = (CreatePartitionsResponse)ControllerRpc.send(listener,
                new CreatePartitionsRequest.Builder(new CreatePartitionsRequestData().setTimeoutMs(30_000)
                    .setTopics(new CreatePartitionsRequestData.CreatePartitionsTopicCollection(List.of(
                        new CreatePartitionsRequestData.CreatePartitionsTopic().setName("orders").setCount(3).setAssignments(null)).iterator())))
                    .build());
            assertEquals(Errors.NONE.code(), grown.data().results().get(0).errorCode());
            Await.await(() -> view.partition("orders", 2).isPresent(), DEADLINE, "orders-2 in the view");

            final ElectLeadersResponse elected = (ElectLeadersResponse)ControllerRpc.send(listener,
                new ElectLeadersRequest.Builder(ElectionType.PREFERRED, List.of(new TopicPartition("orders", 0)), 30_000).build());
            assertEquals(Errors.ELECTION_NOT_NEEDED.code(),
                elected.data().replicaElectionResults().get(0).partitionResult().get(0).errorCode(), "node 1 already leads orders-0");
            final ListPartitionReassignmentsResponse reassignments = (ListPartitionReassignmentsResponse)ControllerRpc.send(listener,
                new ListPartitionReassignmentsRequest.Builder(new ListPartitionReassignmentsRequestData()
                    .setTimeoutMs(30_000).setTopics(null)).build());
            assertEquals(Errors.NONE.code(), reassignments.data().errorCode());
            assertEquals(List.of(), reassignments.data().topics());

            requestsKafkasControllerApisRefusesAreRefused(listener, view.topic("orders").orElseThrow().id());

            final DeleteTopicsResponse deleted = (DeleteTopicsResponse)ControllerRpc.send(listener,
                new DeleteTopicsRequest.Builder(new DeleteTopicsRequestData().setTimeoutMs(30_000)
                    .setTopics(List.of(new DeleteTopicState().setName("orders"), new DeleteTopicState().setName("absent"))))
                    .build());
            assertEquals(Errors.NONE.code(), deleted.data().responses().find("orders").errorCode());
            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(), deleted.data().responses().find("absent").errorCode());
            Await.await(() -> view.topic("orders").isEmpty() && stopped.size() == 3, DEADLINE,
                () -> "orders gone from the view and its three partitions heard stopped: " + stopped);
            // the view has applied the log up to the delete, so it would hold any topic a refused request made
            assertEquals(Optional.empty(), view.topic("twice"));
            assertEquals(Optional.empty(), view.topic(Topic.CLUSTER_METADATA_TOPIC_NAME));
        }
    }

    @Test
    void aBrokerWhoseConnectionWasMadeBeforeTheControllerStartedRegistersOnceItHas() throws Exception
    {
        final int port = LoopbackPorts.take();
        try (MetadataQuorum quorum = MetadataQuorum.start(settings(port), dir.resolve("quorum"), (offset, record) -> { });
             ClusterView view = ClusterView.start(quorum, new ClusterView.PartitionChanges()
             {
                 @Override
                 public void leads(final TopicPartition partition, final Uuid topicId, final PartitionRegistration state)
                 {
                 }

                 @Override
                 public void follows(final TopicPartition partition, final Uuid topicId, final PartitionRegistration state)
                 {
                 }
             }, faults))
        {
            final BrokerMembership membership = BrokerMembership.start(quorum, view,
                new InetSocketAddress("127.0.0.1", 9092), dir.resolve("data"), Uuid.randomUuid(), Map.of());
            ClusterController controller = null;
            try
            {
                // the channel's first answer on a connection is ApiVersions': after it, the client knows which APIs it may send
                Await.await(() -> responsesReceived(membership) >= 1, DEADLINE, "the broker's channel to have an answer");
                assertEquals(BrokerState.STARTING, membership.state(), "no controller yet, so not registered");
                controller = ClusterController.start(quorum, Map.of(), faults);
                membership.unfenced().get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
                Await.await(() -> view.liveBrokers().size() == 1, DEADLINE, () -> "broker 1 unfenced in the view: " + view.brokers());
            }
            finally
            {
                membership.close(); // first: its controlled shutdown needs the controller
                if (controller != null)
                {
                    controller.close();
                }
            }
        }
    }

    @Test
    void aRegistrationThatGivesUpFailsUnfencedAndSaysWhy() throws Exception
    {
        final int port = LoopbackPorts.take();
        // three voters, only node 1 runs: no raft leader, so no controller to register with
        final QuorumSettings settings = QuorumSettings.from(Map.of(QuorumSettings.NODE_ID, "1", "controller.quorum.voters",
            "1@127.0.0.1:" + port + ",2@127.0.0.1:" + LoopbackPorts.take() + ",3@127.0.0.1:" + LoopbackPorts.take(),
            QuorumSettings.CLUSTER_ID, "RmVycml0ZVRlc3QwMDAwMQ"));
        try (MetadataQuorum quorum = MetadataQuorum.start(settings, dir.resolve("quorum"), (offset, record) -> { });
             ClusterView view = ClusterView.start(quorum, new ClusterView.PartitionChanges()
             {
                 @Override
                 public void leads(final TopicPartition partition, final Uuid topicId, final PartitionRegistration state)
                 {
                 }

                 @Override
                 public void follows(final TopicPartition partition, final Uuid topicId, final PartitionRegistration state)
                 {
                 }
             }, faults);
             BrokerMembership membership = BrokerMembership.start(quorum, view, new InetSocketAddress("127.0.0.1", 9092),
                 dir.resolve("data"), Uuid.randomUuid(), Map.of("initial.broker.registration.timeout.ms", "2000")))
        {
            final ExecutionException gaveUp = assertThrows(ExecutionException.class,
                () -> membership.unfenced().get(DEADLINE.toSeconds(), TimeUnit.SECONDS));
            assertEquals(IllegalStateException.class, gaveUp.getCause().getClass(), gaveUp::toString);
            assertTrue(gaveUp.getCause().getMessage().contains("initial.broker.registration.timeout.ms (2000 ms)"),
                gaveUp.getCause()::getMessage);
            assertEquals(BrokerState.SHUTTING_DOWN, membership.state());
        }
    }

    private static double responsesReceived(final BrokerMembership membership)
    {
        double received = 0;
        for (final Map.Entry<MetricName, ? extends Metric> metric : membership.channelMetrics().metrics().entrySet())
        {
            if (metric.getKey().name().equals("response-total"))
            {
                received += ((Number)metric.getValue().metricValue()).doubleValue();
            }
        }
        return received;
    }

    @Test
    void aTopicConfigKafkaRefusesIsRefusedAndAListenerWithoutAControllerAnswersNotController() throws Exception
    {
        final int port = LoopbackPorts.take();
        final InetSocketAddress listener = new InetSocketAddress("127.0.0.1", port);
        try (MetadataQuorum quorum = MetadataQuorum.start(settings(port), dir.resolve("quorum"), (offset, record) -> { }))
        {
            Await.await(quorum::isLeader, DEADLINE, "node 1 to lead its own quorum");
            assertEquals(Errors.NOT_CONTROLLER.code(), ControllerRpc.createTopic(List.of(listener), "orders", 1, (short)1).errorCode());
            // a heartbeat's deadline is half of this (Kafka's ControllerApis): 0 ms, so any heartbeat is too late
            try (ClusterController controller = ClusterController.start(quorum, Map.of("broker.heartbeat.interval.ms", "1"), faults))
            {
                Await.await(controller::isActive, DEADLINE, "the controller to be active");
                final BrokerHeartbeatResponse late = (BrokerHeartbeatResponse)ControllerRpc.send(listener,
                    new BrokerHeartbeatRequest.Builder(new BrokerHeartbeatRequestData().setBrokerId(7).setBrokerEpoch(1)).build());
                assertEquals(Errors.REQUEST_TIMED_OUT, Errors.forCode(late.data().errorCode()));
                final ExecutionException refusedAppend = assertThrows(ExecutionException.class, () -> quorum.append(List.of(
                    new ApiMessageAndVersion(new NoOpRecord(), (short)0))).get(DEADLINE.toSeconds(), TimeUnit.SECONDS));
                assertEquals(IllegalStateException.class, refusedAppend.getCause().getClass(), refusedAppend::toString);
                final CreateTopicsRequestData.CreatableTopicConfigCollection configs = new CreateTopicsRequestData.CreatableTopicConfigCollection();
                configs.add(new CreateTopicsRequestData.CreatableTopicConfig().setName("min.insync.replicas").setValue("many"));
                final CreateTopicsRequestData.CreatableTopicCollection topics = new CreateTopicsRequestData.CreatableTopicCollection();
                topics.add(new CreateTopicsRequestData.CreatableTopic().setName("orders").setNumPartitions(1)
                    .setReplicationFactor((short)-1).setConfigs(configs));
                final CreateTopicsResponse refused = (CreateTopicsResponse)ControllerRpc.send(listener,
                    new CreateTopicsRequest.Builder(new CreateTopicsRequestData().setTopics(topics).setTimeoutMs(30_000)).build());
                assertEquals(Errors.INVALID_CONFIG.code(), refused.data().topics().find("orders").errorCode(),
                    () -> refused.data().topics().find("orders").errorMessage());
            }
            assertEquals(Errors.NOT_CONTROLLER.code(), ControllerRpc.createTopic(List.of(listener), "orders", 1, (short)1).errorCode(),
                "a closed controller no longer serves the listener");
        }
    }

    /**
     * What Kafka's ControllerApis refuses before the controller sees it (the controller itself would write a record
     * twice and halt on replaying it): names or ids given twice, a name with its own id, {@code __cluster_metadata}.
     */
    private static void requestsKafkasControllerApisRefusesAreRefused(final InetSocketAddress listener, final Uuid ordersId)
        throws Exception
    {
        final CreateTopicsRequestData.CreatableTopicCollection topics = new CreateTopicsRequestData.CreatableTopicCollection();
        for (final String name : List.of("twice", "twice", Topic.CLUSTER_METADATA_TOPIC_NAME))
        {
            topics.add(new CreateTopicsRequestData.CreatableTopic().setName(name).setNumPartitions(1).setReplicationFactor((short)1));
        }
        assertEquals(3, topics.size(), "the request carries the name twice");
        final CreateTopicsResponse created = (CreateTopicsResponse)ControllerRpc.send(listener,
            new CreateTopicsRequest.Builder(new CreateTopicsRequestData().setTopics(topics).setTimeoutMs(30_000)).build());
        assertEquals(List.of("__cluster_metadata INVALID_REQUEST Creation of internal topic __cluster_metadata is prohibited.",
                "twice INVALID_REQUEST Duplicate topic name."),
            created.data().topics().stream().map(topic -> topic.name() + " " + Errors.forCode(topic.errorCode()) + " " +
                topic.errorMessage()).sorted().toList());

        final CreatePartitionsRequestData.CreatePartitionsTopicCollection grow = new CreatePartitionsRequestData.CreatePartitionsTopicCollection();
        grow.add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName("orders").setCount(4).setAssignments(null));
        grow.add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName("orders").setCount(5).setAssignments(null));
        final CreatePartitionsResponse grown = (CreatePartitionsResponse)ControllerRpc.send(listener,
            new CreatePartitionsRequest.Builder(new CreatePartitionsRequestData().setTimeoutMs(30_000).setTopics(grow)).build());
        assertEquals(List.of("orders INVALID_REQUEST"), grown.data().results().stream()
            .map(result -> result.name() + " " + Errors.forCode(result.errorCode())).toList());

        for (final List<DeleteTopicState> twice : List.of(
            List.of(new DeleteTopicState().setTopicId(ordersId), new DeleteTopicState().setTopicId(ordersId)),
            List.of(new DeleteTopicState().setName("orders"), new DeleteTopicState().setTopicId(ordersId))))
        {
            final DeleteTopicsResponse refused = (DeleteTopicsResponse)ControllerRpc.send(listener,
                new DeleteTopicsRequest.Builder(new DeleteTopicsRequestData().setTimeoutMs(30_000).setTopics(twice)).build());
            assertEquals(List.of(ordersId + " INVALID_REQUEST"), refused.data().responses().stream()
                .map(result -> result.topicId() + " " + Errors.forCode(result.errorCode())).toList(), twice::toString);
        }
    }

    /** Records every fault; the test's {@code @AfterEach} asserts none came. */
    private static final class RecordingFaults implements FaultHandler
    {
        final ConcurrentLinkedQueue<String> heard = new ConcurrentLinkedQueue<>();

        @Override
        public RuntimeException handleFault(final String failureMessage, final Throwable cause)
        {
            heard.add(failureMessage + (cause == null ? "" : ": " + cause));
            return new FaultHandlerException(failureMessage, cause);
        }
    }

    private static QuorumSettings settings(final int port)
    {
        return QuorumSettings.from(Map.of(QuorumSettings.NODE_ID, "1", "controller.quorum.voters", "1@127.0.0.1:" + port,
            QuorumSettings.CLUSTER_ID, "RmVycml0ZVRlc3QwMDAwMQ"));
    }
}
