package io.ferrite.log;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Files a log's user keeps in a new partition's directory (the broker's {@code partition.metadata}),
 * written by {@link LogManager#createLogs(String, int, int, java.util.Map, PartitionFiles)} after the
 * partition's own files and before the directory is fsynced: each file's content must be durable when
 * {@link #write} returns (e.g. {@link io.ferrite.log.config.DurableFile#writeInPlace}); its directory
 * entry is made durable by the creation's one fsync of the partition directory.
 */
@FunctionalInterface
public interface PartitionFiles
{
    PartitionFiles NONE = (partitionDir, partition) -> { };

    void write(Path partitionDir, int partition) throws IOException;
}
