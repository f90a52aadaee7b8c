package io.ferrite.replication.spike;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.ferrite.replication.QuorumSettings;
import io.ferrite.replication.RaftInbound;
import io.ferrite.testing.ChildJvm;
import kafka.raft.KafkaRaftManager;
import kafka.server.KafkaConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.Readable;
import org.apache.kafka.common.protocol.Writable;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.raft.Batch;
import org.apache.kafka.raft.BatchReader;
import org.apache.kafka.raft.Endpoints;
import org.apache.kafka.raft.LeaderAndEpoch;
import org.apache.kafka.raft.QuorumConfig;
import org.apache.kafka.raft.RaftClient;
import org.apache.kafka.server.common.serialization.RecordSerde;
import org.apache.kafka.snapshot.SnapshotReader;

/**
 * SPIKE: one KRaft voter in its own JVM, embedded through Kafka's {@code KafkaRaftManager} (kafka_2.13)
 * with {@link RaftInbound} as its inbound side. Args: {@code nodeId dataDir voters bench}, voters in
 * Kafka's {@code controller.quorum.voters} form. Kafka's quorum defaults (election 1 s, fetch 2 s,
 * linger 25 ms) unless {@code -Dspike.linger.ms} says otherwise.
 */
public final class KraftSpikeNode
{
    /** "FerriteSpike0001" in base64: the cluster id every voter of the spike shares. */
    private static final String CLUSTER_ID = "RmVycml0ZVNwaWtlMDAwMQ";
    private static final ListenerName LISTENER = ListenerName.normalised("CONTROLLER");

    private final int nodeId;
    private final boolean bench;
    private final ExecutorService worker = Executors.newSingleThreadExecutor(r -> new Thread(r, "spike-worker"));
    private final Object commitMonitor = new Object();
    private volatile long committedOffset = -1;
    private volatile boolean benchDone;
    private KafkaRaftManager<String> raft;

    private KraftSpikeNode(final int nodeId, final boolean bench)
    {
        this.nodeId = nodeId;
        this.bench = bench;
    }

    public static void main(final String[] args) throws Exception
    {
        ChildJvm.haltWithParent();
        new KraftSpikeNode(Integer.parseInt(args[0]), Boolean.parseBoolean(args[3])).start(args[1], args[2]);
    }

    private void start(final String dataDir, final String voters) throws Exception
    {
        final Map<Integer, InetSocketAddress> voterAddresses = QuorumConfig.parseVoterConnections(List.of(voters.split(",")));
        final InetSocketAddress self = voterAddresses.get(nodeId);
        final Properties props = new Properties();
        props.put("process.roles", "controller");
        props.put("node.id", Integer.toString(nodeId));
        props.put("controller.quorum.voters", voters);
        props.put("controller.listener.names", LISTENER.value());
        props.put("listeners", LISTENER.value() + "://" + self.getHostString() + ":" + self.getPort());
        props.put("listener.security.protocol.map", LISTENER.value() + ":PLAINTEXT");
        props.put("log.dirs", dataDir);
        props.put("controller.quorum.append.linger.ms", System.getProperty("spike.linger.ms", "25"));
        final KafkaConfig config = KafkaConfig.fromProps(props, false);

        final RaftInbound server = new RaftInbound(self, LISTENER, QuorumSettings.DEFAULT_SOCKET_REQUEST_MAX_BYTES);
        raft = new KafkaRaftManager<>(CLUSTER_ID, config, Uuid.randomUuid(), new StringSerde(),
            new TopicPartition("__cluster_metadata", 0), Uuid.METADATA_TOPIC_ID, Time.SYSTEM, new Metrics(),
            ignoredStaticVoters -> { }, scala.Option.apply("kraft-" + nodeId),
            CompletableFuture.completedFuture(voterAddresses), List.of(),
            Endpoints.fromInetSocketAddresses(Map.of(LISTENER, self)),
            (message, cause) ->
            {
                SpikeReport.event("FATAL", "node=" + nodeId + " " + message + " " + cause);
                Runtime.getRuntime().halt(3);
                return new RuntimeException(message, cause);
            });
        raft.client().register(new Listener());
        server.start(raft, CLUSTER_ID, voterAddresses);
        raft.startup();
        SpikeReport.event("STARTED", "node=" + nodeId + " jvmUptimeMs=" +
            java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime());
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            raft.shutdown();
            try
            {
                server.close();
            }
            catch (final Exception ex)
            {
                // going away anyway
            }
        }));
    }

    /** Appends one record as leader of {@code epoch} and waits until the quorum committed it; nanoseconds. */
    private long appendAndAwaitCommit(final int epoch, final String record) throws InterruptedException
    {
        final long start = System.nanoTime();
        final long offset = raft.client().prepareAppend(epoch, List.of(record));
        raft.client().schedulePreparedAppend();
        synchronized (commitMonitor)
        {
            while (committedOffset < offset)
            {
                commitMonitor.wait();
            }
        }
        return System.nanoTime() - start;
    }

    private void onLeader(final int epoch)
    {
        try
        {
            appendAndAwaitCommit(epoch, "mark:" + nodeId + ":" + epoch);
            if (bench && !benchDone)
            {
                benchDone = true;
                for (int i = 0; i < 100; i++)
                {
                    appendAndAwaitCommit(epoch, "warm:" + i);
                }
                final long[] nanos = new long[1000];
                for (int i = 0; i < nanos.length; i++)
                {
                    nanos[i] = appendAndAwaitCommit(epoch, "broker-heartbeat:" + nodeId + ":" + i);
                }
                SpikeReport.event("BENCH", "node=" + nodeId + " " + SpikeReport.percentiles(nanos));
                SpikeReport.footprint("leader-after-bench");
            }
        }
        catch (final Exception ex)
        {
            SpikeReport.event("APPEND_FAILED", "node=" + nodeId + " epoch=" + epoch + " " + ex);
        }
    }

    private final class Listener implements RaftClient.Listener<String>
    {
        @Override
        public void handleCommit(final BatchReader<String> reader)
        {
            try (reader)
            {
                while (reader.hasNext())
                {
                    final Batch<String> batch = reader.next();
                    for (final String record : batch.records())
                    {
                        if (record.startsWith("mark:"))
                        {
                            SpikeReport.event("MARK", "node=" + nodeId + " record=" + record);
                        }
                    }
                    synchronized (commitMonitor)
                    {
                        committedOffset = batch.lastOffset();
                        commitMonitor.notifyAll();
                    }
                }
            }
        }

        @Override
        public void handleLoadSnapshot(final SnapshotReader<String> reader)
        {
            reader.close();
        }

        @Override
        public void handleLoadBootstrap(final SnapshotReader<String> reader)
        {
            reader.close();
        }

        @Override
        public void handleLeaderChange(final LeaderAndEpoch leader)
        {
            SpikeReport.event("LEADER", "node=" + nodeId + " leader=" + leader.leaderId().orElse(-1) + " epoch=" + leader.epoch());
            if (leader.isLeader(nodeId))
            {
                worker.submit(() -> onLeader(leader.epoch()));
            }
        }
    }

    private static final class StringSerde implements RecordSerde<String>
    {
        @Override
        public int recordSize(final String record, final ObjectSerializationCache cache)
        {
            return record.getBytes(StandardCharsets.UTF_8).length;
        }

        @Override
        public void write(final String record, final ObjectSerializationCache cache, final Writable out)
        {
            out.writeByteArray(record.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String read(final Readable in, final int size)
        {
            return new String(in.readArray(size), StandardCharsets.UTF_8);
        }
    }
}
