package io.ferrite.replication;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.ToIntFunction;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.TopicImage;
import org.apache.kafka.metadata.BrokerRegistration;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.server.fault.FaultHandler;
import org.apache.kafka.server.fault.ProcessTerminatingFaultHandler;

/**
 * A broker's whole membership of a cluster, behind an API of plain Java types (so the broker, whose runnable jar
 * does not carry Kafka's jars, compiles against it without them): this node's {@link MetadataQuorum} voter, its
 * {@link ClusterController}, its {@link ClusterView} and its {@link BrokerMembership}, started in Kafka's order and
 * closed in Kafka's ({@code BrokerServer.shutdown} then {@code ControllerServer.shutdown}: the controlled shutdown
 * first, while the quorum still answers, then the view, the controller, the quorum). {@link #forward} and
 * {@link #alterPartition} reach the active controller over the controller listener
 * ({@link ControllerChannel}).
 */
public final class ClusterNode implements AutoCloseable
{
    /** What this node does when its replicas change: on the view's loader thread, which it must not block on disk. */
    public interface LocalReplicas
    {
        /** This node leads {@code state.partition()} of {@code topic}: new, a new leader epoch, or an ISR change. */
        void leads(TopicState topic, PartitionState state);

        /** This node holds a follower replica of {@code state.partition()} of {@code topic}. */
        void follows(TopicState topic, PartitionState state);

        /** This node no longer holds a replica of {@code topic}-{@code partition} (deleted, or moved away). */
        void stopped(String topic, int partition);

        /**
         * {@code topic}'s config overrides in the image (Kafka's {@code ConfigurationsImage}) are now {@code configs}:
         * told when they change and, for a topic created with configs, before its partitions' first change.
         */
        default void topicConfigs(final String topic, final Map<String, String> configs)
        {
        }

        /**
         * The image's dynamic configs of broker {@code broker} (an id, or "" for the cluster default: Kafka's BROKER
         * ConfigRecords) are now {@code configs}, the whole map: told for every broker resource when it changes and,
         * at the start, for each one the image holds.
         */
        default void brokerConfigs(final String broker, final Map<String, String> configs)
        {
        }

        /**
         * The brokers a leader here may wait for or take into an ISR (Kafka's {@code isReplicaIsrEligible}) are now
         * {@code ids}, with their broker epochs {@code epochs}: those the image registers, unfenced and not in
         * controlled shutdown. Told whenever the image's brokers change, before that image's partition changes.
         */
        default void eligibleBrokers(final int[] ids, final long[] epochs)
        {
        }

        /**
         * This node's first metadata image (caught up with the quorum), told once before any of its changes:
         * {@code partitionCounts} gives a topic's partition count in that image (0: no such topic).
         */
        default void firstImage(final ToIntFunction<String> partitionCounts)
        {
        }
    }

    /** A registered broker, the endpoint it registered and whether the controller fenced it. */
    public record BrokerEndpoint(int id, String host, int port, long epoch, boolean fenced)
    {
    }

    /** The controller's answer to {@link #alterPartition}: the partition's state it committed. */
    public record IsrAnswer(int leaderEpoch, int partitionEpoch, int[] isr)
    {
    }

    /** A partition as the image holds it: Kafka's {@code PartitionRegistration}, with the replicas that are offline. */
    public record PartitionState(int partition, int leader, int leaderEpoch, int partitionEpoch, int[] replicas, int[] isr,
        int[] offlineReplicas)
    {
    }

    /**
     * A topic of the image: its id (two longs), its partition count, when asked for its partitions, and its config
     * overrides (Kafka's {@code ConfigurationsImage} for the topic; empty when not read).
     */
    public record TopicState(String name, long idMsb, long idLsb, int partitionCount, List<PartitionState> partitions,
        Map<String, String> configs)
    {
    }

    private final MetadataQuorum quorum;
    private final ClusterController controller;
    private final ClusterView view;
    private final BrokerMembership membership;
    private final ControllerChannel channel;
    private final long registrationTimeoutMs;

    private ClusterNode(final MetadataQuorum quorum, final ClusterController controller, final ClusterView view,
        final BrokerMembership membership, final ControllerChannel channel, final long registrationTimeoutMs)
    {
        this.quorum = quorum;
        this.controller = controller;
        this.view = view;
        this.membership = membership;
        this.channel = channel;
        this.registrationTimeoutMs = registrationTimeoutMs;
    }

    /**
     * Whether {@code settings} ask for a cluster: {@code controller.quorum.voters} (or {@code process.roles}) given.
     * Without them a broker is one node, as before.
     */
    public static boolean requested(final Map<String, String> settings)
    {
        return settings.containsKey("controller.quorum.voters") || settings.containsKey(QuorumSettings.PROCESS_ROLES);
    }

    /**
     * Starts this node's part of the cluster: {@code settings} are the broker's properties (Kafka's names); the quorum's
     * log goes in {@code quorumDir}; {@code logDir} is where the replicas live and {@code advertised} the broker
     * listener's endpoint others reach it at. Returns once the membership started (not yet unfenced:
     * {@link #awaitUnfenced}).
     */
    public static ClusterNode start(final Map<String, String> settings, final Path quorumDir, final Path logDir,
        final InetSocketAddress advertised, final LocalReplicas replicas) throws Exception
    {
        final FaultHandler fatal = new ProcessTerminatingFaultHandler.Builder().build();
        final MetadataQuorum quorum = MetadataQuorum.start(QuorumSettings.from(settings), quorumDir, (offset, record) -> { },
            fatal);
        ClusterController controller = null;
        ClusterView view = null;
        BrokerMembership membership = null;
        ControllerChannel channel = null;
        try
        {
            controller = ClusterController.start(quorum, settings, fatal);
            view = ClusterView.start(quorum, new Changes(replicas), fatal);
            controller.fenceCrashedBrokers(view, settings); // Ferrite's: a crashed broker fenced sooner (CrashFencing)
            Files.createDirectories(logDir);
            // the directory id: the quorum directory's persistent one (meta.properties of the quorum directory); the
            // broker's own meta.properties in its log directory is Ferrite's and has none yet
            membership = BrokerMembership.start(quorum, view, advertised, logDir, quorum.directoryId(), settings);
            channel = ControllerChannel.start(quorum, settings, advertised, logDir);
            final long timeout = NodeConfig.broker(quorum, settings, advertised, logDir).initialRegistrationTimeoutMs();
            return new ClusterNode(quorum, controller, view, membership, channel, timeout);
        }
        catch (final Exception | Error ex)
        {
            closeQuietly(ex, membership, channel, view, controller, quorum);
            throw ex;
        }
    }

    /**
     * Waits until the controller unfenced this broker, at most {@code initial.broker.registration.timeout.ms} (Kafka's
     * 60 s) plus the time to catch up; fails with an IllegalStateException that says why (Kafka's broker fails its
     * startup then).
     */
    public void awaitUnfenced() throws InterruptedException
    {
        try
        {
            membership.unfenced().get(registrationTimeoutMs * 2, TimeUnit.MILLISECONDS);
        }
        catch (final ExecutionException ex)
        {
            throw new IllegalStateException("broker " + quorum.nodeId() + " did not join the cluster: " +
                ex.getCause().getMessage(), ex.getCause());
        }
        catch (final TimeoutException ex)
        {
            throw new IllegalStateException("broker " + quorum.nodeId() + " was not unfenced within " +
                registrationTimeoutMs * 2 + " ms (twice initial.broker.registration.timeout.ms): state " +
                membership.state() + ", controller " + quorum.leaderId() + " (is a majority of " +
                "controller.quorum.voters up?)", ex);
        }
    }

    public int nodeId()
    {
        return quorum.nodeId();
    }

    public String clusterId()
    {
        return quorum.clusterId();
    }

    /** This incarnation's broker epoch, -1 before it registered. */
    public long brokerEpoch()
    {
        return membership.brokerEpoch();
    }

    /** Kafka's broker state name: STARTING, RECOVERY, RUNNING, PENDING_CONTROLLED_SHUTDOWN, ... */
    public String state()
    {
        return membership.state().name();
    }

    /** The live (registered, unfenced) brokers, by id. */
    public List<BrokerEndpoint> liveBrokers()
    {
        return brokers(false);
    }

    /**
     * The registered brokers by id: the live ones, or with {@code includeFenced} the fenced ones too (Kafka's
     * {@code getBrokerNodes}, DescribeCluster's {@code includeFencedBrokers}).
     */
    public List<BrokerEndpoint> brokers(final boolean includeFenced)
    {
        final List<BrokerEndpoint> brokers = new ArrayList<>();
        for (final BrokerRegistration broker : includeFenced ? view.brokers().values() : view.liveBrokers())
        {
            broker.listeners().values().stream().findFirst().ifPresent(endpoint -> brokers.add(
                new BrokerEndpoint(broker.id(), endpoint.host(), endpoint.port(), broker.epoch(), broker.fenced())));
        }
        brokers.sort((a, b) -> Integer.compare(a.id(), b.id()));
        return brokers;
    }

    /**
     * What Kafka's KRaft brokers tell clients as the controller id: a random live broker (clients send nothing to the
     * controller in KRaft mode; {@code KafkaApis} answers {@code metadataCache.getRandomAliveBrokerId}), -1 with none.
     */
    public int randomLiveBrokerId()
    {
        final List<BrokerRegistration> live = view.liveBrokers();
        return live.isEmpty() ? -1 : live.get(ThreadLocalRandom.current().nextInt(live.size())).id();
    }

    /** Every topic of the image with its partitions (one image read for all). */
    public Collection<TopicState> topics()
    {
        final MetadataImage image = view.image();
        final List<TopicState> topics = new ArrayList<>();
        image.topics().topicsByName().values().forEach(topic -> topics.add(ImageStates.describe(image, topic)));
        return topics;
    }

    /** {@code name}'s state, if the image has it. */
    public Optional<TopicState> topic(final String name)
    {
        final MetadataImage image = view.image();
        return Optional.ofNullable(image.topics().getTopic(name)).map(topic -> ImageStates.describe(image, topic));
    }

    /** The topic with id {@code msb}/{@code lsb}, if the image has it. */
    public Optional<TopicState> topic(final long msb, final long lsb)
    {
        final MetadataImage image = view.image();
        return Optional.ofNullable(image.topics().getTopic(new Uuid(msb, lsb))).map(topic -> ImageStates.describe(image, topic));
    }

    /**
     * Forwards a client's request body ({@code apiKey} at {@code version}: CreateTopics, DeleteTopics,
     * CreatePartitions, ...) to the active controller, as Kafka's broker does over its controller channel, and
     * completes with the controller's response body at the same version.
     */
    public CompletableFuture<ByteBuffer> forward(final short apiKey, final short version, final ByteBuffer body)
    {
        return channel.forward(apiKey, version, body);
    }

    /** Asks the controller to create {@code topic} with its defaults, without waiting (Kafka's auto-creation). */
    public void autoCreate(final String topic)
    {
        channel.autoCreate(topic);
    }

    /** Has the controller create an internal topic ({@code __consumer_offsets}); its error code, or a failure: no controller. */
    public CompletableFuture<Short> createTopic(final String topic, final int partitions, final short replicationFactor,
        final Map<String, String> configs)
    {
        return channel.createTopic(topic, partitions, replicationFactor, configs);
    }

    /**
     * Kafka's AlterPartition for a partition this node leads: proposes {@code isr} at the partition's
     * {@code leaderEpoch} / {@code partitionEpoch} (each member with its broker epoch from the image). Completes with
     * the state the controller committed (its leader epoch, partition epoch and ISR), or fails with the controller's error (Kafka's {@code Errors} exception:
     * INVALID_UPDATE_VERSION, FENCED_LEADER_EPOCH, ...).
     */
    public CompletableFuture<IsrAnswer> alterPartition(final String topic, final int partition, final int leaderEpoch,
        final int partitionEpoch, final int[] isr)
    {
        final TopicImage image = view.image().topics().getTopic(topic);
        if (image == null)
        {
            return CompletableFuture.failedFuture(new IllegalStateException("no topic " + topic + " in the image"));
        }
        final Map<Integer, BrokerRegistration> brokers = view.brokers();
        final long[] epochs = new long[isr.length];
        for (int i = 0; i < isr.length; i++)
        {
            final BrokerRegistration broker = brokers.get(isr[i]);
            epochs[i] = broker == null ? -1 : broker.epoch();
        }
        return channel.alterPartition(quorum.nodeId(), membership.brokerEpoch(), image.id(), partition, leaderEpoch,
            partitionEpoch, isr, epochs);
    }

    /**
     * Kafka's AllocateProducerIds: the next block of producer ids the active controller gives this broker (its id
     * and the broker epoch it registered with), as {@code {first id, length}}; fails with the controller's error
     * (STALE_BROKER_EPOCH before the registration, ...) or the channel's (REQUEST_TIMED_OUT, NETWORK_EXCEPTION).
     * The controller writes the block's end (a ProducerIdsRecord) to the metadata log before it answers, so no
     * block is given twice, whichever controller is active.
     */
    public CompletableFuture<long[]> allocateProducerIds()
    {
        final long epoch = membership.brokerEpoch();
        if (epoch < 0)
        {
            return CompletableFuture.failedFuture(new IllegalStateException("broker " + quorum.nodeId() + " not registered yet"));
        }
        return channel.allocateProducerIds(quorum.nodeId(), epoch);
    }

    /** The next producer id the controller will give, as this node's image has it (0 before any block was given). */
    public long nextProducerIdSeen()
    {
        return view.image().producerIds().nextProducerId();
    }

    /** Whether this node's controller is the active one. */
    public boolean activeController()
    {
        return controller.isActive();
    }

    /**
     * Kafka's order ({@code BrokerServer.shutdown}): the controlled shutdown first, while the controller channel and the
     * quorum still answer (an AlterPartition meanwhile still reaches the controller), then the channel, the view, the
     * controller, the voter last.
     */
    @Override
    public void close() throws Exception
    {
        closeQuietly(null, membership, channel, view, controller, quorum);
    }

    private static void closeQuietly(final Throwable failure, final AutoCloseable... parts) throws Exception
    {
        Exception first = null;
        for (final AutoCloseable part : parts)
        {
            if (part == null)
            {
                continue;
            }
            try
            {
                part.close();
            }
            catch (final Exception ex)
            {
                if (failure != null)
                {
                    failure.addSuppressed(ex);
                }
                else if (first == null)
                {
                    first = ex;
                }
                else
                {
                    first.addSuppressed(ex);
                }
            }
        }
        if (first != null)
        {
            throw first;
        }
    }

    /**
     * Kafka's {@code isReplicaIsrEligible} as far as the image says it ({@code KRaftMetadataCache}): registered (this is
     * one), not fenced, not in controlled shutdown; the leader checks the broker epoch its fetches named against
     * {@code broker.epoch()}.
     */
    static boolean isrEligible(final BrokerRegistration broker)
    {
        return !broker.fenced() && !broker.inControlledShutdown();
    }

    /** The view's changes in plain types. */
    static final class Changes implements ClusterView.PartitionChanges
    {
        private final LocalReplicas replicas;

        Changes(final LocalReplicas replicas)
        {
            this.replicas = replicas;
        }

        @Override
        public void leads(final TopicPartition partition, final Uuid topicId, final PartitionRegistration state)
        {
            replicas.leads(topic(partition, topicId), ImageStates.state(partition.partition(), state, new int[0]));
        }

        @Override
        public void follows(final TopicPartition partition, final Uuid topicId, final PartitionRegistration state)
        {
            replicas.follows(topic(partition, topicId), ImageStates.state(partition.partition(), state, new int[0]));
        }

        @Override
        public void stopped(final TopicPartition partition)
        {
            replicas.stopped(partition.topic(), partition.partition());
        }

        @Override
        public void topicConfigs(final String topic, final Map<String, String> configs)
        {
            replicas.topicConfigs(topic, configs);
        }

        @Override
        public void brokerConfigs(final String broker, final Map<String, String> configs)
        {
            replicas.brokerConfigs(broker, configs);
        }

        @Override
        public void brokers(final Map<Integer, BrokerRegistration> brokers)
        {
            final int[] ids = new int[brokers.size()];
            final long[] epochs = new long[brokers.size()];
            int count = 0;
            for (final BrokerRegistration broker : brokers.values())
            {
                if (isrEligible(broker))
                {
                    ids[count] = broker.id();
                    epochs[count++] = broker.epoch();
                }
            }
            replicas.eligibleBrokers(java.util.Arrays.copyOf(ids, count), java.util.Arrays.copyOf(epochs, count));
        }

        @Override
        public void firstImage(final MetadataImage image)
        {
            replicas.firstImage(name ->
            {
                final TopicImage topic = image.topics().getTopic(name);
                return topic == null ? 0 : topic.partitions().size();
            });
        }

        /** The topic without its partitions, its count taken from the partition's: the largest index seen so far + 1. */
        private static TopicState topic(final TopicPartition partition, final Uuid topicId)
        {
            return new TopicState(partition.topic(), topicId.getMostSignificantBits(), topicId.getLeastSignificantBits(),
                partition.partition() + 1, List.of(), Map.of());
        }
    }
}
