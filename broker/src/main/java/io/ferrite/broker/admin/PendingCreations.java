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
 * until they and the request's own partitions are at most {@link #backlogBound} — what the estimated cost of a
 * partition says is {@link #BACKLOG_NS} (30 s) of work. The estimate is a moving average of the time
 * {@code TopicRegistry.create} took per partition over the topics last made (its directories, files and fsyncs, on
 * the agent's thread, as the load of the moment makes them); before the first topic is made it is
 * {@value #ASSUMED_MS_PER_PARTITION} ms, the slowest rate measured on a loaded machine, so the first burst is
 * bounded as if the disk were slow. Why 30 s: the journal makes a crash with a backlog safe, so the bound is what a
 * restart may spend replaying it before it serves (a start after a SIGKILL with a full backlog makes about 30 s of
 * files first; Kafka 4.4's own SIGKILL restart at 10 000 partitions took 50 s here) and how long after its answer the
 * newest topic is published (about 30 s at the estimated rate: half of a producer's {@code max.block.ms} and of an
 * Admin's {@code default.api.timeout.ms}, 60 s each, so the estimate may be 2x off before a client times out). A
 * single request larger than the bound is journaled after every earlier topic is made: its own files are its
 * window. Tests set another bound ({@link #backlogNs(long)}).</li>
 * <li>While topics stay pending the journal does not grow for ever: once it holds at least
 * {@link #REWRITE_BYTES} and twice what its last rewrite left, it is rewritten to the pending topics' records alone
 * ({@link CreationJournal#rewrite}: a new file fsynced, renamed over the old one, the directory fsynced), so a
 * steady stream of creations that never lets the queue drain costs a journal of its pending topics, amortized O(1)
 * a record. Not while a topic's files failed (its record stays for the next start, and so does every other).</li>
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
    /** The work pending (with a request's own), at the estimated cost per partition, a CreateTopics waits below. */
    static final long BACKLOG_NS = TimeUnit.SECONDS.toNanos(30);
    /**
     * The cost of a partition's files assumed before any is measured: pchunk's loaded run made 110 partitions/s (9 ms),
     * a quiet machine 1.6 ms; the slow figure bounds a first burst to about 3 300 partitions.
     */
    static final long ASSUMED_MS_PER_PARTITION = 9;
    /** The journal's size from which it is rewritten to the pending topics' records while some are pending. */
    static final long REWRITE_BYTES = 1 << 20;
    /**
     * A JVM system property for tests that run the server in a child JVM (a crash test): the journal size from which it
     * is rewritten instead of {@link #REWRITE_BYTES}. Internal: Kafka has no such setting, so no broker property.
     */
    static final String REWRITE_BYTES_PROPERTY = "ferrite.internal.creation.journal.rewrite.bytes";

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
    private long nsPerPartition = TimeUnit.MILLISECONDS.toNanos(ASSUMED_MS_PER_PARTITION);
    /** The backlog's bound in estimated work ({@link #BACKLOG_NS}; tests set another). */
    private volatile long backlogNs = BACKLOG_NS;
    /** The journal's size from which a rewrite is considered ({@link #REWRITE_BYTES}; tests set another). */
    private volatile long rewriteBytes = Long.getLong(REWRITE_BYTES_PROPERTY, REWRITE_BYTES);
    /** Rewrites of the journal (read by tests). */
    private int rewrites;
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

    /** The backlog's bound in estimated work, for tests (package-private; the accessor {@code CreationsHold}). */
    void backlogNs(final long ns)
    {
        backlogNs = ns;
    }

    /** The journal size from which it is rewritten while topics are pending, for tests. */
    void rewriteBytes(final long bytes)
    {
        rewriteBytes = bytes;
    }

    /** The journal rewrites so far (agent only; for tests). */
    int rewrites()
    {
        return rewrites;
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

    /** The most partitions pending, with a request's own, that {@link #makeDownTo} leaves: {@link #backlogNs} at the estimated cost. */
    long backlogBound()
    {
        return backlogNs / Math.max(1, nsPerPartition);
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
        settle();
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
        settle();
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
        settle();
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
        settle();
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

    /**
     * Nothing pending: the journal emptied (nothing while a record's files failed). Something pending: the journal
     * rewritten to the pending topics' records once it is large enough ({@link #rewriteBytes}) and at least twice what
     * its last rewrite left.
     */
    private void settle()
    {
        if (!byName.isEmpty())
        {
            if (journal.size() >= rewriteBytes && journal.size() >= 2 * journal.rewrittenSize() && !journal.isUnmade())
            {
                rewrite();
            }
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

    /** The journal rewritten to the CREATE records of the topics still pending (with the ids they were answered). */
    private void rewrite()
    {
        final List<CreationJournal.Entry> kept = new java.util.ArrayList<>(byName.size());
        for (final CreationJournal.Entry e : CreationReplay.wanted(journal.entries()).values())
        {
            final Pending p = byName.get(e.name());
            if (p != null && p.id[0] == e.idMsb() && p.id[1] == e.idLsb())
            {
                kept.add(e);
            }
        }
        final long before = journal.size();
        try
        {
            journal.rewrite(kept);
            rewrites++;
            LOG.info("creation journal {} rewritten with {} topics pending: {} -> {} bytes", journal.file(), kept.size(), before,
                journal.size());
        }
        catch (final IOException ex)
        {
            LOG.warn("rewriting the creation journal {} failed: it keeps every record (replayed idempotently)", journal.file(), ex);
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
