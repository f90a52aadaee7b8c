package io.ferrite.replication;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;

import kafka.raft.KafkaRaftManager;
import kafka.server.KafkaConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.raft.Batch;
import org.apache.kafka.raft.BatchReader;
import org.apache.kafka.raft.Endpoints;
import org.apache.kafka.raft.LeaderAndEpoch;
import org.apache.kafka.raft.RaftClient;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.fault.FaultHandler;
import org.apache.kafka.server.fault.ProcessTerminatingFaultHandler;
import org.apache.kafka.snapshot.SnapshotReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's seat in the metadata quorum: Kafka's own KRaft ({@code KafkaRaftManager}, the code Kafka's
 * controllers run) over a replicated log of Kafka's metadata records ({@code RegisterBrokerRecord},
 * {@code UnfenceBrokerRecord}, ... in {@code __cluster_metadata-0}, written with Kafka's
 * {@link MetadataRecordSerde}, the format Kafka's tools decode; not tried on this log yet). The leader {@link #append}s; every node's
 * {@link Listener} hears each committed record once, in offset order, on the raft I/O thread.
 *
 * <p>A fault is fatal, as in Kafka's controllers: a committed record the {@link Listener} throws on, or a
 * fault of KRaft's own (a log I/O error, a record the serde cannot read), marks the quorum
 * {@link #failure() failed}: it stops leading, fails every append waiting and any later one, delivers no
 * further record, stops answering and voting (KRaft and the listener are shut down), and hands the cause to
 * the {@link FaultHandler} the embedder chose; the default halts the process as Kafka does.
 *
 * <p>Threads: KRaft's {@code quorum-N-io-thread}, {@code quorum-N-outbound-request-thread} and
 * {@code quorum-N-scheduler0}, its purgatory's {@code raft-expiration-reaper}, {@link RaftInbound}'s
 * {@code raft-acceptor} and one {@code raft-conn-N} per inbound connection (two in a 3-voter quorum), all
 * ended by {@link #close}; {@code quorum-N-fault} for a moment after a fault; and kafka_2.13's two static
 * Yammer {@code metrics-meter-tick-thread-N}, which live as long as the JVM.
 */
public final class MetadataQuorum implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(MetadataQuorum.class);
    private static final TopicPartition METADATA_PARTITION = new TopicPartition("__cluster_metadata", 0);

    /** What a node learns from the quorum; called on the raft I/O thread, which it must not block. */
    public interface Listener
    {
        /** A record the quorum committed, once, in offset order (replayed from offset 0 after a restart). */
        void onCommitted(long offset, ApiMessageAndVersion record);

        /** The leader changed: {@code leaderId} empty while an election runs. */
        default void onLeaderChange(final OptionalInt leaderId, final int epoch)
        {
        }
    }

    private final QuorumSettings settings;
    private final String clusterId;
    private final Listener listener;
    private final RaftInbound inbound;
    private final Metrics metrics;
    private final KafkaRaftManager<ApiMessageAndVersion> raft;
    private final PendingAppends pending = new PendingAppends();
    private final Object appendLock = new Object();
    /** Set once a {@link ClusterController} runs on this quorum: from then on only it appends. */
    private volatile boolean controllerAppends;
    /** The quorum directory's persistent id (its meta.properties' {@code directory.id}). */
    private final Uuid directoryId;
    private final FaultHandler faultHandler;
    private final Object faultLock = new Object();
    private volatile Throwable failure;
    private boolean stopped;
    private volatile long committedOffset = -1;
    private volatile LeaderAndEpoch leader = LeaderAndEpoch.UNKNOWN;

    private MetadataQuorum(final QuorumSettings settings, final Path logDir, final QuorumDirectory directory,
        final Listener listener, final FaultHandler faultHandler) throws IOException
    {
        this.settings = settings;
        this.clusterId = directory.clusterId();
        this.directoryId = directory.directoryId();
        this.listener = listener;
        this.faultHandler = faultHandler;
        final ListenerName listenerName = ListenerName.normalised(settings.listenerName());
        this.inbound = new RaftInbound(settings.bindAddress(), listenerName, settings.maxRequestBytes());
        this.metrics = new Metrics(); // not KafkaRaftManager's to close: ours
        try
        {
            final InetSocketAddress bound = inbound.boundAddress();
            // what the other voters dial (controller.quorum.voters), not the bind address (0.0.0.0 for "all")
            final InetSocketAddress advertised = advertisedVoters().get(settings.nodeId());
            final Properties props = settings.raftProperties();
            props.put("process.roles", "controller");
            props.put("node.id", Integer.toString(settings.nodeId()));
            props.put("controller.listener.names", listenerName.value());
            props.put("listeners", listenerName.value() + "://" + bound.getHostString() + ":" + bound.getPort());
            props.put("listener.security.protocol.map", listenerName.value() + ":PLAINTEXT");
            props.put("log.dirs", logDir.toString());
            this.raft = new KafkaRaftManager<>(clusterId, KafkaConfig.fromProps(props, false),
                directory.directoryId(), MetadataRecordSerde.INSTANCE, METADATA_PARTITION, Uuid.METADATA_TOPIC_ID,
                Time.SYSTEM, metrics, ignoredStaticVoters -> { }, scala.Option.apply("quorum-" + settings.nodeId()),
                CompletableFuture.completedFuture(settings.voterAddresses()), List.of(),
                Endpoints.fromInetSocketAddresses(Map.of(listenerName, advertised)),
                this::fail);
        }
        catch (final RuntimeException ex)
        {
            inbound.close();
            metrics.close();
            throw ex;
        }
    }

    /**
     * Starts this node's voter: its log in {@code logDir/__cluster_metadata-0}, its listener on the
     * controller listener's address. Returns at once; the leader is elected in the background.
     */
    public static MetadataQuorum start(final QuorumSettings settings, final Path logDir, final Listener listener)
        throws IOException
    {
        return start(settings, logDir, listener, new ProcessTerminatingFaultHandler.Builder().build());
    }

    /** {@link #start(QuorumSettings, Path, Listener)} with the embedder's handler of a fatal fault. */
    public static MetadataQuorum start(final QuorumSettings settings, final Path logDir, final Listener listener,
        final FaultHandler faultHandler) throws IOException
    {
        Files.createDirectories(logDir);
        final QuorumDirectory directory = QuorumDirectory.open(logDir, settings.nodeId(), settings.clusterId());
        final MetadataQuorum quorum = new MetadataQuorum(settings, logDir, directory, listener, faultHandler);
        try
        {
            quorum.raft.client().register(quorum.new Committed());
            quorum.inbound.start(quorum.raft, quorum.clusterId, quorum.advertisedVoters());
            quorum.raft.startup();
            return quorum;
        }
        catch (final IOException | RuntimeException ex)
        {
            try
            {
                quorum.close();
            }
            catch (final IOException | RuntimeException closing)
            {
                ex.addSuppressed(closing);
            }
            throw ex;
        }
    }

    /**
     * Appends records as leader. The future completes with the offset of the last record once the quorum
     * committed them, and fails with {@link NotLeaderOrFollowerException} when this node is not the leader
     * or stops being it first (the records may then still be committed by the next leader, or not). Fails with
     * IllegalStateException once a {@link ClusterController} has started on this quorum: the controller appends to
     * the same raft client from its own thread (this {@code appendLock} does not cover it), and only records it wrote
     * may be in its log.
     */
    public CompletableFuture<Long> append(final List<ApiMessageAndVersion> records)
    {
        if (failure != null)
        {
            return CompletableFuture.failedFuture(failedException());
        }
        if (controllerAppends)
        {
            return CompletableFuture.failedFuture(new IllegalStateException("node " + settings.nodeId() +
                ": a ClusterController appends to this metadata log; MetadataQuorum.append is refused"));
        }
        final LeaderAndEpoch current = leader;
        if (!current.isLeader(settings.nodeId()))
        {
            return CompletableFuture.failedFuture(new NotLeaderOrFollowerException("node " + settings.nodeId() +
                " is not the metadata leader; the leader is " + current.leaderId()));
        }
        final CompletableFuture<Long> committed;
        final long lastOffset;
        try
        {
            // KRaft's prepareAppend and schedulePreparedAppend come in pairs: one appender at a time. The
            // records cannot be committed before they are in the pending table: they are scheduled after
            synchronized (appendLock)
            {
                lastOffset = raft.client().prepareAppend(current.epoch(), records);
                committed = pending.add(lastOffset, current.epoch());
                raft.client().schedulePreparedAppend();
            }
        }
        catch (final RuntimeException ex)
        {
            return CompletableFuture.failedFuture(new NotLeaderOrFollowerException(
                "append in epoch " + current.epoch() + " refused: " + ex.getMessage(), ex));
        }
        // a leader change (or a fault) between prepareAppend and add failed the table without this entry
        final LeaderAndEpoch now = leader;
        if (failure != null || now.epoch() != current.epoch() || !now.isLeader(settings.nodeId()))
        {
            pending.fail(lastOffset, new NotLeaderOrFollowerException("leadership moved from epoch " + current.epoch() +
                " while appending; the leader is " + now.leaderId() + " in epoch " + now.epoch()));
        }
        return committed;
    }

    /** The cluster this node's log belongs to (its meta.properties). */
    public String clusterId()
    {
        return clusterId;
    }

    public OptionalInt leaderId()
    {
        return leader.leaderId();
    }

    public int epoch()
    {
        return leader.epoch();
    }

    public boolean isLeader()
    {
        return leader.isLeader(settings.nodeId());
    }

    /** The offset of the last committed record this node has applied, -1 before the first. */
    public long committedOffset()
    {
        return committedOffset;
    }

    /** The fault that stopped this node's voter, if one did (see the class comment). */
    public Optional<Throwable> failure()
    {
        return Optional.ofNullable(failure);
    }

    /** The settings this node's voter was started with. */
    QuorumSettings settings()
    {
        return settings;
    }

    public int nodeId()
    {
        return settings.nodeId();
    }

    /** The voters' node ids, as {@code controller.quorum.voters} names them. */
    public java.util.Set<Integer> voterIds()
    {
        return settings.voterAddresses().keySet();
    }

    /** The quorum directory's persistent id, written at its first start. */
    Uuid directoryId()
    {
        return directoryId;
    }

    /** KRaft itself: {@link ClusterController} and {@link ClusterView} register on its client. */
    KafkaRaftManager<ApiMessageAndVersion> raftManager()
    {
        return raft;
    }

    /** The quorum listener (tests look at its connections; the controller serves its APIs there). */
    RaftInbound inbound()
    {
        return inbound;
    }

    /** The address the quorum listener is bound to. */
    public InetSocketAddress boundAddress() throws IOException
    {
        return inbound.boundAddress();
    }

    @Override
    public void close() throws IOException
    {
        stop();
        failPending("the metadata quorum was closed");
    }

    private synchronized void stop() throws IOException
    {
        if (!stopped)
        {
            stopped = true;
            try
            {
                inbound.close(); // first: no request is handed to a raft client shutting down
                raft.shutdown();
            }
            finally
            {
                metrics.close();
            }
        }
    }

    /** From now on only the {@link ClusterController} appends; {@link #append} is refused (for good). */
    void handOverAppendsToController()
    {
        controllerAppends = true;
    }

    /**
     * The one way a fault goes: the quorum is failed before anyone hears of it (no append is acknowledged
     * and no record delivered after), then KRaft and the listener are stopped from a thread of their own
     * (this may run on KRaft's I/O thread, which its shutdown joins), then the embedder's handler decides.
     */
    private RuntimeException fail(final String what, final Throwable cause)
    {
        LOG.error("metadata quorum fault on node {}: {}", settings.nodeId(), what, cause);
        // not this object's monitor: close() holds that while KafkaRaftManager's shutdown joins the I/O thread,
        // which may be the thread in here
        synchronized (faultLock)
        {
            if (failure == null)
            {
                failure = cause == null ? new IllegalStateException(what) : cause;
                leader = LeaderAndEpoch.UNKNOWN;
                final Thread stopper = new Thread(() ->
                {
                    try
                    {
                        stop();
                    }
                    catch (final IOException | RuntimeException ex)
                    {
                        LOG.warn("stopping the failed metadata quorum", ex);
                    }
                }, "quorum-" + settings.nodeId() + "-fault");
                stopper.setDaemon(true);
                stopper.start();
            }
        }
        pending.failAll(this::failedException);
        return faultHandler.handleFault(what, cause);
    }

    private IllegalStateException failedException()
    {
        return new IllegalStateException("the metadata quorum on node " + settings.nodeId() + " failed", failure);
    }

    private void failPending(final String why)
    {
        pending.failAll(() -> new NotLeaderOrFollowerException(why));
    }

    /** The voters as configured, this node's own entry with the port it is bound to (port 0 asked for). */
    private Map<Integer, InetSocketAddress> advertisedVoters() throws IOException
    {
        final Map<Integer, InetSocketAddress> voters = new java.util.HashMap<>(settings.voterAddresses());
        final InetSocketAddress own = voters.get(settings.nodeId());
        if (own.getPort() == 0)
        {
            voters.put(settings.nodeId(), InetSocketAddress.createUnresolved(own.getHostString(), inbound.boundAddress().getPort()));
        }
        return voters;
    }

    private final class Committed implements RaftClient.Listener<ApiMessageAndVersion>
    {
        @Override
        public void handleCommit(final BatchReader<ApiMessageAndVersion> reader)
        {
            try (reader)
            {
                while (failure == null && reader.hasNext())
                {
                    final Batch<ApiMessageAndVersion> batch = reader.next();
                    long offset = batch.baseOffset();
                    for (final ApiMessageAndVersion record : batch.records())
                    {
                        try
                        {
                            listener.onCommitted(offset, record);
                        }
                        catch (final RuntimeException ex)
                        {
                            fail("applying the committed record at offset " + offset + " failed", ex);
                            return;
                        }
                        offset++;
                    }
                    committedOffset = batch.lastOffset();
                    pending.committed(batch.baseOffset(), batch.lastOffset(), batch.epoch());
                }
            }
        }

        @Override
        public void handleLoadSnapshot(final SnapshotReader<ApiMessageAndVersion> reader)
        {
            // no snapshots are written yet (the log is short); one found is not ours to read
            reader.close();
        }

        @Override
        public void handleLoadBootstrap(final SnapshotReader<ApiMessageAndVersion> reader)
        {
            reader.close();
        }

        @Override
        public void handleLeaderChange(final LeaderAndEpoch newLeader)
        {
            if (failure != null)
            {
                return;
            }
            leader = newLeader;
            if (!newLeader.isLeader(settings.nodeId()))
            {
                failPending("leadership moved to " + newLeader.leaderId() + " in epoch " + newLeader.epoch());
            }
            listener.onLeaderChange(newLeader.leaderId(), newLeader.epoch());
        }
    }
}
