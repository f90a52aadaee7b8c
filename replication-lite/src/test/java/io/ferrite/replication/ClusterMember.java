package io.ferrite.replication;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.ferrite.testing.ChildJvm;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.server.fault.ProcessTerminatingFaultHandler;

/**
 * A child JVM of {@link ClusterControllerFailoverTest}: one node in combined mode, its {@link MetadataQuorum} voter
 * with Kafka's controller ({@link ClusterController}), its {@link ClusterView} and its {@link BrokerMembership}
 * (broker listener {@code 127.0.0.1:<9000 + id>}, nothing serves it). It prints, one a line: {@code STATE} (its
 * broker state), {@code ACTIVE} (whether its controller is the active one), {@code BROKER} and {@code PARTITION}
 * (each broker and partition of its image, when they change), {@code LOCAL} (its leader/follower changes) and
 * {@code COST} (its threads and RSS, once it is running). Args: {@code nodeId dataDir voters [quorum-only]}; with
 * {@code quorum-only} it starts the voter alone and prints {@code COST} once it knows a leader and 20 s have passed
 * (the README's baseline of what the controller, the view and the membership add).
 */
public final class ClusterMember
{
    private ClusterMember()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        ChildJvm.haltWithParent();
        final int nodeId = Integer.parseInt(args[0]);
        final Path data = Path.of(args[1]);
        final QuorumSettings settings = QuorumSettings.from(Map.of(QuorumSettings.NODE_ID, args[0],
            "process.roles", "broker,controller", "controller.quorum.voters", args[2],
            QuorumSettings.CLUSTER_ID, "RmVycml0ZVRlc3QwMDAwMQ"));
        final ProcessTerminatingFaultHandler fatal = new ProcessTerminatingFaultHandler.Builder().build();
        final MetadataQuorum quorum = MetadataQuorum.start(settings, data.resolve("quorum"), (offset, record) -> { });
        if (args.length > 3 && args[3].equals("quorum-only"))
        {
            final long start = System.nanoTime();
            while (quorum.leaderId().isEmpty() || System.nanoTime() - start < TimeUnit.SECONDS.toNanos(20))
            {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100)); // a measurement's pace
            }
            System.out.println("COST node=" + nodeId + " quorum-only " + ProcessCost.describe());
            LockSupport.park();
        }
        final ClusterController controller = ClusterController.start(quorum, Map.of(), fatal);
        final ClusterView view = ClusterView.start(quorum, new ClusterView.PartitionChanges()
        {
            @Override
            public void leads(final TopicPartition partition, final Uuid topicId, final PartitionRegistration state)
            {
                System.out.println("LOCAL node=" + nodeId + " leader " + partition + " epoch=" + state.leaderEpoch);
            }

            @Override
            public void follows(final TopicPartition partition, final Uuid topicId, final PartitionRegistration state)
            {
                System.out.println("LOCAL node=" + nodeId + " follower " + partition + " epoch=" + state.leaderEpoch);
            }
        }, fatal);
        Files.createDirectories(data.resolve("log"));
        final BrokerMembership membership = BrokerMembership.start(quorum, view,
            new InetSocketAddress("127.0.0.1", 9000 + nodeId), data.resolve("log"), Uuid.randomUuid(), Map.of());
        // as Kafka's broker fails its startup when its registration gives up (close's cancel is not a give-up)
        membership.unfenced().whenComplete((done, failure) ->
        {
            if (failure != null && !(failure instanceof java.util.concurrent.CancellationException))
            {
                fatal.handleFault("broker " + nodeId + " registration", failure);
            }
        });
        final Map<String, String> printed = new HashMap<>();
        MetadataImage last = null;
        boolean costPrinted = false;
        while (true)
        {
            print(printed, "STATE node=" + nodeId, "state=" + membership.state());
            print(printed, "ACTIVE node=" + nodeId, "active=" + controller.isActive());
            final MetadataImage image = view.image();
            if (image != last)
            {
                last = image;
                image.cluster().brokers().forEach((id, broker) ->
                    print(printed, "BROKER node=" + nodeId + " id=" + id, "fenced=" + broker.fenced() + " epoch=" + broker.epoch()));
                image.topics().topicsByName().forEach((name, topic) -> topic.partitions().forEach((index, p) ->
                    print(printed, "PARTITION node=" + nodeId + " " + name + "-" + index, "leader=" + p.leader +
                        " leaderEpoch=" + p.leaderEpoch + " partitionEpoch=" + p.partitionEpoch + " replicas=" +
                        ints(p.replicas) + " isr=" + ints(p.isr) + " elr=" + ints(p.elr))));
            }
            if (!costPrinted && !image.topics().isEmpty())
            {
                costPrinted = true;
                System.out.println("COST node=" + nodeId + " " + ProcessCost.describe());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // the pace of the report, not a wait for a state
        }
    }

    private static void print(final Map<String, String> printed, final String key, final String value)
    {
        if (!value.equals(printed.put(key, value)))
        {
            System.out.println(key + " " + value);
        }
    }

    private static String ints(final int[] values)
    {
        return Arrays.toString(values).replace(" ", "");
    }
}
