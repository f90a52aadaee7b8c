package io.ferrite.replication.spike;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import com.alipay.sofa.jraft.Iterator;
import com.alipay.sofa.jraft.Node;
import com.alipay.sofa.jraft.RaftGroupService;
import com.alipay.sofa.jraft.Status;
import com.alipay.sofa.jraft.conf.Configuration;
import com.alipay.sofa.jraft.core.StateMachineAdapter;
import com.alipay.sofa.jraft.entity.LeaderChangeContext;
import com.alipay.sofa.jraft.entity.PeerId;
import com.alipay.sofa.jraft.entity.Task;
import com.alipay.sofa.jraft.option.NodeOptions;
import io.ferrite.testing.ChildJvm;

/**
 * SPIKE: one SOFAJRaft voter in its own JVM (RaftGroupService with its own bolt RPC server, RocksDB log
 * storage). Args: {@code nodeId dataDir voters bench}, voters as {@code id@host:port,...} like KRaft's so
 * the driver is shared; the id maps to the peer at that address. JRaft's defaults (election timeout 1 s)
 * unless {@code -Dspike.election.ms} says otherwise.
 */
public final class JraftSpikeNode
{
    private final int nodeId;
    private final boolean bench;
    private final ExecutorService worker = Executors.newSingleThreadExecutor(r -> new Thread(r, "spike-worker"));
    private final java.util.Map<String, Integer> idByAddress = new java.util.HashMap<>();
    private volatile boolean benchDone;
    private Node node;

    private JraftSpikeNode(final int nodeId, final boolean bench)
    {
        this.nodeId = nodeId;
        this.bench = bench;
    }

    public static void main(final String[] args) throws Exception
    {
        ChildJvm.haltWithParent();
        new JraftSpikeNode(Integer.parseInt(args[0]), Boolean.parseBoolean(args[3])).start(args[1], args[2]);
    }

    private void start(final String dataDir, final String voters) throws java.io.IOException
    {
        java.nio.file.Files.createDirectories(java.nio.file.Path.of(dataDir)); // RocksDB makes one level only
        final StringBuilder conf = new StringBuilder();
        PeerId self = null;
        for (final String voter : voters.split(","))
        {
            final String address = voter.substring(voter.indexOf('@') + 1);
            conf.append(conf.length() == 0 ? "" : ",").append(address);
            idByAddress.put(address, Integer.parseInt(voter.substring(0, voter.indexOf('@'))));
            if (Integer.parseInt(voter.substring(0, voter.indexOf('@'))) == nodeId)
            {
                self = PeerId.parsePeer(address);
            }
        }
        final NodeOptions options = new NodeOptions();
        options.setElectionTimeoutMs(Integer.getInteger("spike.election.ms", 1000));
        options.setInitialConf(parsed(conf.toString()));
        options.setFsm(new Fsm());
        options.setLogUri(dataDir + "/log");
        options.setRaftMetaUri(dataDir + "/meta");
        final RaftGroupService service = new RaftGroupService("metadata", self, options);
        node = service.start();
        SpikeReport.event("STARTED", "node=" + nodeId + " jvmUptimeMs=" +
            java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime());
        Runtime.getRuntime().addShutdownHook(new Thread(service::shutdown));
    }

    private static Configuration parsed(final String conf)
    {
        final Configuration configuration = new Configuration();
        configuration.parse(conf);
        return configuration;
    }

    private long appendAndAwaitCommit(final String record) throws Exception
    {
        final long start = System.nanoTime();
        final CompletableFuture<Status> done = new CompletableFuture<>();
        node.apply(new Task(ByteBuffer.wrap(record.getBytes(StandardCharsets.UTF_8)), done::complete));
        final Status status = done.get();
        if (!status.isOk())
        {
            throw new IllegalStateException(status.toString());
        }
        return System.nanoTime() - start;
    }

    private void onLeader(final long term)
    {
        try
        {
            appendAndAwaitCommit("mark:" + nodeId + ":" + term);
            if (bench && !benchDone)
            {
                benchDone = true;
                for (int i = 0; i < 100; i++)
                {
                    appendAndAwaitCommit("warm:" + i);
                }
                final long[] nanos = new long[1000];
                for (int i = 0; i < nanos.length; i++)
                {
                    nanos[i] = appendAndAwaitCommit("broker-heartbeat:" + nodeId + ":" + i);
                }
                SpikeReport.event("BENCH", "node=" + nodeId + " " + SpikeReport.percentiles(nanos));
                SpikeReport.footprint("leader-after-bench");
            }
        }
        catch (final Exception ex)
        {
            SpikeReport.event("APPEND_FAILED", "node=" + nodeId + " term=" + term + " " + ex);
        }
    }

    private final class Fsm extends StateMachineAdapter
    {
        @Override
        public void onApply(final Iterator iterator)
        {
            while (iterator.hasNext())
            {
                final String record = StandardCharsets.UTF_8.decode(iterator.getData()).toString();
                if (record.startsWith("mark:"))
                {
                    SpikeReport.event("MARK", "node=" + nodeId + " record=" + record);
                }
                if (iterator.done() != null)
                {
                    iterator.done().run(Status.OK());
                }
                iterator.next();
            }
        }

        @Override
        public void onLeaderStart(final long term)
        {
            SpikeReport.event("LEADER", "node=" + nodeId + " leader=" + nodeId + " epoch=" + term);
            worker.submit(() -> onLeader(term));
        }

        @Override
        public void onStartFollowing(final LeaderChangeContext context)
        {
            SpikeReport.event("LEADER", "node=" + nodeId + " leader=" +
                idByAddress.getOrDefault(context.getLeaderId().getEndpoint().toString(), -1) + " epoch=" + context.getTerm());
        }
    }
}
