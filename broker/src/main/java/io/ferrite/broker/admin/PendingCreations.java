package io.ferrite.broker.admin;

import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.config.DurableFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The topics a single-node CreateTopics journaled and answered whose files the {@link AdminAgent} has yet to make,
 * oldest first: made in chunks between the agent's commands ({@link #makeChunk}: whole topics, until
 * {@value #CHUNK_PARTITIONS} partitions or {@link #CHUNK_NS} of work), so a following CreateTopics is journaled and
 * answered without waiting for an earlier one's files — as Kafka's controller answers once its record is committed
 * and its brokers make the logs after.
 *
 * <p>The rules the journal relies on, with several topics pending at once:
 * <ul>
 * <li>Every pending name is {@link TopicRegistry#creating} from its journaling until it is published (then left) or
 * deleted: CreateTopics answers TOPIC_ALREADY_EXISTS, Metadata does not auto-create it and answers it
 * UNKNOWN_TOPIC_OR_PARTITION (a Kafka broker that has not applied the topic yet).</li>
 * <li>Topics are published in the order they were journaled; a command that needs one finished (CreatePartitions,
 * AlterConfigs) first makes every pending topic up to it ({@link #makeThrough}), so the order stays.</li>
 * <li>A DeleteTopics of a pending topic ({@link #forget}): a DELETE of its id journaled (fsynced), then it is dropped
 * from the pending queue and its name freed; no file of it was made. Of a topic whose files failed: its leftover
 * directories (a failed creation's best-effort cleanup may leave some) renamed for deletion first, durably.</li>
 * <li>The journal is emptied only when nothing is pending (and no topic's files failed: {@link CreationJournal#unmade}).
 * A stop, or a crash, with topics pending leaves their records: the next start makes them ({@link CreationReplay}).</li>
 * <li>The backlog is bounded by time: before a CreateTopics is journaled the agent makes the oldest pending topics
 * until they and the request's own partitions are at most {@link #backlogBound} — what the measured cost of a
 * partition (a moving average of the files made) says is {@link #BACKLOG_NS} of work, and never more than
 * {@value #BACKLOG_PARTITIONS} partitions. So a topic answered as created is published about 5 s after its answer at
 * the worst, at the rate the agent last made files: well within a producer's {@code max.block.ms} (60 s) and an
 * Admin's {@code default.api.timeout.ms} (60 s). A single request larger than the bound is journaled after every
 * earlier topic is made: its own files are its window.</li>
 * </ul>
 * A topic whose files fail — any Throwable — costs that topic alone: logged, its name kept taken, the journal kept.
 * A stray interrupt of the agent's thread (one {@code LogCreation} restores for its caller, or one arriving between
 * topics) is cleared before each topic is made and reported: it costs at most the topic in hand, not the rest of the
 * chunk or of a {@link #makeThrough} / {@link #makeDownTo}.
 *
 * <p>Threading: the admin agent only, but {@link #hold} (a test hook), {@link #isPending} and {@link #filesFailed}.
 */
public final class PendingCreations
{
    private static final Logger LOG = LoggerFactory.getLogger(PendingCreations.class);
    /** Partitions a chunk makes at most (whole topics: it ends after the topic that reaches it). */
    static final int CHUNK_PARTITIONS = 100;
    /** The work a chunk does at most before the agent takes its commands again (ends after the topic in hand). */
    static final long CHUNK_NS = TimeUnit.MILLISECONDS.toNanos(20);
    /** Pending partitions (with a request's own) a CreateTopics waits below before it is journaled, at most. */
    static final int BACKLOG_PARTITIONS = 2_000;
    /** The work pending (with a request's own), at the measured cost per partition, a CreateTopics waits below. */
    static final long BACKLOG_NS = TimeUnit.SECONDS.toNanos(5);
    /** The cost of a partition's files assumed before any is measured (1.6 ms measured quiet, several under load). */
    private static final long ASSUMED_NS_PER_PARTITION = TimeUnit.MILLISECONDS.toNanos(2);

    /** One journaled topic whose files are not made. */
    private record Pending(String name, long[] id, int partitions, Map<String, String> configs)
    {
    }

    private final TopicRegistry topics;
    private final CreationJournal journal;
    private final List<Path> logDirs;
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    /** The pending topics by name (a name dropped here and still in the queue was deleted: skipped); read by tests. */
    private final Map<String, Pending> byName = new ConcurrentHashMap<>();
    private int partitions;
    /** A moving average of what a partition's files took to make (agent only; read by tests). */
    private long nsPerPartition = ASSUMED_NS_PER_PARTITION;
    /** Reports a stray interrupt cleared before a topic (the agent's count of faults). */
    private final Runnable interrupted;
    /**
     * A test hook: while set, {@link #makeChunk} makes nothing. What a client needs is still made: a command that needs
     * a topic ({@link #makeThrough}), and the backlog's bound ({@link #makeDownTo}) — a promise to clients' timeouts.
     */
    private volatile boolean held;

    PendingCreations(final TopicRegistry topics, final CreationJournal journal, final Runnable interrupted)
    {
        this.topics = topics;
        this.journal = journal;
        this.logDirs = journal.logDirs();
        this.interrupted = interrupted;
    }

    /** A journaled topic, answered: its name is taken (creating) before the answer, its files made later. */
    public void add(final String name, final long[] id, final int count, final Map<String, String> configs)
    {
        final Pending p = new Pending(name, id, count, configs);
        queue.add(p);
        byName.put(name, p);
        partitions += count;
        topics.creating(name, id);
    }

    /** Topics pending (for tests and the docs' figures). */
    public int size()
    {
        return byName.size();
    }

    /** Whether {@code name} is journaled and its files not made yet (not failed). */
    public boolean isPending(final String name)
    {
        return byName.containsKey(name);
    }

    /** The test hook (package-private; tests reach it through their accessor): {@code true} holds the chunks until {@code false}. */
    void hold(final boolean hold)
    {
        held = hold;
    }

    /**
     * From any thread: whether topic {@code name} was answered as created and its files failed (here, or in the start's
     * replay). A topic leaves {@code byName} only after it is published and no longer creating, so the last look at
     * the published topic tells a failed one from one made meanwhile.
     */
    public boolean filesFailed(final String name)
    {
        return topics.creatingId(name) != null && !byName.containsKey(name) && topics.topic(name) == null;
    }

    /** The partitions of pending topic {@code name} (agent only), or -1 when it is not pending. */
    public int partitionsOf(final String name)
    {
        final Pending p = byName.get(name);
        return p == null ? -1 : p.partitions;
    }

    /** Partitions pending (agent only; for tests). */
    int pendingPartitions()
    {
        return partitions;
    }

    /** The most partitions pending, with a request's own, that {@link #makeDownTo} leaves: {@link #BACKLOG_NS} at the measured cost. */
    int backlogBound()
    {
        return (int)Math.min(BACKLOG_PARTITIONS, BACKLOG_NS / Math.max(1, nsPerPartition));
    }

    /**
     * Before a CreateTopics of {@code incoming} partitions is journaled: the oldest pending topics made until they and
     * the request's are at most {@link #backlogBound} (every one, when the request alone is more). Not held by {@link #hold}.
     */
    public void makeDownTo(final long incoming)
    {
        while (partitions > 0 && partitions + incoming > backlogBound() && makeNext() != null)
        {
            // made
        }
        clearIfDone();
    }

    /** Between the agent's commands: one chunk made; the number of topics made (0: nothing pending, or held). */
    int makeChunk()
    {
        if (held || queue.isEmpty())
        {
            return 0;
        }
        final long start = System.nanoTime();
        final int before = partitions;
        int made = 0;
        while (before - partitions < CHUNK_PARTITIONS && System.nanoTime() - start < CHUNK_NS && makeNext() != null)
        {
            made++;
        }
        clearIfDone();
        return Math.max(made, 1); // a pass that only skipped deleted ones still did work
    }

    /** Every pending topic up to {@code name} made (in order) when it is pending; true when it was. */
    public boolean makeThrough(final String name)
    {
        final Pending wanted = byName.get(name);
        if (wanted == null)
        {
            return false;
        }
        Pending made;
        do
        {
            made = makeNext();
        }
        while (made != null && made != wanted);
        clearIfDone();
        return true;
    }

    /**
     * A DeleteTopics of a topic answered as created and not published, of id {@code id} — pending, or its files failed
     * (here, or in the start's replay): a failed one's leftover directories renamed for deletion, then the DELETE
     * journaled, then the topic dropped and its name freed. False: not such a topic (published meanwhile, or another
     * id). On an IOException nothing is dropped and the name stays taken.
     */
    public boolean forget(final String name, final long[] id) throws IOException
    {
        if (!java.util.Arrays.equals(topics.creatingId(name), id))
        {
            return false;
        }
        final Pending pending = byName.get(name);
        if (pending == null)
        {
            removeLeftovers(name);
        }
        journal.deleting(name, id[0], id[1]); // before the name is freed: no start makes it again
        if (pending != null)
        {
            byName.remove(name);
            partitions -= pending.partitions; // stays in the queue, skipped
        }
        topics.created(name);
        clearIfDone();
        return true;
    }

    /** The oldest pending topic made (deleted ones skipped), or tried and failed; null when nothing was pending. */
    private Pending makeNext()
    {
        Pending p;
        while ((p = queue.poll()) != null && byName.get(p.name) != p)
        {
            // deleted while pending
        }
        if (p == null)
        {
            return null;
        }
        partitions -= p.partitions;
        if (Thread.interrupted()) // left by the last topic's LogCreation, or stray: it would fail this topic's file work
        {
            interrupted.run();
        }
        try
        {
            final long start = System.nanoTime();
            topics.create(p.name, p.partitions, p.configs, p.id);
            topics.created(p.name); // published first: a network thread that finds it no longer creating finds it
            final long perPartition = (System.nanoTime() - start) / Math.max(1, p.partitions);
            nsPerPartition += (perPartition - nsPerPartition) / 8; // a moving average over the last topics made
        }
        catch (final Throwable ex) // one topic's failure, an Error too, costs that topic alone
        {
            journal.unmade();
            LOG.error("making the files of topic {}, created and answered, failed: it is made at the next start", p.name, ex);
        }
        byName.remove(p.name); // after its publication: see filesFailed
        return p;
    }

    /** Nothing pending: the journal emptied (nothing while a record's files failed). */
    private void clearIfDone()
    {
        if (!byName.isEmpty())
        {
            return;
        }
        queue.clear();
        try
        {
            journal.clear();
        }
        catch (final IOException ex)
        {
            journal.unmade(); // a deletion must still journal itself: the records stay
            LOG.error("emptying the creation journal {} failed: its records are replayed (idempotently) at the next start",
                journal.file(), ex);
        }
    }

    /** A failed topic's partition directories, if its cleanup left any, renamed for deletion (removed by the next start). */
    private void removeLeftovers(final String name) throws IOException
    {
        for (final Path dir : logDirs)
        {
            final List<Path> left;
            try (java.util.stream.Stream<Path> list = Files.list(dir))
            {
                left = list.filter(d -> isPartitionOf(d.getFileName().toString(), name) && Files.isDirectory(d)).toList();
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
