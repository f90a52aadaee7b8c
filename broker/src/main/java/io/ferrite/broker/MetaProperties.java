package io.ferrite.broker;

import io.ferrite.log.config.PropertiesFile;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;

/**
 * {@code meta.properties} in the first log directory, as Kafka keeps it: the cluster id (written on
 * first start) and the node id the directory belongs to. A directory formatted for another node id
 * is refused, as Kafka refuses it; so is a file that cannot be read as properties, rather than
 * overwritten, since it may be the only record of which cluster the data belongs to.
 */
final class MetaProperties
{
    static final String FILE = "meta.properties";

    private MetaProperties()
    {
    }

    /** The cluster id of the directory, written with {@code nodeId} when there is none yet. */
    static String clusterId(final Path dir, final int nodeId) throws IOException
    {
        final Path file = dir.resolve(FILE);
        final Properties meta = new Properties();
        if (Files.exists(file))
        {
            try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8))
            {
                meta.load(reader);
            }
            catch (final IOException | IllegalArgumentException ex) // IllegalArgumentException: a malformed unicode escape
            {
                throw new StartupException(file + " is not a valid meta.properties: " + StartupException.reason(ex), ex);
            }
            final String storedNode = meta.getProperty("node.id");
            if (storedNode != null && storedNodeId(file, storedNode.trim()) != nodeId)
            {
                throw new StartupException("node.id=" + nodeId + " does not match node.id=" + storedNode.trim() + " stored in " + file
                    + ": this data belongs to node " + storedNode.trim() + " (configure that node id, or another log.dir)");
            }
            final String id = meta.getProperty("cluster.id");
            if (id != null && !id.isBlank())
            {
                return id.trim();
            }
        }
        final UUID uuid = UUID.randomUUID();
        final java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocate(16)
            .putLong(uuid.getMostSignificantBits()).putLong(uuid.getLeastSignificantBits());
        final String id = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes.array());
        meta.setProperty("version", "1");
        meta.setProperty("node.id", Integer.toString(nodeId));
        meta.setProperty("cluster.id", id);
        final Map<String, String> values = new HashMap<>();
        for (final String name : meta.stringPropertyNames())
        {
            values.put(name, meta.getProperty(name));
        }
        try
        {
            PropertiesFile.write(file, values, null);
        }
        catch (final IOException ex)
        {
            throw new StartupException("cannot write " + file + ": " + StartupException.reason(ex), ex);
        }
        return id;
    }

    private static int storedNodeId(final Path file, final String stored) throws StartupException
    {
        try
        {
            return Integer.parseInt(stored);
        }
        catch (final NumberFormatException ex)
        {
            throw new StartupException(file + " is not a valid meta.properties: node.id '" + stored + "' is not a number", ex);
        }
    }
}
