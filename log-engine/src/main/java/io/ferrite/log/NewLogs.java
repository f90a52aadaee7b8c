package io.ferrite.log;

import java.util.Map;

/**
 * One topic's new partitions {@code from} to {@code to - 1} in a {@link LogManager#createLogs(java.util.List, Runnable)}
 * batch, with topic config {@code overrides} and {@code files} written in each new partition's directory.
 */
public record NewLogs(String topic, int from, int to, Map<String, String> overrides, PartitionFiles files)
{
    /** The number of partitions this entry makes. */
    public int count()
    {
        return Math.max(0, to - from);
    }
}
