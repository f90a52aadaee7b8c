package io.ferrite.replication;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalInt;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.metadata.properties.MetaProperties;
import org.apache.kafka.metadata.properties.MetaPropertiesVersion;
import org.apache.kafka.metadata.properties.PropertiesUtils;

/**
 * Whose log a quorum directory holds: Kafka's {@code meta.properties} (version 1: {@code cluster.id},
 * {@code node.id}, {@code directory.id}), written at the first start (to a temporary file, fsynced, moved,
 * the directory fsynced: Kafka's PropertiesUtils) and checked at every later one. A directory of another
 * cluster or node is refused, as Kafka refuses it: its log could otherwise win an election with a longer,
 * higher-epoch log of another cluster and make the voters truncate theirs to it.
 *
 * @param clusterId   the cluster the log belongs to
 * @param directoryId the replica directory id KRaft sends in votes
 */
record QuorumDirectory(String clusterId, Uuid directoryId)
{
    static final String FILE = "meta.properties";

    /**
     * Reads {@code logDir/meta.properties}, or writes it when the directory is new: with the configured
     * cluster id, else (a single voter with no settings) a new random one, kept from then on.
     *
     * @throws ConfigException naming {@code node.id} or {@code ferrite.cluster.id} when the directory
     *                         belongs to another node or cluster, or naming the file when it cannot be read
     */
    static QuorumDirectory open(final Path logDir, final int nodeId, final Optional<String> configuredClusterId)
    {
        final Path file = logDir.resolve(FILE);
        try
        {
            if (!Files.exists(file))
            {
                final MetaProperties created = new MetaProperties.Builder().setVersion(MetaPropertiesVersion.V1)
                    .setClusterId(configuredClusterId.orElseGet(() -> Uuid.randomUuid().toString()))
                    .setNodeId(nodeId).setDirectoryId(Uuid.randomUuid()).build();
                PropertiesUtils.writePropertiesFile(created.toProperties(), file.toString(), true);
                return new QuorumDirectory(created.clusterId().orElseThrow(), created.directoryId().orElseThrow());
            }
            final MetaProperties stored;
            try
            {
                stored = new MetaProperties.Builder(PropertiesUtils.readPropertiesFile(file.toString())).build();
            }
            catch (final RuntimeException ex)
            {
                throw new ConfigException(file + " cannot be read (" + ex.getMessage() + "): delete it only if the log " +
                    "next to it is this node's");
            }
            if (!stored.nodeId().equals(OptionalInt.of(nodeId)))
            {
                throw new ConfigException(QuorumSettings.NODE_ID, nodeId, "the log in " + logDir + " is node " +
                    stored.nodeId() + "'s (" + file + ")");
            }
            final String clusterId = stored.clusterId().orElseThrow(() -> new ConfigException(file + " has no cluster.id"));
            if (configuredClusterId.isPresent() && !configuredClusterId.get().equals(clusterId))
            {
                throw new ConfigException(QuorumSettings.CLUSTER_ID, configuredClusterId.get(), "the log in " + logDir +
                    " belongs to cluster " + clusterId + " (" + file + ")");
            }
            return new QuorumDirectory(clusterId, stored.directoryId().orElseThrow(
                () -> new ConfigException(file + " has no directory.id")));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }
}
