package io.ferrite.broker.admin;

import io.ferrite.broker.topic.TopicRegistry;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The topics a single-node CreateTopics journaled and answered whose files the {@link AdminAgent} has yet to make,
 * oldest first: made in chunks between the agent's commands ({@link #makeChunk}: whole unpublished topics as one batch
 * that ends after the topic reaching {@value #CHUNK_PARTITIONS} partitions, or a large topic's next slice of
 * {@value #CHUNK_PARTITIONS}), so a following CreateTopics of
 * a large topic is journaled and answered without waiting for an earlier one's files — as Kafka's controller answers once
 * its record is committed and its brokers make the logs after; one with small topics has them, and the unpublished ones
 * before them, made before its answer within the backlog's bound ({@link #makeSmallBeforeAnswer}).
 *
 * <p>The rules the journal relies on, with several topics pending at once:
 * <ul>
 * <li>A large topic (more than {@value #CHUNK_PARTITIONS} partitions) is published when it is journaled, none of its
 * partitions made ({@link TopicRegistry#plan}), and made in slices of {@value #CHUNK_PARTITIONS}, kept first among the
 * large topics until its last one: Metadata lists it whole, a partition not made answers NOT_LEADER_OR_FOLLOWER (as a
 * Kafka 4.4 broker answers while it makes the logs of a topic its controller committed), and no chunk holds the agent
 * for all its files. Being published, it need not come before a later topic: the unpublished topics and the large
 * topics' slices are two queues, a chunk takes from one, the two in turn, and a CreateTopics waits for neither its
 * slices nor (in the bound) its unmade partitions; a DeleteTopics of it is the published topic's and drops the rest
 * ({@link #deleted}); a start grows a topic a crash left partly made to its journaled count ({@link CreationReplay}).
 * A whole topic grown by more than a slice is made the same way from its present partitions on ({@link #growing}).</li>
 * <li>Every pending name is {@link TopicRegistry#creating} from its journaling until it is published (then left) or
 * deleted: CreateTopics answers TOPIC_ALREADY_EXISTS, Metadata does not auto-create it and answers it
 * UNKNOWN_TOPIC_OR_PARTITION (a Kafka broker that has not applied the topic yet).</li>
 * <li>Topics not published at their journaling are published in the order they were journaled; a command that needs
 * one finished (CreatePartitions, AlterConfigs) first makes every unpublished topic up to it ({@link #makeThrough}), so
 * the order stays. A large topic's are answered without its remaining slices ({@link LargeTopicChanges}).</li>
 * <li>A DeleteTopics of a pending topic ({@link #forget}): a DELETE of its id journaled (fsynced), then it is dropped
 * from the pending queue and its name freed; no file of it was made. Of a topic whose files failed: its leftover
 * directories (a failed creation's best-effort cleanup may leave some) renamed for deletion first, durably.</li>
 * <li>The journal is emptied only when nothing is pending (and no topic's files failed: {@link CreationJournal#unmade}).
 * A stop, or a crash, with topics pending leaves their records: the next start makes them ({@link CreationReplay}).</li>
 * <li>The backlog is bounded by time: before a CreateTopics is journaled the agent makes the oldest unpublished topics
 * until they and the request's own unpublished ones' partitions are at most what the estimated cost of a partition says
 * is 10 s of work ({@link CreationCost}: why 10 s, how the cost is measured); a large topic's unmade partitions come
 * before no later publication, so they are not counted.</li>
 * <li>While topics stay pending the journal does not grow for ever: it is rewritten to the pending topics' records
 * once large enough ({@link JournalRewrites}).</li>
 * </ul>
 * A topic whose files fail — any Throwable — costs that topic alone: logged, published with the partitions not made
 * offline ({@link OfflineTopics}), the journal kept.
 * A stray interrupt of the agent's thread is cleared and reported before each topic is taken into a batch and before
 * each slice; a batch's files are made on the log manager's creation threads, which it does not reach — except a batch
 * of one partition, made on the agent's thread (create11b review L2) —: it costs at most the slice or topic in hand,
 * not the rest of the chunk or of a {@link #makeThrough} / {@link #makeDownTo}.
 *
 * <p>Threading: the admin agent only, but {@link #hold} (a test hook), {@link #isPending} and {@link #filesFailed}.
 */
public final class PendingCreations
{
    /**
     * Partitions a chunk makes at most (it ends after the topic that reaches it), and the slice a larger topic is made in:
     * a topic of more is published at once and made a slice per chunk.
     */
    static final int CHUNK_PARTITIONS = 100;
    /** The work a chunk of slices does at most (it ends after the slice in hand); a batch is bounded by its partitions alone. */
    static final long CHUNK_NS = TimeUnit.MILLISECONDS.toNanos(20);
    /** Partitions of unpublished topics made as one batch at most (a batch ends after the topic that reaches it). */
    static final int BATCH_PARTITIONS = 2000;

    private final TopicRegistry topics;
    private final CreationJournal journal;
    private final List<Path> logDirs;
    /** The topics not published yet (at most {@value #CHUNK_PARTITIONS} partitions each), in journal order. */
    private final ArrayDeque<PendingTopic> unpublished = new ArrayDeque<>();
    /** The large topics, published at their journaling, whose remaining slices are to be made, in journal order. */
    private final ArrayDeque<PendingTopic> slices = new ArrayDeque<>();
    /** The pending topics by name (a name dropped here and still in the queue was deleted: skipped); read by tests. */
    private final Map<String, PendingTopic> byName = new ConcurrentHashMap<>();
    /** Partitions pending: the unpublished topics' and the large topics' not made. */
    private int partitions;
    /** Partitions of the unpublished topics: the work that comes before a later CreateTopics' own publication. */
    private int unpublishedPartitions;
    /** Which queue the next chunk takes when both have work: they alternate, so neither waits for all of the other. */
    private boolean slicesTurn;
    /** The estimated cost of a partition's files, and the backlog's bound (agent only, but its test setters). */
    private final CreationCost cost = new CreationCost();
    /** The journal's rewrites while topics stay pending. */
    private final JournalRewrites rewrites;
    /** CreatePartitions and config changes of the large topics still being made. */
    private final LargeTopicChanges large;
    /** Reports a stray interrupt cleared before a topic (the agent's count of faults). */
    private final Runnable interrupted;
    /**
     * A test hook: while set, {@link #makeChunk} and {@link #makeSmallBeforeAnswer} make nothing. What a client needs is
     * still made: a command that needs a topic ({@link #makeThrough}), and the backlog's bound ({@link #makeDownTo}).
     */
    private volatile boolean held;

    PendingCreations(final TopicRegistry topics, final CreationJournal journal, final Runnable interrupted)
    {
        this.topics = topics;
        this.journal = journal;
        this.logDirs = journal.logDirs();
        this.rewrites = new JournalRewrites(journal);
        this.interrupted = interrupted;
        this.large = new LargeTopicChanges(topics, journal, this);
    }

    /** CreatePartitions and config changes of a large topic being made in slices (agent only). */
    public LargeTopicChanges largeTopics()
    {
        return large;
    }

    /** Large topic {@code name} while slices of it are to be made, or null (agent only). */
    PendingTopic inSlices(final String name)
    {
        final PendingTopic p = byName.get(name);
        return p != null && p.large() ? p : null;
    }

    /** Large topic {@code p}, being made, grown to {@code count} partitions (journaled and published: {@link LargeTopicChanges}). */
    void grown(final PendingTopic p, final int count)
    {
        partitions += count - p.partitions;
        p.partitions = count;
    }

    /**
     * Whole topic {@code topic}, published grown to {@code count} partitions after its GROW was journaled
     * ({@link LargeTopicChanges#growWhole}): its new partitions made in slices, as a large topic's rest.
     */
    void growing(final io.ferrite.broker.topic.Topic topic, final int count)
    {
        final PendingTopic p = new PendingTopic(topic.name, new long[] {topic.idMostSignificantBits, topic.idLeastSignificantBits},
            count, topic.overrides);
        p.made = topic.partitions.length;
        p.growth = true;
        cost.journaled(System.nanoTime());
        slices.add(p);
        byName.put(p.name, p);
        partitions += count - p.made;
    }

    /**
     * A journaled topic, answered: its name is taken (creating) before the answer, its files made later. A large topic
     * (more than {@value #CHUNK_PARTITIONS} partitions) is published at once with none of its partitions made
     * ({@link TopicRegistry#plan}), as Kafka 4.4's Metadata shows a committed topic whole before its broker made the logs.
     */
    public void add(final String name, final long[] id, final int count, final Map<String, String> configs)
    {
        final PendingTopic p = new PendingTopic(name, id, count, configs);
        cost.journaled(System.nanoTime());
        if (p.large())
        {
            topics.plan(name, count, configs, id);
        }
        else
        {
            topics.creating(name, id, count);
            unpublishedPartitions += count;
        }
        (p.large() ? slices : unpublished).add(p);
        byName.put(name, p);
        partitions += count;
    }

    /**
     * On the agent, a DeleteTopics of published topic {@code name} of id {@code id} (its DELETE journaled before), or its
     * {@link LargeTopicChanges#configsFailed}: a large topic still being made in slices is dropped from the pending ones.
     */
    public void deleted(final String name, final long[] id)
    {
        final PendingTopic p = byName.get(name);
        if (p != null && p.large() && java.util.Arrays.equals(p.id, id))
        {
            byName.remove(name);
            partitions -= p.partitions - p.made; // stays in the queue, skipped
            settle();
        }
    }

    /** The estimated cost of a partition's files and the backlog's bound (tests set them through {@code CreationsHold}). */
    CreationCost cost()
    {
        return cost;
    }

    /** The journal size from which it is rewritten while topics are pending, for tests. */
    void rewriteBytes(final long bytes)
    {
        rewrites.rewriteBytes(bytes);
    }

    /** The journal rewrites so far (agent only; for tests). */
    int rewrites()
    {
        return rewrites.rewrites();
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
     * From any thread: whether topic {@code name} was answered as created and none of its files could be made (here, or
     * in the start's replay): {@link OfflineTopics#filesFailed}.
     */
    public boolean filesFailed(final String name)
    {
        return OfflineTopics.filesFailed(topics, name, byName.containsKey(name));
    }

    /** Whether {@code name} is a whole topic being grown in slices, not a creation (agent only). */
    public boolean isGrowing(final String name)
    {
        final PendingTopic p = byName.get(name);
        return p != null && p.growth;
    }

    /** The partitions of pending topic {@code name} (agent only), or -1 when it is not pending. */
    public int partitionsOf(final String name)
    {
        final PendingTopic p = byName.get(name);
        return p == null ? -1 : p.partitions;
    }

    /** Partitions pending (agent only; for tests). */
    int pendingPartitions()
    {
        return partitions;
    }

    /** Whether a topic of {@code count} partitions is published once made (the backlog's work), not when journaled. */
    public static boolean publishedWhenMade(final int count)
    {
        return count <= CHUNK_PARTITIONS;
    }

    /** The most unpublished partitions, with a request's own, {@link #makeDownTo} leaves ({@link CreationCost}). */
    long backlogBound()
    {
        return cost.backlogBound();
    }

    /**
     * Before a CreateTopics is journaled whose topics published only once made ({@link #publishedWhenMade}) have
     * {@code incoming} partitions: the oldest unpublished topics made until they and the request's are at most
     * {@link #backlogBound} (every one, when the request alone is more). A large topic's remaining slices are not
     * counted nor made here: it is published already, so a later topic need not wait for them. Not held by {@link #hold}.
     */
    public void makeDownTo(final long incoming)
    {
        while (unpublishedPartitions > 0 && unpublishedPartitions + incoming > backlogBound()
            && makeUnpublished(unpublishedPartitions + incoming - backlogBound(), null) > 0)
        {
            // made, the oldest first
        }
        settle();
    }

    /**
     * After a CreateTopics with topics published once made ({@link #publishedWhenMade}) is journaled, before its answer:
     * every unpublished topic made, oldest first (journal order), so its own are, when they and those before them are at
     * most {@link #backlogBound} partitions ({@link #makeDownTo} leaves no more, but for a request larger than the bound
     * alone: answered at journaling, its files are its window). A small topic is then served once answered (Admin's
     * OffsetCommit does not retry UNKNOWN_TOPIC_OR_PARTITION; a Kafka 4.4 broker has a committed topic in milliseconds),
     * whatever the number of topics in the request. Not while {@link #hold held}. Files that fail: made at the next start.
     */
    public void makeSmallBeforeAnswer()
    {
        if (unpublishedPartitions > backlogBound())
        {
            return;
        }
        while (!held && makeUnpublished(Long.MAX_VALUE, null) > 0)
        {
            // made: the oldest first, publication stays in journal order
        }
        settle();
    }

    /** Between the agent's commands: one chunk made; the number of topics made (0: nothing pending, or held). */
    int makeChunk()
    {
        if (held || unpublished.isEmpty() && slices.isEmpty())
        {
            if (held)
            {
                cost.held(System.nanoTime());
            }
            return 0;
        }
        return makeOneChunk();
    }

    /**
     * One chunk made, held or not (tests step a held agent with it through their accessor); the number of topics made.
     * A chunk takes unpublished topics or a large topic's next slice, the two in turn when both are pending.
     */
    int makeOneChunk()
    {
        final ArrayDeque<PendingTopic> from = unpublished.isEmpty() ? slices : slices.isEmpty() ? unpublished : slicesTurn ? slices : unpublished;
        slicesTurn = from == unpublished;
        int made = 0;
        if (from == unpublished)
        {
            made = makeUnpublished(CHUNK_PARTITIONS, null); // one batch: its fsyncs together
        }
        else
        {
            final long start = System.nanoTime();
            final int before = partitions;
            while (before - partitions < CHUNK_PARTITIONS && System.nanoTime() - start < CHUNK_NS && makeNext(from) != null)
            {
                made++;
            }
        }
        settle();
        return Math.max(made, 1); // a pass that only skipped deleted ones still did work
    }

    /**
     * Pending topic {@code name} made, when it is pending (true): an unpublished one after every unpublished topic
     * journaled before it (publication order), a large one's remaining slices alone (it is published already).
     */
    public boolean makeThrough(final String name)
    {
        final PendingTopic wanted = byName.get(name);
        if (wanted == null)
        {
            return false;
        }
        while (byName.get(name) == wanted && (wanted.large() ? makeNext(slices) != null : makeUnpublished(Long.MAX_VALUE, wanted) > 0))
        {
            // made: the unpublished topics before it, then it; a large one slice by slice
        }
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
        final PendingTopic pending = byName.get(name);
        if (pending == null)
        {
            CreationLeftovers.renameForDeletion(logDirs, name);
        }
        journal.deleting(name, id[0], id[1]); // before the name is freed: no start makes it again
        if (pending != null)
        {
            byName.remove(name);
            partitions -= pending.partitions; // stays in the queue, skipped
            unpublishedPartitions -= pending.large() ? 0 : pending.partitions;
        }
        topics.created(name);
        settle();
        return true;
    }

    /**
     * Before a DeleteTopics of published {@code topic} with {@link io.ferrite.broker.topic.Topic#isOffline offline}
     * partitions journals its DELETE: their leftover directories (a failed creation's cleanup is best effort) renamed
     * for deletion, durably, so the next start does not load them as a topic with a new id.
     */
    public void renameLeftovers(final io.ferrite.broker.topic.Topic topic) throws IOException
    {
        CreationLeftovers.renameForDeletion(logDirs, topic.name, topic.partitions.length);
    }

    /**
     * The oldest large topic's next slice of {@value #CHUNK_PARTITIONS} partitions made (deleted ones skipped), or tried
     * and failed, the topic kept first in {@link #slices} until its last slice; null when nothing was pending there.
     */
    private PendingTopic makeNext(final ArrayDeque<PendingTopic> queue)
    {
        PendingTopic p;
        while ((p = queue.poll()) != null && byName.get(p.name) != p)
        {
            // deleted while pending
        }
        if (p == null)
        {
            return null;
        }
        final int upTo = Math.min(p.partitions, p.made + CHUNK_PARTITIONS);
        final int slice = upTo - p.made;
        partitions -= slice;
        clearInterrupt();
        try
        {
            final long start = System.nanoTime();
            topics.addPartitions(large.published(p), upTo); // the next slice; partitions after it answer NOT_LEADER_OR_FOLLOWER
            p.made = upTo;
            final long now = System.nanoTime();
            cost.made(slice, now - start, now);
            if (upTo < p.partitions)
            {
                queue.addFirst(p); // its rest before the later large topics': they are made in journal order
                return p;
            }
        }
        catch (final Throwable ex) // one topic's failure, an Error too, costs that topic alone
        {
            failed(p, upTo, ex);
        }
        byName.remove(p.name); // after its publication: see filesFailed
        return p;
    }

    /**
     * The oldest unpublished topics (deleted ones skipped) made as one batch ({@link UnpublishedBatch}), until they come
     * to {@code atLeast} partitions or {@value #BATCH_PARTITIONS}, or topic {@code through} was taken; published in
     * journal order, each made or failed alone. The number of topics taken off the queue (0: none was pending).
     */
    private int makeUnpublished(final long atLeast, final PendingTopic through)
    {
        final List<PendingTopic> batch = new ArrayList<>();
        int polled = 0;
        long taken = 0;
        boolean reached = false;
        PendingTopic p;
        while (!reached && taken < Math.min(atLeast, BATCH_PARTITIONS) && (p = unpublished.poll()) != null)
        {
            polled++;
            if (byName.get(p.name) == p) // else deleted while pending
            {
                batch.add(p);
                taken += p.partitions;
                partitions -= p.partitions;
                unpublishedPartitions -= p.partitions;
                reached = p == through;
            }
        }
        UnpublishedBatch.make(topics, journal, batch, this::clearInterrupt, cost, made -> byName.remove(made.name));
        return polled;
    }

    /** Before each topic's files: a stray interrupt (one a batch kept for its caller) cleared and reported. */
    private void clearInterrupt()
    {
        if (Thread.interrupted()) // left by the last batch's LogCreation, or stray: it would fail this topic's file work
        {
            interrupted.run();
        }
    }

    /** Large topic {@code p}'s files failed from its partition {@code p.made} (up to {@code upTo} tried): {@link OfflineTopics#failed}. */
    private void failed(final PendingTopic p, final int upTo, final Throwable ex)
    {
        partitions -= p.partitions - upTo; // its rest: not made before the next start
        OfflineTopics.failed(topics, journal, p, ex);
    }

    /**
     * Nothing pending: the journal emptied ({@link JournalRewrites#empty}). Something pending: the journal rewritten to
     * the pending topics' records when due ({@link JournalRewrites#rewriteIfDue}).
     */
    private void settle()
    {
        if (!byName.isEmpty())
        {
            rewrites.rewriteIfDue(byName);
            return;
        }
        unpublished.clear();
        slices.clear();
        cost.drained(System.nanoTime());
        rewrites.empty();
    }
}
