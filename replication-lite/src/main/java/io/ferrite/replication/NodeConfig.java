package io.ferrite.replication;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;

import kafka.server.KafkaConfig;

/**
 * The {@link KafkaConfig} Kafka's controller and broker classes read, made from a node's quorum settings and the
 * embedder's settings in Kafka's names (Kafka's defaults and validation, one home for every knob): the controller's
 * ({@code process.roles=controller}) and the broker's view of the same node in combined mode
 * ({@code process.roles=broker,controller}, with the broker listener).
 */
final class NodeConfig
{
    private NodeConfig()
    {
    }

    /** What {@link ClusterController} reads: {@code broker.session.timeout.ms}, {@code num.partitions}, ... */
    static KafkaConfig controller(final MetadataQuorum quorum, final Map<String, String> settings)
    {
        final QuorumSettings quorumSettings = quorum.settings();
        final Properties props = common(quorum, settings);
        final InetSocketAddress controller = quorumSettings.voterAddresses().get(quorum.nodeId());
        props.put("process.roles", "controller");
        props.put("listeners", quorumSettings.listenerName() + "://" + controller.getHostString() + ":" + controller.getPort());
        props.put("listener.security.protocol.map", quorumSettings.listenerName() + ":PLAINTEXT");
        return KafkaConfig.fromProps(props, false);
    }

    /** What {@link BrokerMembership} reads: {@code broker.heartbeat.interval.ms}, {@code broker.session.timeout.ms}, ... */
    static KafkaConfig broker(final MetadataQuorum quorum, final Map<String, String> settings,
        final InetSocketAddress brokerListener, final Path logDir)
    {
        final QuorumSettings quorumSettings = quorum.settings();
        final Properties props = common(quorum, settings);
        final String controllerListener = quorumSettings.listenerName();
        final InetSocketAddress controller = quorumSettings.voterAddresses().get(quorum.nodeId());
        props.put("process.roles", "broker,controller");
        props.put("listeners", "PLAINTEXT://" + brokerListener.getHostString() + ":" + brokerListener.getPort() + "," +
            controllerListener + "://" + controller.getHostString() + ":" + controller.getPort());
        props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT," + controllerListener + ":PLAINTEXT");
        props.put("log.dirs", logDir.toString());
        return KafkaConfig.fromProps(props, false);
    }

    private static Properties common(final MetadataQuorum quorum, final Map<String, String> settings)
    {
        final Properties props = quorum.settings().raftProperties();
        props.putAll(settings);
        props.put("node.id", Integer.toString(quorum.nodeId()));
        props.put("controller.listener.names", quorum.settings().listenerName());
        return props;
    }
}
