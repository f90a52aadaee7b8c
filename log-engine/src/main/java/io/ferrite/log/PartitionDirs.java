package io.ferrite.log;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The children of a log directory as an open finds them: partition directories
 * ({@code <topic>-<partition>}) to load, and what deletions left ({@code <topic>-<partition>.<uuid>-delete},
 * renamed at the deletion and removed after {@code file.delete.delay.ms}: a stop or a crash in between
 * leaves them), which are removed and never loaded — a new partition of the same name may be beside
 * one. Kafka's metadata log ({@code __cluster_metadata-0}) is not a partition log: left alone. Stray logs ({@code <topic>-<partition>.<uuid>-stray}, {@link LogManager#strayLogs}) are never loaded
 * and never removed, as Kafka 4.4 keeps them. Anything else is not Ferrite's and is left alone.
 */
final class PartitionDirs
{
    /**
     * Kafka's KRaft metadata log ({@code __cluster_metadata-0}), found in a Kafka log directory Ferrite starts on: not a
     * partition log (Kafka's own log manager skips it by this name too), never loaded, opened or changed here.
     */
    static final String KAFKA_METADATA_TOPIC = "__cluster_metadata";

    /** A partition directory found. */
    record Found(Path dir, String topic, int partition)
    {
    }

    private PartitionDirs()
    {
    }

    /** The partition directories in {@code logDir}, sorted by name; the leftovers of deletions removed on the way. */
    static List<Found> list(final Path logDir) throws IOException
    {
        final List<Path> children = new ArrayList<>();
        try (Stream<Path> list = Files.list(logDir))
        {
            list.filter(Files::isDirectory).sorted().forEach(children::add);
        }
        final List<Found> found = new ArrayList<>();
        for (final Path p : children)
        {
            final String name = p.getFileName().toString();
            if (name.endsWith(LogDeletion.DELETE_SUFFIX))
            {
                deleteRecursively(p);
                continue;
            }
            if (name.endsWith(LogDeletion.STRAY_SUFFIX))
            {
                continue; // kept for an operator, not served
            }
            final int dash = name.lastIndexOf('-');
            if (dash <= 0 || name.substring(0, dash).equals(KAFKA_METADATA_TOPIC))
            {
                continue;
            }
            try
            {
                found.add(new Found(p, name.substring(0, dash), Integer.parseInt(name.substring(dash + 1))));
            }
            catch (final NumberFormatException ex)
            {
                // not a partition directory
            }
        }
        return found;
    }

    static void deleteRecursively(final Path dir) throws IOException
    {
        try (Stream<Path> files = Files.walk(dir))
        {
            for (final Path p : (Iterable<Path>)files.sorted(Comparator.reverseOrder())::iterator)
            {
                Files.deleteIfExists(p);
            }
        }
    }

    /** How many of {@code logs} each of {@code dirs} holds (the log manager's choice of a new partition's directory). */
    static Map<Path, Integer> countPerDir(final Collection<Path> dirs, final PartitionLog[] logs)
    {
        final Map<Path, Integer> counts = new LinkedHashMap<>();
        for (final Path dir : dirs)
        {
            counts.put(dir, 0);
        }
        if (counts.size() == 1)
        {
            return counts; // nothing to choose between: not worth a walk over every partition
        }
        for (final PartitionLog log : logs)
        {
            counts.computeIfPresent(log.dir().getParent(), (d, n) -> n + 1);
        }
        return counts;
    }
}
