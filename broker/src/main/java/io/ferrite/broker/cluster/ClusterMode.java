package io.ferrite.broker.cluster;

import io.ferrite.broker.ProducerIdFile;
import io.ferrite.broker.ProducerIds;
import io.ferrite.broker.ReplicaLeadership;
import io.ferrite.broker.StartupException;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.api.Apis;
import io.ferrite.broker.api.DescribeConfigsHandler;
import io.ferrite.broker.api.MetadataHandler;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.config.DynamicBrokerConfigs;
import io.ferrite.broker.coordinator.PartitionCount;
import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.broker.group.GroupCoordinator;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.broker.api.TxnVerifier;
import io.ferrite.broker.txn.NodeRequests;
import io.ferrite.broker.txn.RemoteMarkers;
import io.ferrite.broker.txn.RemoteVerifier;
import io.ferrite.broker.txn.TxnCoordinator;
import io.ferrite.replication.ClusterNode;
import io.ferrite.wire.message.ApiKeys;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.ToIntFunction;

/**
 * The broker in a cluster (issue 14): with Kafka's cluster settings ({@code controller.quorum.voters},
 * {@code process.roles}, ...) this node starts its {@link ClusterNode} — its voter of the metadata quorum, Kafka's
 * controller, the metadata image and the broker's registration — once its own threads run, waits until the
 * controller unfenced it, leads or follows the partitions the image gives it ({@link ClusterPartitions}) and answers
 * Metadata, DescribeCluster and the topic requests as a broker of the cluster does. Without those settings it is
 * {@link #DISABLED}: the node is one broker alone, as before, and nothing of replication-lite is loaded.
 *
 * <p>The replication-lite classes and Kafka's jars they run on are not in {@code ferrite-broker.jar} (shaded out:
 * 43 jars, 42 MiB, most of it Scala and kafka_2.13, that a single node never loads). Cluster mode needs them on
 * the class path: {@code bin/ferrite-server} puts them there when its arguments or config file name
 * {@code controller.quorum.voters} (from {@code replication-lite/target/cluster.classpath}, which the build writes);
 * started otherwise, the broker refuses to start with a {@link StartupException} that names the missing class.
 */
public class ClusterMode implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(ClusterMode.class);
    /** Kafka's broker {@code request.timeout.ms} default, which bounds its retries of a produce's add. */
    private static final int KAFKA_REQUEST_TIMEOUT_MS = 30_000;
    /** A single node: every method does nothing. */
    public static final ClusterMode DISABLED = new ClusterMode();
    /** Kafka's setting for the metadata log's directory; Ferrite's default is {@code <first log dir>/cluster-metadata}. */
    public static final String METADATA_LOG_DIR = "metadata.log.dir";

    ClusterMode()
    {
    }

    /**
     * How the leader asks again a produce's add answered CONCURRENT_TRANSACTIONS: every
     * {@code add.partitions.to.txn.retry.backoff.ms}, for {@code add.partitions.to.txn.retry.backoff.max.ms} bounded by
     * Kafka's broker {@code request.timeout.ms} (30 s; Ferrite has no such setting), as Kafka 4.4's {@code ReplicaManager}.
     */
    static RemoteVerifier.Retries retries(final BrokerConfig config)
    {
        return new RemoteVerifier.Retries(config.getInt(BrokerConfig.ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MS),
            Math.min(config.getInt(BrokerConfig.ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MAX_MS), KAFKA_REQUEST_TIMEOUT_MS));
    }

    /**
     * The cluster mode {@code config} asks for: {@link #DISABLED} without cluster settings. {@code dynamic}: the
     * broker's dynamic configs, which in a cluster follow the metadata image's.
     */
    public static ClusterMode of(final BrokerConfig config, final DynamicBrokerConfigs dynamic) throws StartupException
    {
        if (!requested(config))
        {
            return DISABLED;
        }
        for (final String needed : new String[] {"io.ferrite.replication.ClusterNode", "kafka.server.KafkaConfig",
            "org.apache.kafka.controller.QuorumController", "scala.Option"})
        {
            try
            {
                Class.forName(needed, false, ClusterMode.class.getClassLoader());
            }
            catch (final ClassNotFoundException | LinkageError ex)
            {
                throw new StartupException("cluster mode (controller.quorum.voters / process.roles) needs replication-lite " +
                    "and Kafka's jars on the class path, and " + needed + " is not there: start the broker with " +
                    "bin/ferrite-server (it adds replication-lite/target/cluster.classpath), or put the broker jar, " +
                    "replication-lite's jar and the jars listed in that file on -cp", ex);
            }
        }
        return new Enabled(config, dynamic);
    }

    /** Whether {@code config} asks for cluster mode ({@code controller.quorum.voters} or {@code process.roles} set). */
    public static boolean requested(final BrokerConfig config)
    {
        return config.values().containsKey("controller.quorum.voters") || config.values().containsKey("process.roles");
    }

    /** Whether this node is part of a cluster. */
    public boolean enabled()
    {
        return false;
    }

    /**
     * The node's producer ids: alone, from its file in {@code firstDir}; in a cluster, from the active controller
     * ({@link ControllerProducerIdBlocks}), the first block asked for once the node is unfenced.
     */
    public ProducerIds producerIds(final Path firstDir) throws IOException
    {
        return new ProducerIds(firstDir);
    }

    /**
     * Before the coordinators load: in a cluster groups are coordinated by the leaders of {@code __consumer_offsets}'
     * partitions and transactional ids by those of {@code __transaction_state}'s, each topic created through the
     * controller ({@link CoordinatorPlacement}); alone, nothing.
     */
    public void coordinates(final GroupCoordinator groups, final TxnCoordinator transactions)
    {
    }

    /**
     * After {@link #coordinates}: what verifies a transactional produce (KIP-890) — alone, {@code local} (this node's
     * coordinator); in a cluster, the transactional id's coordinator wherever it is ({@link RemoteVerifier}).
     */
    public TxnVerifier verifier(final TxnVerifier local)
    {
        return local;
    }

    /** Registers the cluster's handlers of Metadata, DescribeCluster and the forwarded topic requests on one network thread. */
    public void register(final Apis apis, final Runnable waker, final MetadataHandler metadata)
    {
    }

    /**
     * Starts this node's part of the cluster (after the broker's threads, which the partitions' changes need) and
     * waits until the controller unfenced the broker; if that fails, {@code broker} is closed (the cluster's parts with
     * it) before the failure is thrown.
     */
    public final void start(final TopicRegistry topics, final AdminAgent admin, final ReplicaLeadership leadership,
        final BiConsumer<Integer, Runnable> onOwner, final AutoCloseable broker) throws IOException
    {
        try
        {
            join(topics, admin, leadership, onOwner);
        }
        catch (final IOException | RuntimeException ex)
        {
            try
            {
                broker.close();
            }
            catch (final Exception closing)
            {
                ex.addSuppressed(closing);
            }
            throw ex;
        }
    }

    /** Joins the cluster: {@link #start} without the cleanup of a failure. */
    void join(final TopicRegistry topics, final AdminAgent admin, final ReplicaLeadership leadership,
        final BiConsumer<Integer, Runnable> onOwner) throws IOException
    {
    }

    @Override
    public void close()
    {
    }

    /** The names (and prefixes) of the settings handed to the cluster's Kafka classes. */
    private static final String[] CLUSTER_PREFIXES = {"node.id", "process.roles", "controller.", "listeners",
        "ferrite.cluster.id", "ferrite.cluster.crash.", "broker.heartbeat.", "broker.session.", "initial.broker.registration.", "num.partitions",
        "default.replication.factor", "min.insync.replicas", "metadata.max.", "request.timeout.ms",
        "socket.request.max.bytes", "unclean.leader.election.", "auto.leader.rebalance.", "leader.imbalance."};

    /** A node of a cluster. */
    private static final class Enabled extends ClusterMode
    {
        private final BrokerConfig config;
        private final DynamicBrokerConfigs dynamic;
        private volatile ClusterNode node;
        private volatile MetadataHandler advertised;
        private volatile ClusterPartitions partitions;
        private volatile ProducerIds producerIds;
        /** The coordinators' ownerships, told of the leads of their topics' partitions (none before {@link #coordinates}). */
        private volatile PartitionOwnership[] owners = new PartitionOwnership[0];
        /** The counts of the coordinators' topics, fixed at this node's first metadata image (none before {@link #coordinates}). */
        private volatile PartitionCount[] counts = new PartitionCount[0];
        /** The transaction coordinator's markers to partitions led by other nodes (null before {@link #coordinates}). */
        private volatile RemoteMarkers remoteMarkers;
        /** Where a transactional id's coordinator is (null before {@link #coordinates}). */
        private volatile CoordinatorPlacement txnPlacement;
        /** Produce verification by the coordinators of other nodes (null before {@link #verifier}). */
        private volatile RemoteVerifier remoteVerifier;

        Enabled(final BrokerConfig config, final DynamicBrokerConfigs dynamic)
        {
            this.config = config;
            this.dynamic = dynamic;
        }

        @Override
        public boolean enabled()
        {
            return true;
        }

        @Override
        public ProducerIds producerIds(final Path firstDir) throws IOException
        {
            producerIds = new ProducerIds(new ControllerProducerIdBlocks(this::node, new ProducerIdFile(firstDir)));
            return producerIds;
        }

        @Override
        public void coordinates(final GroupCoordinator groups, final TxnCoordinator transactions)
        {
            owners = new PartitionOwnership[] {groups.ownership(), transactions.ownership()};
            // one count for FindCoordinator and each coordinator, fixed at the node's first metadata image (imaged)
            final PartitionCount offsets = groups.offsetsCount();
            final PartitionCount stateLog = transactions.config().stateLog();
            offsets.fixedByImage();
            stateLog.fixedByImage();
            counts = new PartitionCount[] {offsets, stateLog};
            groups.followLeaders(new CoordinatorPlacement(this::node, GroupCoordinator.OFFSETS_TOPIC, offsets,
                (short)config.getInt(BrokerConfig.OFFSETS_TOPIC_REPLICATION_FACTOR),
                Map.of("cleanup.policy", "compact", "compression.type", "producer", "segment.bytes",
                    Integer.toString(config.getInt(BrokerConfig.OFFSETS_TOPIC_SEGMENT_BYTES)))));
            remoteMarkers = new RemoteMarkers(FetcherSettings.of(config), config.nodeId(), () -> transactions.agent().wake());
            txnPlacement = new CoordinatorPlacement(this::node, TxnCoordinator.TOPIC, stateLog,
                (short)config.getInt(BrokerConfig.TRANSACTION_STATE_LOG_REPLICATION_FACTOR),
                Map.of("cleanup.policy", "compact", "compression.type", "uncompressed", "min.insync.replicas",
                    Integer.toString(config.getInt(BrokerConfig.TRANSACTION_STATE_LOG_MIN_ISR)), "unclean.leader.election.enable", "false",
                    "segment.bytes", Integer.toString(config.getInt(BrokerConfig.TRANSACTION_STATE_LOG_SEGMENT_BYTES))));
            transactions.followLeaders(txnPlacement, new ImageMarkerRouting(this::node, config.nodeId()), remoteMarkers);
        }

        /**
         * The node's first metadata image, before any of its changes (no partition led yet, no request answered): the
         * coordinators' counts are fixed by it, as Kafka's {@code initializeManagers} starts its coordinators.
         */
        private void imaged(final ToIntFunction<String> partitionCounts)
        {
            for (final PartitionCount count : counts)
            {
                final int fixed = count.imaged(partitionCounts.applyAsInt(count.topic()));
                LOG.info("{}'s keys placed by {} partitions (first metadata image)", count.topic(), fixed);
            }
        }

        @Override
        public TxnVerifier verifier(final TxnVerifier local)
        {
            remoteVerifier = new RemoteVerifier(local, txnPlacement, config.nodeId(),
                new NodeRequests(FetcherSettings.of(config), "ferrite-txn-verify-" + config.nodeId(), 64 * 1024), retries(config));
            return remoteVerifier;
        }

        @Override
        public void register(final Apis apis, final Runnable waker, final MetadataHandler metadata)
        {
            advertised = metadata;
            apis.registerLazily(ApiKeys.METADATA, () -> new ClusterMetadataHandler(this::node, metadata,
                config.getBoolean(BrokerConfig.AUTO_CREATE_TOPICS)))
                .registerLazily(ApiKeys.DESCRIBE_CLUSTER, () -> new ClusterDescribeHandler(this::node))
                .registerLazily(ApiKeys.CREATE_TOPICS, () -> new ForwardingHandler(this::node, waker))
                .registerLazily(ApiKeys.DELETE_TOPICS, () -> new ForwardingHandler(this::node, waker))
                .registerLazily(ApiKeys.CREATE_PARTITIONS, () -> new ForwardingHandler(this::node, waker))
                .registerLazily(ApiKeys.ELECT_LEADERS, () -> new ForwardingHandler(this::node, waker))
                .registerLazily(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, () -> new ForwardingHandler(this::node, waker))
                .registerLazily(ApiKeys.LIST_PARTITION_REASSIGNMENTS, () -> new ForwardingHandler(this::node, waker));
            final java.util.function.Supplier<io.ferrite.broker.net.RequestHandler> localAlter =
                apis.current(ApiKeys.INCREMENTAL_ALTER_CONFIGS);
            apis.registerLazily(ApiKeys.INCREMENTAL_ALTER_CONFIGS, () -> new ConfigsRouting(this::node, waker, localAlter.get()));
            final java.util.function.Supplier<io.ferrite.broker.net.RequestHandler> localDescribe =
                apis.current(ApiKeys.DESCRIBE_CONFIGS);
            apis.registerLazily(ApiKeys.DESCRIBE_CONFIGS, () -> ((DescribeConfigsHandler)localDescribe.get())
                .topicsFrom(new DescribeConfigsHandler.ImageTopics()
                {
                    @Override
                    public boolean fromImage(final String topic)
                    {
                        return true; // every topic, the coordinators' too, is the image's in a cluster
                    }

                    @Override
                    public java.util.Map<String, String> configs(final String topic)
                    {
                        final ClusterNode joined = node;
                        return joined == null ? null : joined.topic(topic).map(ClusterNode.TopicState::configs).orElse(null);
                    }
                }));
        }

        private ClusterNode node()
        {
            return node;
        }

        /**
         * The broker's settings Kafka's cluster classes read (KafkaConfig validates what it is given: a broker's
         * {@code advertised.listeners} would fail the controller's config, which has no broker listener).
         */
        private static java.util.Map<String, String> clusterSettings(final BrokerConfig config)
        {
            final java.util.Map<String, String> settings = new java.util.HashMap<>();
            config.values().forEach((name, value) ->
            {
                for (final String prefix : CLUSTER_PREFIXES)
                {
                    if (name.startsWith(prefix))
                    {
                        settings.put(name, value);
                        break;
                    }
                }
            });
            return settings;
        }

        @Override
        void join(final TopicRegistry topics, final AdminAgent admin, final ReplicaLeadership leadership,
            final BiConsumer<Integer, Runnable> onOwner) throws IOException
        {
            final Path firstDir = config.logDirs().get(0);
            final String metadataDir = config.values().get(METADATA_LOG_DIR);
            final InetSocketAddress endpoint = new InetSocketAddress(advertised.advertisedHost(), advertised.advertisedPort());
            partitions = new ClusterPartitions(topics, admin, leadership, onOwner, this::node);
            for (final PartitionOwnership owner : owners)
            {
                partitions.coordinated(owner); // before the image: the partitions led load their keys
            }
            Unassigned.untilAssigned(topics); // nothing served as a single node's: a partition is the image's to place
            try
            {
                node = ClusterNode.start(clusterSettings(config), metadataDir != null ? Path.of(metadataDir) :
                    firstDir.resolve("cluster-metadata"), firstDir, endpoint,
                    new ImageChanges(partitions, dynamic, admin, config.nodeId(), this::imaged));
                partitions.joined(); // the follows heard during the start name their leader now
                LOG.info("node {} joining cluster {} as broker {}", config.nodeId(), node.clusterId(), endpoint);
                node.awaitUnfenced();
                LOG.info("node {} unfenced: live brokers {}", config.nodeId(), node.liveBrokers());
                partitions.markStrays(node); // the image has caught up: what it lacks is stray
                if (producerIds != null)
                {
                    producerIds.prefetch(); // registered: the controller gives blocks from now on
                }
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                throw new StartupException("interrupted while joining the cluster", ex);
            }
            catch (final IOException ex)
            {
                throw ex;
            }
            catch (final Exception ex)
            {
                throw new StartupException("joining the cluster failed: " + ex.getMessage(), ex);
            }
        }

        /**
         * Kafka's order ({@link ClusterNode#close}): the controlled shutdown first (leadership moves away), then the
         * controller channel, the view, controller, quorum.
         */
        @Override
        public void close()
        {
            for (final AutoCloseable sender : new AutoCloseable[] {remoteMarkers, remoteVerifier})
            {
                try
                {
                    if (sender != null)
                    {
                        sender.close();
                    }
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
                catch (final Exception ex)
                {
                    LOG.warn("closing {} failed: {}", sender, ex.toString());
                }
            }
            final ClusterNode started = node;
            if (started == null)
            {
                return;
            }
            try
            {
                started.close();
            }
            catch (final Exception ex)
            {
                LOG.warn("closing the cluster membership failed", ex);
            }
        }
    }
}
