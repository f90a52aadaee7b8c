package io.ferrite.replication;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.image.LocalReplicaChanges;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.TopicsDelta;
import org.apache.kafka.image.MetadataProvenance;
import org.apache.kafka.image.TopicImage;
import org.apache.kafka.image.loader.LoaderManifest;
import org.apache.kafka.image.loader.MetadataLoader;
import org.apache.kafka.image.loader.metrics.MetadataLoaderMetrics;
import org.apache.kafka.image.publisher.MetadataPublisher;
import org.apache.kafka.metadata.BrokerRegistration;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.raft.RaftClient;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.fault.FaultHandler;

/**
 * A node's view of the cluster's metadata: Kafka's {@link MetadataLoader} fed by this node's {@link MetadataQuorum}
 * replays the metadata log into Kafka's {@link MetadataImage} (brokers with their endpoints and fencing, topics,
 * partitions with leader, leader epoch, partition epoch, replicas, ISR and ELR, configs), published here once the
 * loader has caught up with the quorum's high watermark. Every node has one, voter or not.
 *
 * <p>{@link PartitionChanges} hears what changed for this node's replicas, as Kafka's
 * {@code ReplicaManager.applyDelta} sees it ({@code TopicsDelta.localChanges}): a partition this node leads or
 * follows changed (new, a new leader epoch, or any other change of its partition epoch: ISR, ELR, replicas), or this
 * node stopped being a replica. Calls come on the loader's thread, in log order, and
 * must not block it.
 *
 * <p>Threads: the loader's {@code view-N-metadata-loader-event-handler}.
 */
public final class ClusterView implements AutoCloseable
{
    /** What a node does when its replicas change; on the loader's thread, which it must not block. */
    public interface PartitionChanges
    {
        /**
         * This node leads {@code partition}, which is new or whose partition epoch moved: Kafka's
         * {@code LocalReplicaChanges.leaders()}. Not only a transition: it is called again at the same
         * {@code state.leaderEpoch} for every other change of the partition (ISR shrink or expand, ELR, a reassignment
         * step), so compare {@code state.leaderEpoch} with the epoch you lead at before restarting anything.
         */
        void leads(TopicPartition partition, Uuid topicId, PartitionRegistration state);

        /**
         * This node holds a replica of {@code partition} that {@code state.leader} leads (or none: -1), and the
         * partition is new or its partition epoch moved: Kafka's {@code LocalReplicaChanges.followers()}. As with
         * {@link #leads}, also at an unchanged {@code state.leaderEpoch} (an ISR change, ...).
         */
        void follows(TopicPartition partition, Uuid topicId, PartitionRegistration state);

        /** This node no longer holds a replica of {@code partition} (its topic was deleted or it was moved away). */
        default void stopped(final TopicPartition partition)
        {
        }

        /**
         * {@code topic}'s config overrides in the image changed (or were first seen): {@code configs} is the whole new
         * map, empty when it has none left. Told before the partitions' changes of the same delta, so a topic created
         * with configs has them when its partitions are first led or followed.
         */
        default void topicConfigs(final String topic, final Map<String, String> configs)
        {
        }

        /**
         * A broker resource's configs in the image changed (or were first seen): {@code broker} is a broker id, or ""
         * for the cluster default (Kafka's BROKER ConfigRecords); {@code configs} the whole new map, empty when none is
         * left. Told with the topics' configs, before the brokers' and the partitions' changes of the same delta.
         */
        default void brokerConfigs(final String broker, final Map<String, String> configs)
        {
        }

        /**
         * The image's brokers changed (registered, fenced or unfenced, in controlled shutdown, a new broker epoch):
         * {@code brokers} is the whole new set, every registered broker by id. Told before the partitions' changes of
         * the same delta (Kafka's controller fences a broker and takes it out of the ISRs in one batch).
         */
        default void brokers(final Map<Integer, BrokerRegistration> brokers)
        {
        }

        /**
         * The first image this node publishes, {@code image} (the loader caught up with the quorum's high watermark),
         * told once, before any of its changes: Kafka's {@code BrokerMetadataPublisher.initializeManagers} runs there.
         */
        default void firstImage(final MetadataImage image)
        {
        }
    }

    private final int nodeId;
    private final RaftClient<ApiMessageAndVersion> raftClient;
    private final MetadataLoader loader;
    private final MetadataLoaderMetrics metrics;
    private final PartitionChanges changes;
    private volatile MetadataImage image = MetadataImage.EMPTY;

    private ClusterView(final MetadataQuorum quorum, final PartitionChanges changes, final FaultHandler faults)
    {
        this.nodeId = quorum.nodeId();
        this.raftClient = quorum.raftManager().client();
        this.changes = changes;
        this.metrics = new MetadataLoaderMetrics(Optional.empty(), elapsedNs -> { }, batchSize -> { },
            new AtomicReference<>(MetadataProvenance.EMPTY));
        this.loader = new MetadataLoader.Builder()
            .setNodeId(nodeId)
            .setThreadNamePrefix("view-" + nodeId + "-")
            .setFaultHandler(faults)
            .setHighWaterMarkAccessor(raftClient::highWatermark)
            .setMetrics(metrics)
            .build();
    }

    /** Starts replaying {@code quorum}'s log; {@code faults} hears a record the loader cannot apply (fatal in Kafka). */
    public static ClusterView start(final MetadataQuorum quorum, final PartitionChanges changes, final FaultHandler faults)
    {
        final ClusterView view = new ClusterView(quorum, changes, faults);
        view.raftClient.register(view.loader);
        view.loader.installPublishers(List.of(view.new Publisher()));
        return view;
    }

    /** The last image published (empty before the loader caught up). */
    public MetadataImage image()
    {
        return image;
    }

    /** The offset of the last record in the published image, -1 before the first. */
    public long lastAppliedOffset()
    {
        return loader.lastAppliedOffset();
    }

    /** Every registered broker, fenced or not, with its endpoints ({@link BrokerRegistration#listeners()}). */
    public Map<Integer, BrokerRegistration> brokers()
    {
        return image.cluster().brokers();
    }

    /** The live brokers: registered and not fenced. */
    public List<BrokerRegistration> liveBrokers()
    {
        return image.cluster().brokers().values().stream().filter(broker -> !broker.fenced()).toList();
    }

    /** {@code topic}'s id and partitions, if the image holds it. */
    public Optional<TopicImage> topic(final String topic)
    {
        return Optional.ofNullable(image.topics().getTopic(topic));
    }

    /** A partition's state: leader, leader epoch, partition epoch, replicas, ISR, ELR. */
    public Optional<PartitionRegistration> partition(final String topic, final int partition)
    {
        return topic(topic).map(found -> found.partitions().get(partition));
    }

    @Override
    public void close() throws Exception
    {
        raftClient.unregister(loader);
        loader.beginShutdown();
        loader.close();
        metrics.close();
    }

    /** What {@code delta} changed for {@code nodeId}'s replicas, told to {@code changes}: deletes first. */
    static void tell(final int nodeId, final TopicsDelta delta, final PartitionChanges changes)
    {
        final LocalReplicaChanges local = delta.localChanges(nodeId);
        local.deletes().forEach(changes::stopped);
        local.leaders().forEach((partition, info) -> changes.leads(partition, info.topicId(), info.partition()));
        local.followers().forEach((partition, info) -> changes.follows(partition, info.topicId(), info.partition()));
    }

    /**
     * What {@code delta}, which made {@code newImage}, changed for {@code nodeId}, told to {@code changes} in this
     * order: topic and broker configs, the brokers (when any changed), then the partitions' changes ({@link #tell(int, TopicsDelta,
     * PartitionChanges)}).
     */
    static void tell(final int nodeId, final MetadataDelta delta, final MetadataImage newImage, final PartitionChanges changes)
    {
        if (delta.configsDelta() != null)
        {
            for (final org.apache.kafka.common.config.ConfigResource resource : delta.configsDelta().changes().keySet())
            {
                switch (resource.type())
                {
                    case TOPIC -> changes.topicConfigs(resource.name(), newImage.configs().configMapForResource(resource));
                    case BROKER -> changes.brokerConfigs(resource.name(), newImage.configs().configMapForResource(resource));
                    default -> { }
                }
            }
        }
        if (delta.clusterDelta() != null)
        {
            changes.brokers(newImage.cluster().brokers());
        }
        if (delta.topicsDelta() != null)
        {
            tell(nodeId, delta.topicsDelta(), changes);
        }
    }

    private final class Publisher implements MetadataPublisher
    {
        @Override
        public String name()
        {
            return "ferrite-cluster-view-" + nodeId;
        }

        @Override
        public void onMetadataUpdate(final MetadataDelta delta, final MetadataImage newImage, final LoaderManifest manifest)
        {
            final boolean first = image == MetadataImage.EMPTY;
            image = newImage; // first: a listener that looks at the view sees the state it hears of
            if (first)
            {
                changes.firstImage(newImage);
            }
            tell(nodeId, delta, newImage, changes);
        }
    }
}
