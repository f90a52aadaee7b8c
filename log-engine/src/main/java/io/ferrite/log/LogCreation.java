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
 * The making of a batch of new partition logs for {@link LogManager#createLogs}, for one topic or several (a
 * CreateTopics' topics: one batch, so its fsyncs are grouped together rather than topic after topic). First, on the
 * caller's thread, topic by topic: each partition's directory made in the log directory holding the fewest partitions,
 * its overrides written at once (a crash from there on finds them with the directory) and its log opened. Then, for
 * every partition of the batch, several at a time ({@link CreationFsyncs}): the overrides file fsynced and the caller's
 * {@link PartitionFiles} written (durably). Then, once all are (so that one journal commit covers the entries of all),
 * every partition directory fsynced, several at a time; then each log directory that took one fsynced once (one fsync
 * for all their entries, not one per partition or per topic), so that every file is there after a power loss. All or
 * nothing for each topic: a failure of one of its partitions closes and removes what the batch made of that topic, and
 * the others go on; a failure of a log directory's fsync fails every topic. A directory found in place is loaded as a
 * start would load it, its overrides replaced (durably) and the caller's files written in it; a failure leaves it so.
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

    /** What the batch needs of its log manager. */
    record Context(java.util.function.Predicate<String> exists, java.util.function.Function<Map<String, String>, LogConfig> inForce,
        CreationFsyncs fsyncs, LogManagerConfig config, Map<Path, Integer> perDir, Map<Path, LogEnvironment> environments)
    {
    }

    /**
     * Makes every entry of {@code batch}, each all or nothing; {@code beforeEach} runs before each entry's first file
     * (the broker clears a stray interrupt there, so that one costs at most the topic in hand). {@code perDir} is how
     * many partitions each log directory holds, counted up as this chooses.
     */
    static CreatedLogs make(final List<NewLogs> batch, final Runnable beforeEach, final Context context)
    {
        final int entries = batch.size();
        final Opened[] opened = new Opened[entries];
        final Exception[] failures = new Exception[entries];
        final Set<Path> touched = new LinkedHashSet<>();
        final Set<String> named = new java.util.HashSet<>();
        final boolean[] interrupted = new boolean[1];
        int partitions = 0;
        try
        {
            for (int e = 0; e < entries; e++)
            {
                beforeEach.run();
                try
                {
                    opened[e] = open(batch.get(e), named, touched, context);
                    partitions += opened[e].made.length;
                }
                catch (final IOException | RuntimeException ex)
                {
                    failures[e] = ex;
                }
            }
        }
        catch (final Throwable t) // an Error (say an AssertionError of beforeEach): no entry opened so far is left open
        {
            removeAll(opened, t);
            throw t;
        }
        if (Thread.interrupted()) // arrived while the last entry was opened (and failed it): the rest must not fail on it
        {
            interrupted[0] = true;
        }
        try
        {
            // the files, then (once all are written) the partition directories, then the log directories
            final Opened[] owners = new Opened[partitions];
            final int[] indexes = new int[partitions];
            int i = 0;
            for (final Opened o : opened)
            {
                for (int p = 0; o != null && p < o.made.length; p++, i++)
                {
                    owners[i] = o;
                    indexes[i] = p;
                }
            }
            fail(owners, context.fsyncs().run(partitions, item -> owners[item].writeFiles(indexes[item]), interrupted));
            fail(owners, context.fsyncs().run(partitions, item ->
            {
                if (owners[item].failure == null)
                {
                    DurableFile.fsyncDirectory(owners[item].made[indexes[item]].dir());
                }
            }, interrupted));
            fsyncLogDirs(touched, opened, context, interrupted);
            if (Thread.interrupted()) // arrived once the last step had ended: the removals below must not fail on it
            {
                interrupted[0] = true;
            }
            for (int e = 0; e < entries; e++)
            {
                if (opened[e] != null && opened[e].failure != null)
                {
                    failures[e] = opened[e].failure;
                    opened[e].remove(opened[e].failure);
                }
            }
        }
        catch (final Throwable t) // an Error on this thread after the opening: the batch's logs not left open either
        {
            removeAll(opened, t);
            throw t;
        }
        finally
        {
            if (interrupted[0])
            {
                Thread.currentThread().interrupt(); // kept for the caller: taken earlier, it would fail the fsyncs above
            }
        }
        final PartitionLog[][] made = new PartitionLog[entries][];
        for (int e = 0; e < entries; e++)
        {
            made[e] = failures[e] == null ? opened[e].made : null;
        }
        return new CreatedLogs(made, failures);
    }

    /** After an Error: every entry opened so far and not yet removed closed and removed, its failures suppressed in {@code t}. */
    private static void removeAll(final Opened[] opened, final Throwable t)
    {
        for (final Opened o : opened)
        {
            if (o != null)
            {
                o.remove(t);
            }
        }
    }

    /** Each item's failure given to the topic it belongs to (its first; any later ones suppressed in it). */
    private static void fail(final Opened[] owners, final Exception[] failures)
    {
        for (int i = 0; i < failures.length; i++)
        {
            if (failures[i] != null)
            {
                owners[i].failed(failures[i]);
            }
        }
    }

    /**
     * Each log directory the batch made a partition in fsynced once, on the creation threads (several at a time, and a
     * stray interrupt of the caller's thread meanwhile is noted, not taken as a failure of the whole batch); a failure
     * fails every topic still made.
     */
    private static void fsyncLogDirs(final Set<Path> touched, final Opened[] opened, final Context context,
        final boolean[] interrupted)
    {
        final Path[] dirs = touched.toArray(new Path[0]);
        for (final Exception ex : context.fsyncs().runOnThreads(dirs.length, i -> DurableFile.fsyncDirectory(dirs[i]),
            interrupted))
        {
            for (int e = 0; ex != null && e < opened.length; e++)
            {
                if (opened[e] != null)
                {
                    opened[e].failed(ex);
                }
            }
        }
    }

    /**
     * One entry's partitions validated, their directories made, overrides written and logs opened; a failure closes and
     * removes what this made of them (a directory found in place is left) and is thrown.
     */
    private static Opened open(final NewLogs entry, final Set<String> named, final Set<Path> touched, final Context context)
        throws IOException
    {
        final String topic = entry.topic();
        for (int p = entry.from(); p < entry.to(); p++)
        {
            validateName(topic, p);
            final String key = OffsetCheckpoint.key(topic, p);
            if (context.exists().test(key) || named.contains(key))
            {
                throw new IllegalArgumentException("partition " + key + " exists");
            }
        }
        final LogConfig logConfig = context.inForce().apply(entry.overrides());
        final Opened opened = new Opened(entry);
        Path making = null;
        try
        {
            for (int p = entry.from(); p < entry.to(); p++)
            {
                final Path dir = chooseDir(context.perDir());
                touched.add(dir);
                final Path partitionDir = dir.resolve(OffsetCheckpoint.key(topic, p));
                final LogManagerConfig config = context.config();
                final PartitionLog log;
                if (Files.exists(partitionDir))
                {
                    // not ours to remove on a failure: loaded as it is, as a start would
                    PartitionOverrides.write(partitionDir, entry.overrides());
                    log = LogLoader.load(topic, p, partitionDir, logConfig, config.writeStrategy(), config.clock(),
                        context.environments().get(dir), false, 0, 0);
                }
                else
                {
                    Files.createDirectory(partitionDir);
                    making = partitionDir;
                    PartitionOverrides.writeNew(partitionDir, entry.overrides());
                    log = LogLoader.create(topic, p, partitionDir, logConfig, config.writeStrategy(), config.clock(),
                        context.environments().get(dir));
                    making = null;
                    opened.ours[p - entry.from()] = true;
                }
                opened.made[p - entry.from()] = log;
            }
        }
        catch (final Throwable ex) // an Error too: what this made of the entry is not left open
        {
            removeUnpublished(opened.made, opened.ours, making, ex);
            throw ex;
        }
        for (int p = entry.from(); p < entry.to(); p++)
        {
            named.add(OffsetCheckpoint.key(topic, p));
        }
        return opened;
    }

    /** One entry's logs opened, the directories of them it made ({@code ours}: the only ones a failure removes). */
    private static final class Opened
    {
        final NewLogs entry;
        final PartitionLog[] made;
        final boolean[] ours;
        /** The first failure of one of its partitions' later steps (set on the caller's thread, after each step). */
        Exception failure;
        /** Its logs closed and the directories it made removed (once only). */
        private boolean removed;

        Opened(final NewLogs entry)
        {
            this.entry = entry;
            this.made = new PartitionLog[entry.count()];
            this.ours = new boolean[made.length];
        }

        /** On a creation thread: partition {@code i}'s overrides fsynced and the caller's files written. */
        void writeFiles(final int i) throws IOException
        {
            final Path partitionDir = made[i].dir();
            if (ours[i]) // a directory found in place had its overrides written durably
            {
                PartitionOverrides.fsyncNew(partitionDir, entry.overrides());
            }
            entry.files().write(partitionDir, entry.from() + i);
        }

        /** Its logs closed and the directories it made removed, once; what fails there suppressed in {@code cause}. */
        void remove(final Throwable cause)
        {
            if (!removed)
            {
                removed = true;
                removeUnpublished(made, ours, null, cause);
            }
        }

        void failed(final Exception ex)
        {
            if (failure == null)
            {
                failure = ex;
            }
            else if (failure != ex)
            {
                failure.addSuppressed(ex);
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
        final Throwable cause)
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
