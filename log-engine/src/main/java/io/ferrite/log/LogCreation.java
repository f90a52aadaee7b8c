package io.ferrite.log;

import io.ferrite.log.config.DurableFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The making of a batch of new partition logs for {@link LogManager#createLogs}, for one topic or several (a
 * CreateTopics' topics: one batch, so its fsyncs are grouped together rather than topic after topic). First, on the
 * caller's thread, topic by topic: its partitions checked (legal names, none existing) and each given the log
 * directory holding the fewest partitions — no file yet. Then, for every partition of the batch, several at a time on
 * the creation threads ({@link CreationFsyncs}): its directory made, its overrides written and fsynced, its log opened
 * and the caller's {@link PartitionFiles} written (durably). Opening too is spread over the threads: one at a time on
 * the caller's, the 1 000 partitions of a request spent 3.6 s under load making directories and files, each waiting
 * behind the file system's journal, where several waiting together share its commits. Then, once all are (so that one
 * journal commit covers the entries of all), every partition directory fsynced, several at a time; then each log
 * directory that took one fsynced once (one fsync for all their entries, not one per partition or per topic), so that
 * every file is there after a power loss. All or nothing for each topic: a failure of one of its partitions closes and
 * removes what the batch made of that topic, and the others go on; a failure of a log directory's fsync fails every
 * topic. A directory found in place is loaded as a start would load it, its overrides replaced (durably) and the
 * caller's files written in it; a failure leaves it so. Each step touches only its own partition's directory, which
 * nothing else sees before the batch is published.
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
     * Makes every entry of {@code batch}, each all or nothing; {@code beforeEach} runs before each entry is taken up, on
     * this thread and before any file of the batch (the broker clears a stray interrupt there). {@code perDir} is how
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
        for (int e = 0; e < entries; e++) // no file made yet: an Error here (of beforeEach, say) leaves nothing behind
        {
            beforeEach.run();
            try
            {
                opened[e] = place(batch.get(e), named, touched, context);
                partitions += opened[e].made.length;
            }
            catch (final RuntimeException ex)
            {
                failures[e] = ex;
            }
        }
        if (Thread.interrupted()) // a batch of one partition runs on this thread: it must not fail on a stray interrupt
        {
            interrupted[0] = true;
        }
        try
        {
            // each partition opened with its files, then (once all are) the partition directories, then the log directories
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
            fail(owners, context.fsyncs().run(partitions, item -> owners[item].open(indexes[item], context), interrupted));
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
        catch (final Throwable t) // an Error on this thread once files were made: the batch's logs not left open
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
     * fails every topic still made, each with an IOException of its own (its removal's failures are suppressed in it).
     */
    private static void fsyncLogDirs(final Set<Path> touched, final Opened[] opened, final Context context,
        final boolean[] interrupted)
    {
        final Path[] dirs = touched.toArray(new Path[0]);
        final Exception[] failures = context.fsyncs().runOnThreads(dirs.length, i -> DurableFile.fsyncDirectory(dirs[i]),
            interrupted);
        for (int d = 0; d < dirs.length; d++)
        {
            for (int e = 0; failures[d] != null && e < opened.length; e++)
            {
                if (opened[e] != null)
                {
                    opened[e].failed(new IOException("log directory " + dirs[d] + " could not be fsynced", failures[d]));
                }
            }
        }
    }

    /**
     * One entry's partitions checked (legal, none existing, nor named earlier in the batch), its config validated, and
     * each partition given its log directory; no file is made here.
     */
    private static Opened place(final NewLogs entry, final Set<String> named, final Set<Path> touched, final Context context)
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
        final Opened opened = new Opened(entry, context.inForce().apply(entry.overrides()));
        for (int p = entry.from(); p < entry.to(); p++)
        {
            final Path dir = chooseDir(context.perDir());
            touched.add(dir);
            opened.dirs[p - entry.from()] = dir.resolve(OffsetCheckpoint.key(topic, p));
            named.add(OffsetCheckpoint.key(topic, p));
        }
        return opened;
    }

    /** One entry's partitions: where each goes, the logs opened, the directories of them it made (the only ones a failure removes). */
    private static final class Opened
    {
        final NewLogs entry;
        final LogConfig logConfig;
        /** Each partition's directory (in the log directory chosen for it). */
        final Path[] dirs;
        /** Written by the creation thread of its partition, read by the caller's once the step has ended. */
        final PartitionLog[] made;
        /** Whether the batch made partition {@code i}'s directory (set as soon as it did, before anything in it). */
        final boolean[] ours;
        /** The first failure of one of its partitions' steps (set on the caller's thread, after each step). */
        Exception failure;
        /** Its logs closed and the directories it made removed (once only). */
        private boolean removed;

        Opened(final NewLogs entry, final LogConfig logConfig)
        {
            this.entry = entry;
            this.logConfig = logConfig;
            this.dirs = new Path[entry.count()];
            this.made = new PartitionLog[dirs.length];
            this.ours = new boolean[dirs.length];
        }

        /**
         * On a creation thread: partition {@code i}'s directory made, its overrides written and fsynced, its log opened,
         * the caller's files written in it. A directory found in place is loaded as a start would, its overrides
         * replaced durably (not ours to remove on a failure).
         */
        void open(final int i, final Context context) throws IOException
        {
            final int partition = entry.from() + i;
            final Path partitionDir = dirs[i];
            final LogManagerConfig config = context.config();
            final LogEnvironment env = context.environments().get(partitionDir.getParent());
            if (Files.exists(partitionDir))
            {
                PartitionOverrides.write(partitionDir, entry.overrides());
                made[i] = LogLoader.load(entry.topic(), partition, partitionDir, logConfig, config.writeStrategy(),
                    config.clock(), env, false, 0, 0);
            }
            else
            {
                Files.createDirectory(partitionDir);
                ours[i] = true;
                PartitionOverrides.writeNew(partitionDir, entry.overrides());
                PartitionOverrides.fsyncNew(partitionDir, entry.overrides());
                made[i] = LogLoader.create(entry.topic(), partition, partitionDir, logConfig, config.writeStrategy(),
                    config.clock(), env);
            }
            entry.files().write(partitionDir, partition);
        }

        /** Its logs closed and the directories it made removed, once; what fails there suppressed in {@code cause}. */
        void remove(final Throwable cause)
        {
            if (!removed)
            {
                removed = true;
                removeUnpublished(this, cause);
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
     * After a failure: an entry's logs closed, and the directories the batch made of it (a half-made one included)
     * deleted, best effort; a directory it found and loaded is left as it was found.
     */
    private static void removeUnpublished(final Opened opened, final Throwable cause)
    {
        for (final PartitionLog log : opened.made)
        {
            if (log != null)
            {
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
        for (int i = 0; i < opened.dirs.length; i++)
        {
            try
            {
                if (opened.ours[i] && Files.exists(opened.dirs[i]))
                {
                    PartitionDirs.deleteRecursively(opened.dirs[i]);
                    DurableFile.fsyncDirectory(opened.dirs[i].getParent());
                }
            }
            catch (final IOException | RuntimeException ex)
            {
                cause.addSuppressed(ex);
            }
        }
    }
}
