package io.ferrite.replication;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.raft.QuorumConfig;

/**
 * The metadata quorum's settings, under Kafka's names: {@code node.id}, {@code process.roles},
 * {@code controller.quorum.voters}, {@code controller.listener.names}, {@code listeners}, and the
 * {@code controller.quorum.*} timings passed through to KRaft as Kafka reads them. With none of them set,
 * one node is its own quorum: node 1, the only voter, on an ephemeral loopback port.
 *
 * <p>Not yet: {@code controller.quorum.bootstrap.servers} (a dynamic quorum, kraft.version 1, needs the
 * bootstrap checkpoint {@code kafka-storage format} writes) and a node that is not a voter (an observer,
 * {@code process.roles=broker}); both are refused with a {@link ConfigException} naming the setting.
 */
public final class QuorumSettings
{
    public static final String NODE_ID = "node.id";
    public static final String PROCESS_ROLES = "process.roles";
    public static final String LISTENERS = "listeners";
    public static final String CONTROLLER_LISTENER_NAMES = "controller.listener.names";
    /** Kafka's: the largest request frame; a larger one (or a negative size) closes its connection. */
    public static final String SOCKET_REQUEST_MAX_BYTES = "socket.request.max.bytes";
    /** Kafka's default, 100 MiB. */
    public static final int DEFAULT_SOCKET_REQUEST_MAX_BYTES = 104_857_600;
    /**
     * Ferrite's own: the cluster id every voter must share, what Kafka's {@code kafka-storage format
     * --cluster-id} writes; kept in the log directory's meta.properties at the first start and checked at
     * every later one. Required with more than one voter; a single voter with none makes one.
     */
    public static final String CLUSTER_ID = "ferrite.cluster.id";

    private final int nodeId;
    private final Optional<String> clusterId;
    private final String voters;
    private final String listenerName;
    private final InetSocketAddress bind;
    private final int maxRequestBytes;
    private final Properties raftProperties;

    private QuorumSettings(final Map<String, String> settings)
    {
        this.nodeId = nodeId(settings.getOrDefault(NODE_ID, "1"));
        this.clusterId = Optional.ofNullable(settings.get(CLUSTER_ID));
        this.listenerName = settings.getOrDefault(CONTROLLER_LISTENER_NAMES, "CONTROLLER").split(",")[0].trim();
        final String roles = settings.getOrDefault(PROCESS_ROLES, "broker,controller");
        if (!List.of(roles.split(",")).stream().map(String::trim).toList().contains("controller"))
        {
            throw new ConfigException(PROCESS_ROLES, roles, "a node that is not a voter (an observer) is not supported yet");
        }
        if (settings.containsKey(QuorumConfig.QUORUM_BOOTSTRAP_SERVERS_CONFIG) &&
            !settings.containsKey(QuorumConfig.QUORUM_VOTERS_CONFIG))
        {
            throw new ConfigException(QuorumConfig.QUORUM_BOOTSTRAP_SERVERS_CONFIG,
                settings.get(QuorumConfig.QUORUM_BOOTSTRAP_SERVERS_CONFIG),
                "a dynamic quorum is not supported yet: name the voters in " + QuorumConfig.QUORUM_VOTERS_CONFIG);
        }
        this.voters = settings.getOrDefault(QuorumConfig.QUORUM_VOTERS_CONFIG, nodeId + "@127.0.0.1:0");
        final InetSocketAddress self = voterAddresses().get(nodeId);
        if (self == null)
        {
            throw new ConfigException(QuorumConfig.QUORUM_VOTERS_CONFIG, voters, "does not name " + NODE_ID + " " + nodeId);
        }
        if (clusterId.isEmpty() && voterAddresses().size() > 1)
        {
            throw new ConfigException(CLUSTER_ID, null, "the voters of " + QuorumConfig.QUORUM_VOTERS_CONFIG +
                " must share a cluster id: name it (Kafka's kafka-storage format --cluster-id)");
        }
        this.bind = listenerAddress(settings.get(LISTENERS), listenerName, self);
        this.maxRequestBytes = positiveInt(settings, SOCKET_REQUEST_MAX_BYTES, DEFAULT_SOCKET_REQUEST_MAX_BYTES);

        raftProperties = new Properties();
        settings.forEach((key, value) ->
        {
            if (key.startsWith("controller.quorum.") && !key.equals(QuorumConfig.QUORUM_BOOTSTRAP_SERVERS_CONFIG))
            {
                raftProperties.put(key, value);
            }
        });
        raftProperties.put(QuorumConfig.QUORUM_VOTERS_CONFIG, voters);
    }

    /** Reads the settings; an empty map is the single node that is its own quorum. */
    public static QuorumSettings from(final Map<String, String> settings)
    {
        return new QuorumSettings(settings);
    }

    public int nodeId()
    {
        return nodeId;
    }

    /** {@code ferrite.cluster.id}, if set. */
    public Optional<String> clusterId()
    {
        return clusterId;
    }

    public String listenerName()
    {
        return listenerName;
    }

    /**
     * Where this node's quorum listener binds (port 0 only for the zero-configuration single voter): the
     * wildcard address for Kafka's {@code CONTROLLER://:port}. Other voters reach it at its
     * {@code controller.quorum.voters} address, which is what KRaft and DescribeCluster show.
     */
    public InetSocketAddress bindAddress()
    {
        return bind;
    }

    /** {@code socket.request.max.bytes}: the largest request the quorum listener reads. */
    public int maxRequestBytes()
    {
        return maxRequestBytes;
    }

    /** The voters by node id, as {@code controller.quorum.voters} names them (unresolved). */
    public Map<Integer, InetSocketAddress> voterAddresses()
    {
        return QuorumConfig.parseVoterConnections(List.of(voters.split(",")));
    }

    /** The settings KRaft reads ({@code controller.quorum.*}), for the KafkaConfig the raft manager takes. */
    Properties raftProperties()
    {
        final Properties copy = new Properties();
        copy.putAll(raftProperties);
        return copy;
    }

    private static int nodeId(final String value)
    {
        try
        {
            return Integer.parseInt(value.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw new ConfigException(NODE_ID, value, "must be an int");
        }
    }

    private static int positiveInt(final Map<String, String> settings, final String name, final int defaultValue)
    {
        final String value = settings.get(name);
        if (value == null)
        {
            return defaultValue;
        }
        try
        {
            final int parsed = Integer.parseInt(value.trim());
            if (parsed > 0)
            {
                return parsed;
            }
        }
        catch (final NumberFormatException ex)
        {
            // refused below
        }
        throw new ConfigException(name, value, "must be a positive int");
    }

    /** The {@code NAME://host:port} entry of {@code listeners} for the controller listener, else the voter address. */
    private static InetSocketAddress listenerAddress(final String listeners, final String name, final InetSocketAddress voter)
    {
        if (listeners != null)
        {
            for (final String listener : listeners.split(","))
            {
                final String entry = listener.trim();
                if (entry.startsWith(name + "://"))
                {
                    final String hostPort = entry.substring(name.length() + 3);
                    final int colon = hostPort.lastIndexOf(':');
                    final String host = hostPort.substring(0, colon);
                    final int port = Integer.parseInt(hostPort.substring(colon + 1));
                    // Kafka's form for every interface is an empty host (CONTROLLER://:9093); "" would resolve
                    // to the loopback address
                    return host.isEmpty() ? new InetSocketAddress(port) : InetSocketAddress.createUnresolved(host, port);
                }
            }
        }
        return voter;
    }
}
