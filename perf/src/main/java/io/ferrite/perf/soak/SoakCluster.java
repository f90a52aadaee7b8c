package io.ferrite.perf.soak;

import io.ferrite.perf.sidebyside.BrokerProcess;
import io.ferrite.perf.sidebyside.BrokerProcess.Kind;
import io.ferrite.perf.sidebyside.ChildPorts;
import io.ferrite.perf.sidebyside.ThreeNodes;
import org.apache.kafka.common.Uuid;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Three nodes on loopback (child JVMs, each broker and controller, Kafka 4.4 or Ferrite, as {@link ThreeNodes} starts
 * them) with a {@link LinkProxy} in front of each node's broker and controller listener: each node listens on its own
 * ports but advertises its broker proxy's port (so producers, consumers and the other nodes' replica fetchers reach it
 * through the proxy) and every node's {@code controller.quorum.voters} names the controller proxies (so the raft
 * client's and the broker-to-controller channel's connections go through them too). The nemesis acts on it: SIGKILL
 * and restart, SIGSTOP and SIGCONT of a node's process, and the {@link Links}.
 */
final class SoakCluster implements AutoCloseable
{
    static final int NODES = 3;

    final Kind kind;
    final Path dir;
    final Links links = new Links(NODES);
    /** Written under this object's lock; read by the proxies' accept threads without it (a stale one is as good). */
    private final BrokerProcess[] nodes = new BrokerProcess[NODES + 1];
    private final int[] proxyPorts = new int[NODES + 1];
    private final List<LinkProxy> proxies = new ArrayList<>();
    private final int[] restarts = new int[NODES + 1];
    private final boolean[] stopped = new boolean[NODES + 1];

    private SoakCluster(final Kind kind, final Path dir)
    {
        this.kind = kind;
        this.dir = dir;
    }

    static SoakCluster start(final Kind kind, final String heap, final String classPath, final List<String> overrides)
        throws IOException, InterruptedException
    {
        final SoakCluster cluster = new SoakCluster(kind, Files.createTempDirectory("soak-" + kind.name().toLowerCase()));
        try
        {
            cluster.spawn(heap, classPath, overrides);
            return cluster;
        }
        catch (final IOException | InterruptedException | RuntimeException ex)
        {
            cluster.close();
            throw ex;
        }
    }

    private void spawn(final String heap, final String classPath, final List<String> overrides)
        throws IOException, InterruptedException
    {
        final PeerIdentity peers = new PeerIdentity(NODES, this::pid);
        final int[] ports = new int[NODES + 1];
        final int[] controllerPorts = new int[NODES + 1];
        final StringBuilder voters = new StringBuilder();
        for (int id = 1; id <= NODES; id++)
        {
            ports[id] = ChildPorts.take();
            controllerPorts[id] = ChildPorts.take();
            final ServerSocket broker = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            final ServerSocket controller = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            proxies.add(new LinkProxy(id, ports[id], links, peers, broker));
            proxies.add(new LinkProxy(id, controllerPorts[id], links, peers, controller));
            proxyPorts[id] = broker.getLocalPort();
            voters.append(id == 1 ? "" : ",").append(id).append("@127.0.0.1:").append(controller.getLocalPort());
        }
        final String clusterId = Uuid.randomUuid().toString();
        final List<List<String>> commands = new ArrayList<>();
        final List<BrokerProcess.Formatting> formats = new ArrayList<>();
        for (int id = 1; id <= NODES; id++)
        {
            final List<String> settings = new ArrayList<>(List.of("node.id=" + id, "process.roles=broker,controller",
                "controller.quorum.voters=" + voters, "controller.listener.names=CONTROLLER",
                "listeners=PLAINTEXT://127.0.0.1:" + ports[id] + ",CONTROLLER://127.0.0.1:" + controllerPorts[id],
                "advertised.listeners=PLAINTEXT://127.0.0.1:" + proxyPorts[id]));
            commands.add(ThreeNodes.nodeCommand(kind, heap, classPath, Files.createDirectories(dir.resolve("node-" + id)),
                settings, overrides, clusterId, formats));
        }
        for (final BrokerProcess.Formatting f : formats)
        {
            f.await();
        }
        for (int id = 1; id <= NODES; id++)
        {
            nodes[id] = BrokerProcess.spawn(kind, dir.resolve("node-" + id), ports[id], commands.get(id - 1));
        }
    }

    /** The pid of node {@code id}'s process now, or -1 when it is not running. */
    long pid(final int id)
    {
        final BrokerProcess n = nodes[id];
        return n != null && n.process.isAlive() ? n.process.pid() : -1;
    }

    /** Every node through its broker proxy (the clients' bootstrap list). */
    String bootstrap()
    {
        final StringBuilder b = new StringBuilder();
        for (int id = 1; id <= NODES; id++)
        {
            b.append(id == 1 ? "" : ",").append("127.0.0.1:").append(proxyPorts[id]);
        }
        return b.toString();
    }

    BrokerProcess node(final int id)
    {
        return nodes[id];
    }

    /** SIGKILL to node {@code id}, waiting for its exit; its files stay as the kill left them. */
    synchronized void kill(final int id) throws InterruptedException
    {
        if (stopped[id])
        {
            resume(id); // a stopped process takes SIGKILL too, but leave no flag behind
        }
        nodes[id].kill();
    }

    /** Starts node {@code id} again on its files and ports (output in restart-N.log). */
    synchronized void restart(final int id) throws IOException
    {
        if (!nodes[id].process.isAlive())
        {
            nodes[id] = nodes[id].restart("restart-" + (++restarts[id]) + ".log");
        }
    }

    /** SIGSTOP to node {@code id}'s process: it stops at once, its sockets stay open and unanswered. */
    synchronized void pause(final int id) throws IOException, InterruptedException
    {
        signal(id, "STOP");
        stopped[id] = true;
    }

    /** SIGCONT to node {@code id}'s process. */
    synchronized void resume(final int id) throws InterruptedException
    {
        try
        {
            signal(id, "CONT");
        }
        catch (final IOException ex)
        {
            // the process is gone
        }
        stopped[id] = false;
    }

    private void signal(final int id, final String signal) throws IOException, InterruptedException
    {
        final long pid = pid(id);
        if (pid <= 0)
        {
            throw new IOException("node " + id + " is not running");
        }
        final Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true).start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0)
        {
            throw new IOException("kill -" + signal + " " + pid + " failed: " + new String(kill.getInputStream().readAllBytes()));
        }
    }

    /** Every fault undone: every stopped node continued, every dead node started again, every link passing. */
    synchronized void healAll() throws IOException, InterruptedException
    {
        for (int id = 1; id <= NODES; id++)
        {
            if (stopped[id])
            {
                resume(id);
            }
            restart(id);
        }
        links.healAll();
    }

    /** WARN-and-above lines of every node's output files, at most {@code max} per file. */
    List<String> problems(final int max)
    {
        final List<String> out = new ArrayList<>();
        for (int id = 1; id <= NODES; id++)
        {
            final List<String> logs = new ArrayList<>(List.of("broker.log"));
            for (int r = 1; r <= restarts[id]; r++)
            {
                logs.add("restart-" + r + ".log");
            }
            for (final String log : logs)
            {
                for (final String line : nodes[id].problems(log, max))
                {
                    out.add("node " + id + " " + log + ": " + line);
                }
            }
        }
        return out;
    }

    /** SIGCONT and SIGKILL to every node, the proxies closed, the directory deleted unless {@code -Dsidebyside.keep=true}. */
    @Override
    public void close() throws IOException, InterruptedException
    {
        for (int id = 1; id <= NODES; id++)
        {
            if (nodes[id] != null)
            {
                if (stopped[id])
                {
                    resume(id);
                }
                nodes[id].kill();
            }
        }
        for (final LinkProxy p : proxies)
        {
            p.close();
        }
        if (!Boolean.getBoolean("sidebyside.keep"))
        {
            try (Stream<Path> files = Files.walk(dir))
            {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
