package io.ferrite.replication;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import kafka.server.ControllerConfigurationValidator;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.controller.QuorumController;
import org.apache.kafka.controller.QuorumFeatures;
import org.apache.kafka.controller.metrics.QuorumControllerMetrics;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;
import org.apache.kafka.metadata.placement.StripedReplicaPlacer;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.server.fault.FaultHandler;
import org.apache.kafka.server.fault.LoggingFaultHandler;

/**
 * The cluster's controller on a node's voter: Kafka 4.4's own {@link QuorumController} (what Kafka's controllers
 * run) on the {@code RaftClient} of this node's {@link MetadataQuorum}, started on every voter (combined mode,
 * {@code process.roles=broker,controller}); the one on the raft leader is active, the others answer
 * NOT_CONTROLLER. It decides membership and leadership as Kafka does: broker registration, heartbeats and fencing
 * ({@code broker.session.timeout.ms}), rack-unaware placement, leader election when a broker is lost, ISR changes
 * through AlterPartition, leader and partition epochs, eligible leader replicas (KIP-966), unclean election,
 * ElectLeaders, reassignment, CreateTopics / DeleteTopics / CreatePartitions and configs. Its requests arrive on the
 * controller listener ({@link RaftInbound}) through {@link ControllerRequests}.
 *
 * <p>An empty metadata log is bootstrapped by the first active controller with Kafka's records for
 * metadata.version {@link MetadataVersion#LATEST_PRODUCTION} and every production feature at its default level
 * there (what {@code kafka-storage format} would put in the bootstrap checkpoint), so no formatting step is needed.
 *
 * <p>With a controller started, only the controller appends to the metadata log: {@link MetadataQuorum#append}
 * is refused from then on (both would claim the same offsets).
 *
 * <p>Threads: {@code controller-N-event-handler} (the controller's event queue, which never touches a socket: its
 * answers complete futures that {@link RaftInbound}'s connection threads write).
 */
public final class ClusterController implements AutoCloseable
{
    private final MetadataQuorum quorum;
    private final QuorumController controller;
    private final QuorumControllerMetrics metrics;
    private final ControllerRequests requests;
    /** Ferrite's fencing of crashed brokers ({@link #fenceCrashedBrokers}), null when off or not started. */
    private volatile CrashFencing crashFencing;

    private ClusterController(final MetadataQuorum quorum, final QuorumController controller,
        final QuorumControllerMetrics metrics, final ControllerRequests requests)
    {
        this.quorum = quorum;
        this.controller = controller;
        this.metrics = metrics;
        this.requests = requests;
    }

    /**
     * Starts the controller on {@code quorum} and routes the controller APIs of its listener to it. {@code settings}
     * are Kafka's, with Kafka's defaults: {@code broker.session.timeout.ms} (9000), {@code num.partitions} (1),
     * {@code default.replication.factor} (1), {@code metadata.max.idle.interval.ms} (500),
     * {@code auto.leader.rebalance.enable} and {@code leader.imbalance.check.interval.seconds},
     * {@code unclean.leader.election.interval.ms}, and the static broker settings topic configs default to
     * ({@code min.insync.replicas}, ...); topic configs are validated as Kafka's controller does. {@code fatal}
     * hears a fault that must stop the node.
     */
    public static ClusterController start(final MetadataQuorum quorum, final Map<String, String> settings,
        final FaultHandler fatal) throws Exception
    {
        final int nodeId = quorum.nodeId();
        quorum.handOverAppendsToController();
        final KafkaConfig config = NodeConfig.controller(quorum, settings);
        final QuorumControllerMetrics metrics = new QuorumControllerMetrics(Optional.empty(), Time.SYSTEM,
            config.brokerSessionTimeoutMs());
        final OptionalLong maxIdleNs = config.metadataMaxIdleIntervalNs().isDefined() ?
            OptionalLong.of((Long)config.metadataMaxIdleIntervalNs().get()) : OptionalLong.empty();
        final OptionalLong imbalanceCheckNs = config.autoLeaderRebalanceEnable() ?
            OptionalLong.of(TimeUnit.SECONDS.toNanos(config.leaderImbalanceCheckIntervalSeconds())) : OptionalLong.empty();
        final QuorumController controller = new QuorumController.Builder(nodeId, quorum.clusterId())
            .setTime(Time.SYSTEM)
            .setThreadNamePrefix("controller-" + nodeId + "-")
            .setConfigSchema(KafkaRaftServer.configSchema())
            .setRaftClient(quorum.raftManager().client())
            .setQuorumFeatures(new QuorumFeatures(nodeId, supportedFeatures(), List.copyOf(quorum.voterIds())))
            .setDefaultReplicationFactor((short)config.defaultReplicationFactor())
            .setDefaultNumPartitions(config.numPartitions())
            .setReplicaPlacer(new StripedReplicaPlacer(new Random()))
            .setSessionTimeoutNs(TimeUnit.MILLISECONDS.toNanos(config.brokerSessionTimeoutMs()))
            .setLeaderImbalanceCheckIntervalNs(imbalanceCheckNs)
            // the no-op record that lets a quiet cluster's brokers see they are caught up
            .setMaxIdleIntervalNs(maxIdleNs)
            .setUncleanLeaderElectionCheckIntervalMs(config.uncleanLeaderElectionCheckIntervalMs())
            .setMetrics(metrics)
            .setConfigurationValidator(new FerriteConfigValidator(new ControllerConfigurationValidator(config)))
            .setStaticConfig(config.originals())
            .setBootstrapMetadata(bootstrapMetadata())
            .setFatalFaultHandler(fatal)
            .setNonFatalFaultHandler(new LoggingFaultHandler("controller-" + nodeId, () -> { }))
            .build();
        final ControllerRequests requests = new ControllerRequests(controller, config.brokerHeartbeatIntervalMs() / 2);
        final ClusterController started = new ClusterController(quorum, controller, metrics, requests);
        quorum.inbound().serveController(requests);
        return started;
    }

    /**
     * Starts Ferrite's fencing of crashed brokers ({@link CrashFencing}: {@value CrashFencing#SETTING} in
     * {@code settings}, default {@value CrashFencing#DEFAULT_GRACE_MS} ms, -1 off), the brokers' registrations read
     * from {@code view}. While this controller is active, a broker whose heartbeat connection closed and whose
     * listener then refuses connections is fenced without waiting out {@code broker.session.timeout.ms}.
     *
     * @throws org.apache.kafka.common.config.ConfigException when the setting is not a grace in ms or -1
     */
    public void fenceCrashedBrokers(final ClusterView view, final Map<String, String> settings)
    {
        final CrashFencing fencing = CrashFencing.start(quorum.nodeId(), controller, controller::isActive,
            view::brokers, CrashFencing.graceMs(settings));
        if (fencing != null)
        {
            crashFencing = fencing;
            requests.watchCrashes(fencing.suspects());
        }
    }

    /** What this node's software supports, as Kafka's defaults: every production feature to its latest level. */
    public static Map<String, VersionRange> supportedFeatures()
    {
        return QuorumFeatures.defaultSupportedFeatureMap(false);
    }

    /** The records an empty metadata log starts with (see the class comment). */
    static BootstrapMetadata bootstrapMetadata()
    {
        final MetadataVersion version = MetadataVersion.LATEST_PRODUCTION;
        final Map<String, Short> levels = new HashMap<>();
        for (final Feature feature : Feature.PRODUCTION_FEATURES)
        {
            // kraft.version is the raft layer's (control records), not a FeatureLevelRecord; a static quorum is at 0
            if (feature != Feature.KRAFT_VERSION)
            {
                levels.put(feature.featureName(), feature.defaultLevel(version));
            }
        }
        return BootstrapMetadata.fromVersions(version, levels, "ferrite defaults");
    }

    /** Whether this node's controller is the active one. */
    public boolean isActive()
    {
        return controller.isActive();
    }

    /** Kafka's controller itself, for what the listener does not route. */
    public QuorumController controller()
    {
        return controller;
    }

    @Override
    public void close() throws InterruptedException
    {
        quorum.inbound().serveController(null);
        requests.watchCrashes(null);
        final CrashFencing fencing = crashFencing;
        if (fencing != null)
        {
            fencing.close();
        }
        controller.beginShutdown();
        controller.close();
        metrics.close();
    }
}
