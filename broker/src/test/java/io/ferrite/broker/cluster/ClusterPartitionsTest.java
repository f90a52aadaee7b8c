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
        partitions = new ClusterPartitions(registry, agent, null, (owner, task) -> task.run(), () -> null);
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
     * Kafka 4.4 at start-up, the first image applied: a log of a topic id the image does not know is renamed
     * {@code <topic>-<partition>.<uuid>-stray}, kept with its files, and neither served nor loaded again; an existing
     * {@code -stray} directory stays as it is. A topic the image knows, and the local coordinators' own, stay.
     */
    @Test
    void aTopicTheImageDoesNotKnowIsRenamedStrayKeptAndNeverLoadedAgain() throws Exception
    {
        final Topic stray = localTopic("gone");
        final Topic known = localTopic("known");
        final Topic offsets = localTopic("__consumer_offsets");
        final Path strayDir = stray.partition(0).log.dir();
        final Path older = strayDir.getParent().resolve("older-0.0123456789abcdef0123456789abcdef-stray");
        Files.createDirectories(older);
        Files.writeString(older.resolve("00000000000000000000.log"), "kept");
        partitions.markStrays((msb, lsb) -> msb == known.idMostSignificantBits && lsb == known.idLeastSignificantBits);

        assertNull(registry.topic("gone"), "not served");
        assertTrue(stray.isDeleted());
        assertSame(known, registry.topic("known"));
        assertSame(offsets, registry.topic("__consumer_offsets"), "the local coordinators' topic is not the image's");
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
}
