package io.ferrite.ecosystem.compaction;

import io.ferrite.testing.BrokerNode;
import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

/**
 * What a broker's log cleaner has done, read as an operator would from outside: its log dir's
 * {@code cleaner-offset-checkpoint} (Kafka's format, which Ferrite writes too) against the partition's
 * segment files, and the partition sizes DescribeLogDirs reports.
 */
final class CleanerProgress
{
    static final Duration DEADLINE = Duration.ofSeconds(180);

    private CleanerProgress()
    {
    }

    /**
     * Waits until the cleaner has cleaned the partition up to its active segment (the last {@code .log}
     * file's base offset): nothing below it is left dirty.
     */
    static void awaitCleaned(final BrokerNode broker, final String topic, final int partition)
    {
        final Path partitionDir = broker.partitionDir(topic, partition);
        final long[] seen = {-1, -1};
        Await.await(() ->
        {
            seen[0] = activeSegmentBase(partitionDir);
            seen[1] = checkpointed(partitionDir.getParent().resolve("cleaner-offset-checkpoint"), topic, partition);
            return seen[1] == seen[0];
        }, DEADLINE, () -> broker.name + ": " + topic + "-" + partition + " cleaned up to its active segment at " + seen[0]
            + ", the checkpoint says " + seen[1]);
    }

    /** Base offset of the partition's last segment, or -1 when it has none. */
    static long activeSegmentBase(final Path partitionDir) throws IOException
    {
        try (Stream<Path> files = Files.list(partitionDir))
        {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".log"))
                .mapToLong(n -> Long.parseLong(n.substring(0, n.length() - 4))).max().orElse(-1);
        }
    }

    /**
     * The bytes on disk of the partition's segments below its active one: what a cleaner has cleaned (both
     * brokers cut a rolled segment's file to its batches; Ferrite's active segment file is preallocated).
     */
    static long bytesBelowActive(final Path partitionDir) throws IOException
    {
        final long activeBase = activeSegmentBase(partitionDir);
        long total = 0;
        try (Stream<Path> files = Files.list(partitionDir))
        {
            for (final Path f : (Iterable<Path>) files.filter(p -> p.getFileName().toString().endsWith(".log"))::iterator)
            {
                final String n = f.getFileName().toString();
                if (Long.parseLong(n.substring(0, n.length() - 4)) < activeBase)
                {
                    total += Files.size(f);
                }
            }
        }
        return total;
    }

    /** How many segments the partition has. */
    static long segmentCount(final Path partitionDir) throws IOException
    {
        try (Stream<Path> files = Files.list(partitionDir))
        {
            return files.filter(p -> p.getFileName().toString().endsWith(".log")).count();
        }
    }

    /** The partition's entry in a {@code cleaner-offset-checkpoint} (version, count, then "topic partition offset" lines), or -1. */
    static long checkpointed(final Path checkpoint, final String topic, final int partition) throws IOException
    {
        if (!Files.exists(checkpoint))
        {
            return -1;
        }
        for (final String line : Files.readAllLines(checkpoint, StandardCharsets.UTF_8))
        {
            final String[] parts = line.trim().split(" ");
            if (parts.length == 3 && parts[0].equals(topic) && parts[1].equals(Integer.toString(partition)))
            {
                return Long.parseLong(parts[2]);
            }
        }
        return -1;
    }

    /** The bytes of a topic's partitions as the broker reports them (DescribeLogDirs), the broker being node 1. */
    static long topicBytes(final BrokerNode broker, final String topic) throws Exception
    {
        try (Admin admin = Admin.create(broker.clientConfig()))
        {
            return admin.describeLogDirs(List.of(1)).allDescriptions().get().get(1).values().stream()
                .flatMap(d -> d.replicaInfos().entrySet().stream())
                .filter(e -> e.getKey().topic().equals(topic))
                .mapToLong(e -> e.getValue().size())
                .sum();
        }
    }
}
