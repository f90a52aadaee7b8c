package io.ferrite.broker.cluster;

import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.replication.ClusterNode;
import org.agrona.concurrent.AgentInvoker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the image's changes do to the local topics, on a real registry and log manager with the admin agent stepped by
 * an AgentInvoker (the node's metadata image itself is not started: the changes are told as the loader tells them).
 */
class ClusterPartitionsTest
{
    @TempDir
    Path dir;

    private LogManager logs;
    private TopicRegistry registry;
    private AdminAgent agent;
    private AgentInvoker invoker;
    private ClusterPartitions partitions;
    private final List<Throwable> errors = new ArrayList<>();
    /** The image the removals read (null: the node is starting): by default one with no topic, this node 1. */
    private LocalRemoval.Image image = image(1);

    @BeforeEach
    void open() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        registry = new TopicRegistry(logs, 1);
        registry.load();
        agent = new AdminAgent(registry);
        invoker = new AgentInvoker(errors::add, null, agent);
        invoker.start(); // this thread is the registry's writer from now on
        // the log thread's tasks run in place (this thread); no leadership: only followed partitions are told here
        partitions = new ClusterPartitions(registry, agent, null, (owner, task) -> task.run(), () -> null, () -> image);
    }

    @AfterEach
    void close() throws Exception
    {
        invoker.close();
        logs.close();
        assertEquals(List.of(), errors);
    }

    private static ClusterNode.TopicState image(final String name, final long msb, final long lsb)
    {
        return new ClusterNode.TopicState(name, msb, lsb, 1, List.of(), Map.of());
    }

    /** An image in which this node is {@code nodeId} and which holds {@code known}. */
    private static LocalRemoval.Image image(final int nodeId, final ClusterNode.TopicState... known)
    {
        return new LocalRemoval.Image()
        {
            @Override
            public java.util.Optional<ClusterNode.TopicState> topic(final String name)
            {
                return java.util.Arrays.stream(known).filter(t -> t.name().equals(name)).findFirst();
            }

            @Override
            public int nodeId()
            {
                return nodeId;
            }
        };
    }

    private static ClusterNode.TopicState withReplicas(final String name, final long msb, final long lsb, final int[]... replicas)
    {
        final List<ClusterNode.PartitionState> placed = new ArrayList<>();
        for (int p = 0; p < replicas.length; p++)
        {
            placed.add(new ClusterNode.PartitionState(p, replicas[p][0], 3, 4, replicas[p], replicas[p], new int[0]));
        }
        return new ClusterNode.TopicState(name, msb, lsb, replicas.length, placed, Map.of());
    }

    private static ClusterNode.PartitionState followed()
    {
        return new ClusterNode.PartitionState(0, 2, 3, 4, new int[] {1, 2}, new int[] {1, 2}, new int[0]);
    }

    private Topic localTopic(final String name) throws Exception
    {
        final var created = agent.createTopic(name, 1, Map.of());
        invoker.invoke();
        return created.join();
    }

    @Test
    void aLocalTopicWithAnotherIdThanTheImagesIsKeptAndItsPartitionNotServed() throws Exception
    {
        final Topic local = localTopic("__consumer_offsets");
        partitions.follows(image("__consumer_offsets", 7, 8), followed());
        invoker.invoke();

        final Topic now = registry.topic("__consumer_offsets");
        assertSame(local, now, "the local topic, its data and id kept (Kafka: InconsistentTopicIdException, nothing deleted)");
        assertFalse(now.isDeleted());
        assertTrue(Files.isDirectory(local.partition(0).log.dir()));
    }

    /**
     * A topic deleted while this node was down and created again under its name (a new id): the first image's follow
     * finds the old local topic (offline), and once the start renamed it stray the image's topic is made here.
     */
    @Test
    void theImagesTopicOfAStraysNameIsMadeOnceTheStrayIsRenamed() throws Exception
    {
        final Topic old = localTopic("t");
        partitions.follows(image("t", 7, 8), followed());
        invoker.invoke();
        assertSame(old, registry.topic("t"), "offline until the stray pass: the old topic kept as it is");

        partitions.markStrays((msb, lsb) -> msb == 7 && lsb == 8);
        invoker.invoke();
        final Topic made = registry.topic("t");
        assertNotNull(made, "the image's t made once the old one was renamed stray");
        assertEquals(7, made.idMostSignificantBits);
        assertEquals(8, made.idLeastSignificantBits);
        assertTrue(old.isDeleted(), "the old one renamed stray");
    }

    /**
     * Kafka 4.4 at start-up, the first image applied: a log of a topic id the image does not know is renamed
     * {@code <topic>-<partition>.<uuid>-stray}, kept with its files, and neither served nor loaded again; an existing
     * {@code -stray} directory stays as it is. A topic the image knows stays; a local
     * {@code __consumer_offsets} or {@code __transaction_state} the image does not know is a stray too (the coordinators'
     * topics are the controller's, issue 14).
     */
    @Test
    void aTopicTheImageDoesNotKnowIsRenamedStrayKeptAndNeverLoadedAgain() throws Exception
    {
        final Topic stray = localTopic("gone");
        final Topic known = localTopic("known");
        final Topic offsets = localTopic("__consumer_offsets");
        final Topic txns = localTopic("__transaction_state");
        final Path strayDir = stray.partition(0).log.dir();
        final Path older = strayDir.getParent().resolve("older-0.0123456789abcdef0123456789abcdef-stray");
        Files.createDirectories(older);
        Files.writeString(older.resolve("00000000000000000000.log"), "kept");
        partitions.markStrays((msb, lsb) -> msb == known.idMostSignificantBits && lsb == known.idLeastSignificantBits);

        assertNull(registry.topic("gone"), "not served");
        assertTrue(stray.isDeleted());
        assertSame(known, registry.topic("known"));
        assertNull(registry.topic("__transaction_state"), "the transactions' topic is the controller's: a local one the image lacks is a stray");
        assertTrue(txns.isDeleted());
        assertNull(registry.topic("__consumer_offsets"), "the groups' topic is the controller's: a local one the image lacks is a stray");
        assertTrue(offsets.isDeleted());
        assertFalse(Files.exists(strayDir));
        final List<Path> renamed;
        try (var list = Files.list(strayDir.getParent()))
        {
            renamed = list.filter(p -> p.getFileName().toString().matches("gone-0\\.[0-9a-f]{32}-stray")).toList();
        }
        assertEquals(1, renamed.size(), "gone-0 renamed <topic>-<partition>.<uuid>-stray");
        assertTrue(Files.exists(renamed.get(0).resolve("00000000000000000000.log")), "its segment kept");

        // the next start: neither stray directory is loaded, removed or touched
        invoker.close();
        logs.close();
        logs = LogManager.open(LogManagerConfig.of(dir));
        registry = new TopicRegistry(logs, 1);
        registry.load();
        agent = new AdminAgent(registry);
        invoker = new AgentInvoker(errors::add, null, agent);
        invoker.start();
        assertNull(registry.topic("gone"));
        assertNull(registry.topic("older"));
        assertNotNull(registry.topic("known"));
        assertTrue(Files.exists(renamed.get(0).resolve("00000000000000000000.log")), "still kept after a restart");
        assertEquals("kept", Files.readString(older.resolve("00000000000000000000.log")), "an older stray left as it was");
    }

    @Test
    void aStoppedReplicaDeletesOnlyTheTopicTheImageHad() throws Exception
    {
        final Topic local = localTopic("kept");
        partitions.stopped("kept", 0); // a local topic of that name whose id the image never had
        invoker.invoke();
        assertSame(local, registry.topic("kept"));
        assertFalse(local.isDeleted());

        partitions.follows(image("imaged", 1, 2), followed());
        invoker.invoke();
        final Topic imaged = registry.topic("imaged");
        assertNotNull(imaged);
        assertEquals(1, imaged.idMostSignificantBits);
        partitions.stopped("imaged", 0); // deleted from the image
        invoker.invoke();
        assertNull(registry.topic("imaged"));
        assertTrue(imaged.isDeleted());
    }

    @Test
    void aTopicIsCreatedWithTheImagesConfigsAndFollowsTheirChanges() throws Exception
    {
        partitions.topicConfigs("changelog", Map.of("cleanup.policy", "compact", "retention.ms", "-1"));
        partitions.follows(image("changelog", 5, 6), followed());
        invoker.invoke();
        final Topic created = registry.topic("changelog");
        assertEquals(Map.of("cleanup.policy", "compact", "retention.ms", "-1"), created.overrides);
        assertEquals(Map.of("cleanup.policy", "compact", "retention.ms", "-1"), logs.overrides("changelog", 0));

        partitions.topicConfigs("changelog", Map.of("cleanup.policy", "compact,delete"));
        invoker.invoke();
        assertEquals(Map.of("cleanup.policy", "compact,delete"), registry.topic("changelog").overrides);
        assertEquals(Map.of("cleanup.policy", "compact,delete"), logs.overrides("changelog", 0));
    }

    @Test
    void theImagesConfigsReachATopicThisNodeHadBeforeItsStart() throws Exception
    {
        final Topic before = registry.create("kept", 1, Map.of("retention.ms", "5000"), new long[] {3, 4}); // as loaded
        partitions.topicConfigs("kept", Map.of("retention.ms", "9000")); // changed while the node was down
        partitions.follows(image("kept", 3, 4), followed());
        invoker.invoke();
        assertEquals(before.partition(0).log, registry.topic("kept").partition(0).log, "the same log, kept");
        assertEquals(Map.of("retention.ms", "9000"), registry.topic("kept").overrides);
        assertEquals(Map.of("retention.ms", "9000"), logs.overrides("kept", 0));
    }

    @Test
    void anAlterPartitionAnswerNoLongerCurrentIsNotApplied()
    {
        // the image's state at leader epoch 5, partition epoch 9 (the agent's part, which starts leading, is not run)
        final ClusterNode.PartitionState now = new ClusterNode.PartitionState(0, 1, 5, 9, new int[] {1, 2, 3},
            new int[] {1, 2, 3}, new int[0]);
        partitions.leads(image("t", 1, 1), now);
        // an answer to an older proposal, at an older partition epoch, then one for an earlier leadership
        partitions.answered("t", 0, new ClusterNode.IsrAnswer(5, 8, new int[] {1, 2}));
        partitions.answered("t", 0, new ClusterNode.IsrAnswer(4, 10, new int[] {1}));
        assertSame(now, partitions.led("t", 0), "neither applied: the leader's state is the image's");
    }

    @Test
    void aConfigFerriteDoesNotKnowIsLeftOutAndTheRestApplied() throws Exception
    {
        partitions.topicConfigs("t", Map.of("retention.ms", "1000", "no.such.config", "x"));
        partitions.follows(image("t", 9, 9), followed());
        invoker.invoke();
        assertEquals(Map.of("retention.ms", "1000"), registry.topic("t").overrides);
    }

    @Test
    void aRemovalHeardWhileTheNodeStartsIsDecidedWithItsImageOnceItJoined() throws Exception
    {
        partitions.follows(image("t", 1, 2), followed());
        invoker.invoke();
        final Topic local = registry.topic("t");
        assertNotNull(local);
        image = null; // starting: the node is not there yet
        partitions.stopped("t", 0);
        invoker.invoke();
        assertSame(local, registry.topic("t"), "no image to decide with yet: kept");

        image = image(1, withReplicas("t", 1, 2, new int[] {2, 3}, new int[] {1, 2})); // partition 1 still here
        partitions.joined();
        invoker.invoke();
        assertSame(local, registry.topic("t"));
        assertFalse(local.isDeleted());

        image = null;
        partitions.stopped("t", 1);
        invoker.invoke();
        image = image(1); // the topic left the image meanwhile
        partitions.joined();
        invoker.invoke();
        assertNull(registry.topic("t"));
        assertTrue(local.isDeleted());
    }

    @Test
    void aLocalRemovalIsKeptLeftImageOrMovedAway() throws Exception
    {
        partitions.follows(image("t", 1, 2), followed());
        invoker.invoke();
        final Topic local = registry.topic("t");
        final long[] seen = {1, 2};
        assertEquals(LocalRemoval.KEEP, LocalRemoval.of(null, seen, image(1)));
        assertEquals(LocalRemoval.KEEP, LocalRemoval.of(local, new long[] {1, 3}, image(1)), "another id: not this cluster's");
        assertEquals(LocalRemoval.LEFT_IMAGE, LocalRemoval.of(local, seen, image(1)));
        assertEquals(LocalRemoval.LEFT_IMAGE, LocalRemoval.of(local, seen, image(1, withReplicas("t", 1, 9, new int[] {1}))),
            "the image's topic of that name has another id: this one was deleted");
        assertEquals(LocalRemoval.KEEP, LocalRemoval.of(local, seen, image(1, withReplicas("t", 1, 2, new int[] {2}, new int[] {3, 1}))));
        assertEquals(LocalRemoval.MOVED_AWAY, LocalRemoval.of(local, seen, image(1, withReplicas("t", 1, 2, new int[] {2}, new int[] {3, 2}))));
    }

    @Test
    void inClusterModeNoPartitionIsServedAsASingleNodesUntilTheImagePlacesIt() throws Exception
    {
        final Topic loaded = localTopic("loaded");
        final Topic offsets = localTopic("__consumer_offsets");
        Unassigned.untilAssigned(registry);
        assertEquals(-1, loaded.partition(0).followed().leaderId, "loaded: followed with no leader (NOT_LEADER_OR_FOLLOWER)");
        assertEquals(-1, offsets.partition(0).followed().leaderId, "the groups' topic is the image's to place, as any");

        partitions.follows(image("made", 1, 2), new ClusterNode.PartitionState(1, 2, 3, 4, new int[] {1, 2}, new int[] {1, 2},
            new int[0])); // partition 1 placed here; the dense array makes partition 0 too, which the image gives others
        invoker.invoke();
        final Topic made = registry.topic("made");
        assertEquals(2, made.partitions.length);
        for (final var p : made.partitions)
        {
            assertNotNull(p.followed(), p + " is served as a single node's");
            assertEquals(-1, p.followed().leaderId);
        }
        final Topic grown = localTopic("__transaction_state");
        assertNotNull(grown.partition(0).followed(), "the transactions' topic is the image's to place, as any other");
    }

    @Test
    void aTopicOfTheImageWithNoReplicaHereIsAStrayAtTheStart() throws Exception
    {
        final Topic away = localTopic("away");
        final Topic here = localTopic("here");
        final var images = List.of(withReplicas("away", away.idMostSignificantBits, away.idLeastSignificantBits, new int[] {2, 3}),
            withReplicas("here", here.idMostSignificantBits, here.idLeastSignificantBits, new int[] {2, 3}, new int[] {1, 2}));
        partitions.markStrays((msb, lsb) -> images.stream().anyMatch(t -> t.idMsb() == msb && t.idLsb() == lsb &&
            LocalRemoval.holds(t, 1)));
        invoker.invoke();
        assertNull(registry.topic("away"));
        assertTrue(away.isDeleted());
        assertTrue(strayIn(away.partition(0).log.dir().getParent(), "away"), "away-0 renamed <topic>-<partition>.<uuid>-stray, kept");
        assertSame(here, registry.topic("here"));
    }

    private static boolean strayIn(final Path parent, final String topic) throws Exception
    {
        try (var list = Files.list(parent))
        {
            return list.anyMatch(p -> p.getFileName().toString().matches(topic + "-0\\.[0-9a-f]{32}-stray"));
        }
    }
}
