package io.ferrite.broker.admin;

import io.ferrite.log.config.DurableFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;

/**
 * What a failed creation may leave behind: partition directories of a topic answered as created whose files failed
 * (its cleanup is best effort, and a crash or a second failure leaves some). Before a DeleteTopics of such a topic
 * journals its DELETE they are renamed for deletion, durably, so the next start removes them instead of loading them as
 * a topic with a new id ({@link PendingCreations#forget}).
 */
final class CreationLeftovers
{
    private CreationLeftovers()
    {
    }

    /** A failed topic's partition directories, if its cleanup left any, renamed for deletion (removed by the next start). */
    static void renameForDeletion(final List<Path> logDirs, final String name) throws IOException
    {
        renameForDeletion(logDirs, name, 0);
    }

    /**
     * {@link #renameForDeletion(List, String)} of the partitions from {@code from} on alone: those of a published topic
     * whose files failed from there ({@code io.ferrite.broker.topic.Topic#isOffline}); the ones before are its open logs.
     */
    static void renameForDeletion(final List<Path> logDirs, final String name, final int from) throws IOException
    {
        for (final Path dir : logDirs)
        {
            final List<Path> left;
            try (java.util.stream.Stream<Path> list = Files.list(dir))
            {
                left = list.filter(d -> isPartitionOf(d.getFileName().toString(), name)
                    && index(d.getFileName().toString(), name) >= from && Files.isDirectory(d)).toList();
            }
            for (final Path d : left)
            {
                final String suffix = "." + UUID.randomUUID().toString().replace("-", "") + "-delete";
                final String kept = d.getFileName().toString();
                Files.move(d, d.resolveSibling(kept.substring(0, Math.min(kept.length(), 255 - suffix.length())) + suffix));
            }
            if (!left.isEmpty())
            {
                DurableFile.fsyncDirectory(dir);
            }
        }
    }

    /** The partition of {@code file}, {@code <name>-<partition>} ({@link #isPartitionOf}); a number past an int's: the largest. */
    private static int index(final String file, final String name)
    {
        final String digits = file.substring(name.length() + 1);
        return digits.length() > 9 ? Integer.MAX_VALUE : Integer.parseInt(digits);
    }

    /** Whether {@code file} is {@code <name>-<partition>}. */
    static boolean isPartitionOf(final String file, final String name)
    {
        if (!file.startsWith(name) || file.length() < name.length() + 2 || file.charAt(name.length()) != '-')
        {
            return false;
        }
        for (int i = name.length() + 1; i < file.length(); i++)
        {
            if (!Character.isDigit(file.charAt(i)))
            {
                return false;
            }
        }
        return true;
    }
}
