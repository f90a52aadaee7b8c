package io.ferrite.broker.admin;

import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link PendingCreations} on real files, stepped on the test's thread (the registry's writer): a stray interrupt costs
 * no topic after it, and the backlog a CreateTopics finds is bounded by the time its files take, not only by a count.
 */
class PendingCreationsTest
{
    @TempDir
    Path dir;

    private LogManager logs;
    private TopicRegistry registry;
    private CreationJournal journal;
    private final AtomicInteger interrupts = new AtomicInteger();
    private PendingCreations pending;

    @BeforeEach
    void open() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        registry = new TopicRegistry(logs, 1);
        registry.load();
        journal = CreationJournal.open(dir);
        pending = new PendingCreations(registry, journal, interrupts::incrementAndGet);
    }

    @AfterEach
    void close() throws Exception
    {
        Thread.interrupted();
        journal.close();
        logs.close();
    }

    /** {@code count} topics of {@code partitions} journaled (one record) and pending, as a CreateTopics leaves them. */
    private void journaled(final String prefix, final int count, final int partitions) throws Exception
    {
        final List<CreationJournal.Entry> entries = new ArrayList<>();
        final List<long[]> ids = new ArrayList<>();
        for (int t = 0; t < count; t++)
        {
            final long[] id = registry.newId();
            ids.add(id);
            entries.add(new CreationJournal.Entry(CreationJournal.Kind.CREATE, prefix + t, id[0], id[1], partitions, Map.of()));
        }
        journal.append(entries);
        for (int t = 0; t < count; t++)
        {
            pending.add(prefix + t, ids.get(t), partitions, Map.of());
        }
    }

    private int made(final String prefix, final int count)
    {
        int made = 0;
        for (int t = 0; t < count; t++)
        {
            made += registry.topic(prefix + t) != null ? 1 : 0;
        }
        return made;
    }

    /**
     * The thread's interrupt set as {@code LogCreation} leaves it for its caller (or a stray one between topics): before
     * each topic is taken into a batch it is cleared and reported, so neither a chunk nor a {@code makeThrough} loses the
     * topics after it (a channel operation of the interrupted thread would fail with ClosedByInterruptException).
     */
    @Test
    void anInterruptCostsNoTopicAfterItInAChunkOrAMakeThrough() throws Exception
    {
        journaled("chunk-", 5, 1);
        Thread.currentThread().interrupt();
        while (pending.size() > 0) // one chunk: the 5 topics as one batch
        {
            pending.makeChunk();
        }
        assertFalse(Thread.interrupted(), "the interrupt cleared before the topics' files");
        assertEquals(5, made("chunk-", 5), "made of 5 after one interrupt");
        assertEquals(1, interrupts.get(), "the interrupt reported");

        journaled("through-", 5, 1);
        Thread.currentThread().interrupt();
        assertTrue(pending.makeThrough("through-4"));
        assertEquals(5, made("through-", 5), "made of 5 by makeThrough after one interrupt");
        assertEquals(2, interrupts.get());
        assertEquals(0, pending.size());
    }

    /**
     * More partitions pending than the bound allows: before a CreateTopics of 100 partitions is journaled, the oldest
     * pending topics are made (in order) until they and the request's are at most the bound — the backlog's work
     * ({@link CreationCost#BACKLOG_NS} by default, 4.5 s here) at the cost per partition assumed before any is
     * measured ({@value CreationCost#ASSUMED_MS_PER_PARTITION} ms, held fixed here: 500 partitions), so of 60 topics
     * of 10 partitions exactly the oldest 20 are made.
     */
    @Test
    void aCreateTopicsFindsTheBacklogBoundedAndTheOldestMadeFirst() throws Exception
    {
        assertEquals(CreationCost.BACKLOG_NS / java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(CreationCost.ASSUMED_MS_PER_PARTITION),
            pending.backlogBound(), "the default bound before any file is made: 10 s at the assumed cost");
        CreationsHold.backlog(pending, java.time.Duration.ofMillis(CreationCost.ASSUMED_MS_PER_PARTITION * 500));
        CreationsHold.estimate(pending, java.time.Duration.ofMillis(CreationCost.ASSUMED_MS_PER_PARTITION));
        assertEquals(500, pending.backlogBound(), "the assumed cost");
        final int topics = 60; // 100 partitions over the bound at the assumed cost
        journaled("backlog-", topics, 10);
        assertEquals(topics * 10, pending.pendingPartitions());
        pending.makeDownTo(100);
        assertEquals(500, pending.backlogBound(), "the estimate held");
        assertEquals(400, pending.pendingPartitions(), "pending with 100 incoming: the bound");
        final int made = made("backlog-", topics);
        assertEquals(20, made, "the oldest made");
        for (int t = 0; t < topics; t++)
        {
            assertEquals(t < made, registry.topic("backlog-" + t) != null, "made in order: backlog-" + t + " of " + made + " made");
            assertEquals(t >= made, pending.isPending("backlog-" + t), "backlog-" + t);
        }
    }

    /**
     * The bound follows the wall time the backlog takes to drain, not only the time its files take: with the agent
     * busy ~200 ms between topics of 2 partitions (standing in for other commands and journal fsyncs, here a sleep of
     * the stepping thread), a partition costs at least 100 ms of wall time, and the bound (10 s of it) is at most
     * 200 partitions — what the files alone take (a few ms a partition) would admit thousands.
     */
    @Test
    void theBoundFollowsTheWallDrainRateWithTheAgentsOtherWork() throws Exception
    {
        CreationsHold.backlog(pending, java.time.Duration.ofSeconds(10));
        final int topics = 8;
        journaled("wall-", topics, 2);
        for (int t = 0; t < topics; t++)
        {
            Thread.sleep(200); // the agent's other work between two topics
            assertTrue(pending.makeThrough("wall-" + t));
        }
        assertEquals(0, pending.size());
        final long bound = pending.backlogBound();
        assertTrue(bound <= 10_000 / 50, "at >= 100 ms a partition of wall time, the 10 s bound: " + bound + " partitions");
        assertTrue(bound >= 1, "a bound: " + bound);
    }

    /**
     * The journal rewritten while topics are pending (its rewrite size set to 1 byte: a rewrite whenever it has doubled):
     * it then holds the pending topics' records alone, a topic deleted while pending and then rewritten away included.
     * A start from the files and that journal (the process gone with topics still pending, as after a SIGKILL) makes
     * every answered topic, with its answered id, and not the deleted one.
     */
    @Test
    void aRewriteWithTopicsPendingKeepsEveryOneAndNoDeletedOne() throws Exception
    {
        CreationsHold.rewriteFrom(pending, 1);
        final Map<String, long[]> answered = new java.util.HashMap<>();
        journaled("r1-", 5, 1);
        journaled("r2-", 5, 2);
        for (final String prefix : List.of("r1-", "r2-"))
        {
            for (int t = 0; t < 5; t++)
            {
                answered.put(prefix + t, registry.creatingId(prefix + t));
            }
        }
        assertTrue(pending.makeThrough("r1-2"));
        assertEquals(1, CreationsHold.rewrites(pending), "rewritten once r1-0..2 were made");
        assertEquals(7, journal.entries().size(), "the pending topics' records only: " + journal.entries());
        for (final CreationJournal.Entry e : journal.entries())
        {
            assertTrue(pending.isPending(e.name()), e.name() + " kept, not pending");
        }
        final long[] doomed = answered.remove("r2-1");
        assertTrue(pending.forget("r2-1", doomed)); // a DeleteTopics of a pending topic: a DELETE journaled
        journaled("r3-", 20, 1); // the journal more than doubled
        for (int t = 0; t < 20; t++)
        {
            answered.put("r3-" + t, registry.creatingId("r3-" + t));
        }
        assertTrue(pending.makeThrough("r1-3"));
        assertEquals(2, CreationsHold.rewrites(pending), "rewritten again with the deletion in it");
        assertEquals(pending.size(), journal.entries().size(), journal.entries().toString());
        for (final CreationJournal.Entry e : journal.entries())
        {
            assertEquals(CreationJournal.Kind.CREATE, e.kind());
            assertTrue(pending.isPending(e.name()), e.name() + " kept, not pending");
        }
        // the process gone with topics pending: the next start sees the files and the rewritten journal
        journal.close();
        logs.close();
        logs = LogManager.open(LogManagerConfig.of(dir));
        registry = new TopicRegistry(logs, 1);
        journal = CreationReplay.open(List.of(dir), registry, true);
        assertEquals(null, registry.topic("r2-1"), "deleted while pending, made again");
        for (final Map.Entry<String, long[]> e : answered.entrySet())
        {
            final io.ferrite.broker.topic.Topic t = registry.topic(e.getKey());
            assertTrue(t != null, e.getKey() + " answered and not made");
            assertEquals(e.getValue()[0], t.idMostSignificantBits, e.getKey());
            assertEquals(e.getValue()[1], t.idLeastSignificantBits, e.getKey());
            assertEquals(e.getKey().startsWith("r2-") ? 2 : 1, t.partitions.length, e.getKey());
        }
        assertTrue(journal.isEmpty(), "the journal emptied once the start made its records");
    }
    /**
     * A large topic grown and reconfigured while made in slices ({@link LargeTopicChanges}), the process gone after the
     * config change reached only half of the partitions made (the registry changes them in order): the next start makes
     * it to the grown count and gives every partition — made before, and made at the start — the journaled overrides.
     */
    @Test
    void aConfigChangeCutShortByACrashIsFinishedAtTheStart() throws Exception
    {
        final long[] id = registry.newId();
        final Map<String, String> created = Map.of("retention.ms", "1000");
        final Map<String, String> changed = Map.of("retention.ms", "2000", "cleanup.policy", "compact");
        journal.append(List.of(new CreationJournal.Entry(CreationJournal.Kind.CREATE, "big", id[0], id[1], 250, created)));
        pending.add("big", id, 250, created);
        CreationsHold.chunk(pending);
        assertEquals(100, registry.topic("big").partitions.length, "one slice made");
        pending.largeTopics().grow(registry.topic("big"), 300);
        assertEquals(300, registry.topic("big").plannedPartitions());
        pending.largeTopics().configsChanging(registry.topic("big"), changed);
        for (int p = 0; p < 50; p++) // the process gone half way through the change
        {
            logs.updateConfig("big", p, changed);
        }
        journal.close();
        logs.close();
        logs = LogManager.open(LogManagerConfig.of(dir));
        registry = new TopicRegistry(logs, 1);
        journal = CreationReplay.open(List.of(dir), registry, true);
        final io.ferrite.broker.topic.Topic big = registry.topic("big");
        assertEquals(300, big.partitions.length, "made to the grown count");
        assertEquals(id[0], big.idMostSignificantBits);
        assertEquals(changed, big.overrides);
        for (final int p : new int[] {0, 75, 99, 100, 299})
        {
            assertEquals(changed, logs.overrides("big", p), "partition " + p);
        }
        assertTrue(journal.isEmpty(), "the journal emptied once the start made its records");
    }

    /**
     * Review of chunks2, H1 (the reviewer's repro, adapted to the fix): a change A journaled while the topic is in slices,
     * a slice failing, then a change B answered — journaled too, as the journal still holds the topic's creation
     * ({@link LargeTopicChanges#journalsConfigs}): the next start keeps B on the partitions made and makes the rest with
     * it (it forced A on every partition). The same once the start's own making of the rest failed (the topic loaded
     * partly made, the journal kept): a change C is journaled and kept by the start after.
     */
    @Test
    void anAcknowledgedChangeAfterAFailedSliceSurvivesTheStart() throws Exception
    {
        final long[] id = registry.newId();
        final Map<String, String> created = Map.of("retention.ms", "1000");
        final Map<String, String> a = Map.of("retention.ms", "2000");
        final Map<String, String> b = Map.of("retention.ms", "3000");
        final Map<String, String> c = Map.of("retention.ms", "4000");
        java.nio.file.Files.writeString(dir.resolve("big-150"), "in the way");
        journal.append(List.of(new CreationJournal.Entry(CreationJournal.Kind.CREATE, "big", id[0], id[1], 250, created)));
        pending.add("big", id, 250, created);
        CreationsHold.chunk(pending);
        assertEquals(100, registry.topic("big").partitions.length, "one slice made");
        changeConfigs(a); // while in slices
        CreationsHold.chunk(pending); // the second slice fails
        assertEquals(100, registry.topic("big").partitions.length, "the second slice failed");
        assertFalse(pending.largeTopics().inSlices(registry.topic("big")));
        assertTrue(pending.largeTopics().journalsConfigs(registry.topic("big")), "the journal holds its creation");
        changeConfigs(b);
        assertEquals(b, logs.overrides("big", 0));
        reopen();
        assertEquals(100, registry.topic("big").partitions.length, "the start's making failed too: partly made");
        assertTrue(pending.largeTopics().journalsConfigs(registry.topic("big")), "the journal kept for the next start");
        assertEquals(b, logs.overrides("big", 99), "the acknowledged change kept");
        changeConfigs(c);
        java.nio.file.Files.delete(dir.resolve("big-150"));
        reopen();
        assertEquals(250, registry.topic("big").partitions.length);
        for (final int p : new int[] {0, 99, 150, 249})
        {
            assertEquals(c, logs.overrides("big", p), "partition " + p);
        }
        assertFalse(pending.largeTopics().journalsConfigs(registry.topic("big")), "made whole: the journal emptied");
    }

    /**
     * Review of grow, H1 / M1: a whole topic of 10 partitions ({@code cleanup.policy=compact, retention.ms=-1}) grown to
     * 300 — a GROW journaled, no CREATE of it in the journal (emptied when it was made whole), no config change after —
     * one slice made, then the process gone inside the second slice ({@code LogCreation.make} makes the slice's folders
     * and their overrides first, fsyncs the overrides and writes {@code partition.metadata} after): {@code grown-110} a
     * folder only, {@code grown-111} with its {@code partition.properties} empty (written, not yet fsynced: a power
     * loss), {@code grown-112} with its overrides and no {@code partition.metadata}. The start gives each of them the
     * topic's overrides and its id, and makes the rest with them (before the fix, 110 and 111 were sealed with the
     * broker's defaults: {@code cleanup.policy=delete} on a compacted topic).
     */
    @Test
    void aGrowthCutShortInsideASliceGivesItsPartitionsTheTopicsOverridesAtTheStart() throws Exception
    {
        final Map<String, String> kept = Map.of("cleanup.policy", "compact", "retention.ms", "-1");
        final long[] id = registry.newId();
        registry.create("grown", 10, kept, id);
        pending.largeTopics().growWhole(registry.topic("grown"), 300);
        CreationsHold.chunk(pending);
        assertEquals(110, registry.topic("grown").partitions.length, "one slice made");
        assertEquals(List.of(CreationJournal.Kind.GROW), journal.entries().stream().map(CreationJournal.Entry::kind).toList());
        final Path properties = dir.resolve("grown-0").resolve("partition.properties");
        java.nio.file.Files.createDirectory(dir.resolve("grown-110"));
        java.nio.file.Files.createDirectory(dir.resolve("grown-111"));
        java.nio.file.Files.createFile(dir.resolve("grown-111").resolve("partition.properties"));
        java.nio.file.Files.createDirectory(dir.resolve("grown-112"));
        java.nio.file.Files.copy(properties, dir.resolve("grown-112").resolve("partition.properties"));
        reopen();
        final io.ferrite.broker.topic.Topic grown = registry.topic("grown");
        assertEquals(300, grown.partitions.length, "made to the grown count");
        assertEquals(kept, grown.overrides);
        for (final int p : new int[] {0, 109, 110, 111, 112, 113, 299})
        {
            assertEquals(kept, logs.overrides("grown", p), "partition " + p + ": has the topic's overrides");
            assertEquals("version: 0\ntopic_id: " + io.ferrite.broker.topic.TopicIds.encode(id[0], id[1]) + "\n",
                java.nio.file.Files.readString(dir.resolve("grown-" + p).resolve("partition.metadata")), "partition " + p + "'s id");
        }
        assertTrue(journal.isEmpty(), "the journal emptied once the start made its records");
    }

    /**
     * The same with several GROWs and a CONFIG after them: a whole topic grown to 260, then (in slices) to 310, its
     * configs changed, two slices made; the process gone inside the last slice, after its every folder and its
     * overrides were written and before they were fsynced (a power loss: {@code partition.properties} empty, no
     * {@code partition.metadata}, on 210..309). The files hold the grown count already, so the start makes nothing more
     * and does not reconfigure: only the load's repair gives those partitions the changed overrides and the topic's id.
     */
    @Test
    void aGrowthReconfiguredAndCutShortInItsLastSliceKeepsTheChangedOverrides() throws Exception
    {
        final Map<String, String> created = Map.of("cleanup.policy", "compact", "retention.ms", "-1");
        final Map<String, String> changed = Map.of("cleanup.policy", "compact", "retention.ms", "86400000");
        final long[] id = registry.newId();
        registry.create("big", 10, created, id);
        pending.largeTopics().growWhole(registry.topic("big"), 260);
        CreationsHold.chunk(pending);
        pending.largeTopics().grow(registry.topic("big"), 310);
        changeConfigs(changed);
        CreationsHold.chunk(pending);
        assertEquals(210, registry.topic("big").partitions.length, "two slices made");
        assertEquals(List.of(CreationJournal.Kind.GROW, CreationJournal.Kind.GROW, CreationJournal.Kind.CONFIG),
            journal.entries().stream().map(CreationJournal.Entry::kind).toList());
        for (int p = 210; p < 310; p++)
        {
            java.nio.file.Files.createFile(java.nio.file.Files.createDirectory(dir.resolve("big-" + p)).resolve("partition.properties"));
        }
        reopen();
        final io.ferrite.broker.topic.Topic big = registry.topic("big");
        assertEquals(310, big.partitions.length);
        assertEquals(id[0], big.idMostSignificantBits);
        assertEquals(changed, big.overrides);
        for (final int p : new int[] {0, 109, 209, 210, 250, 309})
        {
            assertEquals(changed, logs.overrides("big", p), "partition " + p);
            assertEquals("version: 0\ntopic_id: " + io.ferrite.broker.topic.TopicIds.encode(id[0], id[1]) + "\n",
                java.nio.file.Files.readString(dir.resolve("big-" + p).resolve("partition.metadata")), "partition " + p + "'s id");
        }
        assertTrue(journal.isEmpty(), "the journal emptied once the start made its records");
    }

    /**
     * Review of grow, L3: the journal rewritten while a whole topic's growth is pending (its rewrite size set to 1 byte)
     * keeps the growth's GROW alone, with the config change journaled after it merged in; a start from it (the process
     * gone inside the next slice: a folder without its overrides) makes the topic to the grown count with the changed
     * overrides on every partition.
     */
    @Test
    void aRewriteWithAGrowthPendingKeepsItsGrowWithItsChangedConfigs() throws Exception
    {
        final Map<String, String> changed = Map.of("retention.ms", "2000");
        final long[] id = registry.newId();
        registry.create("big", 10, Map.of("retention.ms", "1000"), id);
        CreationsHold.rewriteFrom(pending, 1);
        pending.largeTopics().growWhole(registry.topic("big"), 300);
        changeConfigs(changed);
        CreationsHold.chunk(pending);
        assertEquals(110, registry.topic("big").partitions.length, "one slice made");
        assertEquals(1, CreationsHold.rewrites(pending), "rewritten after the slice");
        assertEquals(List.of(new CreationJournal.Entry(CreationJournal.Kind.GROW, "big", id[0], id[1], 300, changed)),
            journal.entries(), "the growth's record alone, with its change");
        java.nio.file.Files.createDirectory(dir.resolve("big-110"));
        reopen();
        final io.ferrite.broker.topic.Topic big = registry.topic("big");
        assertEquals(300, big.partitions.length, "made to the grown count");
        assertEquals(id[1], big.idLeastSignificantBits);
        for (final int p : new int[] {0, 109, 110, 111, 299})
        {
            assertEquals(changed, logs.overrides("big", p), "partition " + p);
        }
        assertTrue(journal.isEmpty(), "the journal emptied once the start made its records");
    }

    /** A config change of published topic "big" as {@code ConfigChanges} makes it (the registry's writer: this thread). */
    private void changeConfigs(final Map<String, String> overrides) throws Exception
    {
        if (pending.largeTopics().journalsConfigs(registry.topic("big")))
        {
            pending.largeTopics().configsChanging(registry.topic("big"), overrides);
        }
        registry.updateConfig(registry.topic("big"), overrides);
    }

    /** The process gone (nothing more written) and started again: the files loaded, the journal replayed. */
    private void reopen() throws Exception
    {
        journal.close();
        logs.close();
        logs = LogManager.open(LogManagerConfig.of(dir));
        registry = new TopicRegistry(logs, 1);
        journal = CreationReplay.open(List.of(dir), registry, true);
        pending = new PendingCreations(registry, journal, interrupts::incrementAndGet);
    }
}
