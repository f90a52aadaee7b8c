package io.ferrite.log;

import io.ferrite.log.config.DurableFile;
import io.ferrite.log.config.PropertiesFile;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

/** A partition's own topic config overrides, in {@code partition.properties} in its directory. */
final class PartitionOverrides
{
    static final String PARTITION_CONFIG_FILE = "partition.properties";
    private static final String COMMENT = "topic config overrides of this partition";

    private PartitionOverrides()
    {
    }

    /** The overrides as stored: none when there is no file. */
    static Map<String, String> read(final Path partitionDir) throws IOException
    {
        final Path file = partitionDir.resolve(PARTITION_CONFIG_FILE);
        final Map<String, String> overrides = new HashMap<>();
        if (Files.exists(file))
        {
            final Properties props = new Properties();
            try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8))
            {
                props.load(in);
            }
            props.forEach((k, v) -> overrides.put((String)k, (String)v));
        }
        return overrides;
    }

    /**
     * Stores a partition's overrides, durable on return; none is no file (a file per partition is a
     * disk block per partition).
     */
    static void write(final Path partitionDir, final Map<String, String> overrides) throws IOException
    {
        final Path file = partitionDir.resolve(PARTITION_CONFIG_FILE);
        if (!overrides.isEmpty())
        {
            PropertiesFile.write(file, overrides, COMMENT);
        }
        else if (Files.deleteIfExists(file))
        {
            DurableFile.fsyncDirectory(partitionDir);
        }
    }

    /**
     * Stores a new partition's overrides (none: no file), not yet fsynced: its creation fsyncs the
     * file (with {@link #fsyncNew}) and the directory once the batch's directories are all made.
     */
    static void writeNew(final Path partitionDir, final Map<String, String> overrides) throws IOException
    {
        if (!overrides.isEmpty())
        {
            PropertiesFile.writeNew(partitionDir.resolve(PARTITION_CONFIG_FILE), overrides, COMMENT);
        }
    }

    /** Makes what {@link #writeNew} wrote durable (not its name: that is the directory's fsync). */
    static void fsyncNew(final Path partitionDir, final Map<String, String> overrides) throws IOException
    {
        if (!overrides.isEmpty())
        {
            DurableFile.fsyncFile(partitionDir.resolve(PARTITION_CONFIG_FILE));
        }
    }
}
