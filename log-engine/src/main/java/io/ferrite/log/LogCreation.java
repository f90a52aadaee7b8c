package io.ferrite.log;

import io.ferrite.log.config.DurableFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The making of a batch of new partition logs for {@link LogManager#createLogs}: each partition's
 * directory made in the log directory holding the fewest partitions, its overrides written at once
 * (a crash from there on finds them with the directory) and its log opened; then, several partitions
 * at a time ({@link CreationFsyncs}), the overrides file fsynced, the caller's {@link PartitionFiles}
 * written and the partition directory fsynced, so that every file in it is there after a power loss;
 * then each log directory that took one fsynced once (one fsync for all their entries, not one per
 * partition). All or nothing: a failure closes and removes what the batch made. A directory found in
 * place is loaded as a start would load it, its overrides replaced (durably) and the caller's files
 * written in it; a failure leaves it so.
 */
final class LogCreation
{
    private static final Pattern LEGAL_TOPIC = Pattern.compile("[a-zA-Z0-9._-]{1,249}");

    private LogCreation()
    {
    }

    /** @throws IllegalArgumentException for a topic name Kafka refuses, or a negative partition */
    static void validateName(final String topic, final int partition)
    {
        if (topic == null || !LEGAL_TOPIC.matcher(topic).matches() || topic.equals(".") || topic.equals(".."))
        {
            throw new IllegalArgumentException("illegal topic name '" + topic + "'");
        }
        if (partition < 0)
        {
            throw new IllegalArgumentException("illegal partition " + partition);
        }
    }

    /**
     * Makes partitions {@code from} to {@code to - 1} of {@code topic}; {@code perDir} is how many
     * partitions each log directory holds, counted up as this chooses.
     */
    static PartitionLog[] make(final String topic, final int from, final int to, final Map<String, String> overrides,
        final PartitionFiles files, final CreationFsyncs fsyncs, final LogConfig logConfig, final LogManagerConfig config,
        final Map<Path, Integer> perDir, final Map<Path, LogEnvironment> environments) throws IOException
    {
        final PartitionLog[] made = new PartitionLog[Math.max(0, to - from)];
        final boolean[] ours = new boolean[made.length]; // directories this batch made: the only ones a failure removes
        final Set<Path> touched = new LinkedHashSet<>();
        Path making = null;
        final boolean[] interrupted = new boolean[1];
        try
        {
            for (int p = from; p < to; p++)
            {
                final Path dir = chooseDir(perDir);
                touched.add(dir);
                final Path partitionDir = dir.resolve(OffsetCheckpoint.key(topic, p));
                final PartitionLog log;
                if (Files.exists(partitionDir))
                {
                    // not ours to remove on a failure: loaded as it is, as a start would
                    PartitionOverrides.write(partitionDir, overrides);
                    log = LogLoader.load(topic, p, partitionDir, logConfig, config.writeStrategy(), config.clock(),
                        environments.get(dir), false, 0, 0);
                }
                else
                {
                    Files.createDirectory(partitionDir);
                    making = partitionDir;
                    PartitionOverrides.writeNew(partitionDir, overrides);
                    log = LogLoader.create(topic, p, partitionDir, logConfig, config.writeStrategy(), config.clock(),
                        environments.get(dir));
                    making = null;
                    ours[p - from] = true;
                }
                made[p - from] = log;
            }
            fsyncs.finish(made, from, (partitionDir, partition) ->
            {
                if (ours[partition - from]) // a directory found in place had its overrides written durably
                {
                    PartitionOverrides.fsyncNew(partitionDir, overrides);
                }
                files.write(partitionDir, partition);
            }, interrupted);
            for (final Path dir : touched)
            {
                DurableFile.fsyncDirectory(dir);
            }
            return made;
        }
        catch (final IOException | RuntimeException ex)
        {
            removeUnpublished(made, ours, making, ex);
            throw ex;
        }
        finally
        {
            if (interrupted[0])
            {
                Thread.currentThread().interrupt(); // kept for the caller: taken earlier, it would fail the fsyncs above
            }
        }
    }

    /** The directory holding the fewest partitions, as Kafka chooses, counting those chosen before in {@code perDir}. */
    private static Path chooseDir(final Map<Path, Integer> perDir)
    {
        Path chosen = null;
        for (final Map.Entry<Path, Integer> e : perDir.entrySet())
        {
            if (chosen == null || e.getValue() < perDir.get(chosen))
            {
                chosen = e.getKey();
            }
        }
        if (chosen == null)
        {
            throw new IllegalStateException("no log directory");
        }
        perDir.merge(chosen, 1, Integer::sum);
        return chosen;
    }

    /**
     * After a failure: the batch's logs closed, and the directories it made (and the one half made)
     * deleted, best effort; a directory it found and loaded is left as it was found.
     */
    private static void removeUnpublished(final PartitionLog[] made, final boolean[] ours, final Path halfMade,
        final Exception cause)
    {
        final List<Path> dirs = new ArrayList<>();
        for (int i = 0; i < made.length; i++)
        {
            final PartitionLog log = made[i];
            if (log != null)
            {
                if (ours[i])
                {
                    dirs.add(log.dir());
                }
                try
                {
                    log.close();
                }
                catch (final IOException | RuntimeException ex)
                {
                    cause.addSuppressed(ex);
                }
            }
        }
        if (halfMade != null)
        {
            dirs.add(halfMade);
        }
        for (final Path dir : dirs)
        {
            try
            {
                if (Files.exists(dir))
                {
                    PartitionDirs.deleteRecursively(dir);
                    DurableFile.fsyncDirectory(dir.getParent());
                }
            }
            catch (final IOException | RuntimeException ex)
            {
                cause.addSuppressed(ex);
            }
        }
    }
}
