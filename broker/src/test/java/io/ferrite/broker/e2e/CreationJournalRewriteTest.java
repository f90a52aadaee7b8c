package io.ferrite.broker.e2e;

import io.ferrite.broker.admin.CreationJournal;
import io.ferrite.broker.admin.CreationsHold;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The creation journal rewritten while topics are pending ({@code PendingCreations}: to the pending topics' records
 * alone), then the broker SIGKILLed with topics still pending: the next start makes every topic answered and not
 * deleted, with its id, partitions and configs, and none deleted — before or after a rewrite dropped its records.
 */
class CreationJournalRewriteTest
{
    private static final Map<String, String> KEPT = Map.of("cleanup.policy", "compact", "retention.ms", "-1");

    @TempDir
    Path dir;

    /**
     * A child JVM whose journal is rewritten whenever it has doubled (rewrite size 1 byte): four CreateTopics of 25
     * topics x 10 partitions (each request's files take several chunks, and the journal is rewritten after the first
     * chunk that leaves topics pending), a DeleteTopics of the oldest topic and of the newest, then SIGKILL. The rewrite
     * is seen in the broker's log; the restart makes the rest.
     */
    @Test
    void aSigkillAfterRewritesWithTopicsPendingLosesNoneAnsweredAndResurrectsNoneDeleted() throws Exception
    {
        final Path data = Files.createDirectories(dir.resolve("data")).toRealPath();
        final Map<String, String> env = Map.of("JAVA_TOOL_OPTIONS", "-D" + CreationsHold.rewriteProperty() + "=1"
            + " -Dorg.slf4j.simpleLogger.log.io.ferrite.broker.admin.PendingCreations=info");
        final Map<String, Uuid> answered = new HashMap<>();
        final int requests = 4;
        final int perRequest = 25;
        final int partitions = 10;
        final List<String> deleted = List.of("rw-0-0", "rw-" + (requests - 1) + "-" + (perRequest - 1));
        ServerCommand.Running server = ServerCommand.start(dir, env, args(data));
        try (Admin admin = admin(server.port()))
        {
            for (int r = 0; r < requests; r++)
            {
                final List<NewTopic> topics = new ArrayList<>();
                for (int t = 0; t < perRequest; t++)
                {
                    topics.add(new NewTopic("rw-" + r + "-" + t, partitions, (short)1).configs(KEPT));
                }
                final CreateTopicsResult result = admin.createTopics(topics);
                result.all().get(30, TimeUnit.SECONDS);
                for (final NewTopic t : topics)
                {
                    answered.put(t.name(), result.topicId(t.name()).get());
                }
            }
            admin.deleteTopics(deleted).all().get(30, TimeUnit.SECONDS);
            deleted.forEach(answered::remove);
            server.process().destroyForcibly();
            assertTrue(server.process().waitFor(30, TimeUnit.SECONDS));
            assertEquals(137, server.process().exitValue(), "killed");
        }
        final String log = server.stderr();
        assertTrue(log.contains("rewritten with"), "no rewrite of the journal with topics pending:\n" + log);
        long made = 0; // the answered, not deleted, topics' partition directories
        for (final String name : answered.keySet())
        {
            for (int p = 0; p < partitions; p++)
            {
                made += Files.isDirectory(data.resolve(name + "-" + p)) ? 1 : 0;
            }
        }
        System.out.println("partition directories at the kill: " + made + " of " + answered.size() * partitions + "; journal "
            + Files.size(data.resolve(CreationJournal.FILE_NAME)) + " bytes");
        server = ServerCommand.start(dir, args(data)); // the default rewrite size
        try (Admin admin = admin(server.port()))
        {
            final Set<String> names = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            for (final String d : deleted)
            {
                assertFalse(names.contains(d), d + " deleted and made again");
            }
            final Map<String, TopicDescription> described = admin.describeTopics(answered.keySet()).allTopicNames().get(60, TimeUnit.SECONDS);
            final List<ConfigResource> resources = new ArrayList<>();
            for (final Map.Entry<String, Uuid> e : answered.entrySet())
            {
                assertEquals(e.getValue(), described.get(e.getKey()).topicId(), e.getKey() + " (" + made + " directories at the kill)");
                assertEquals(partitions, described.get(e.getKey()).partitions().size(), e.getKey());
                resources.add(new ConfigResource(ConfigResource.Type.TOPIC, e.getKey()));
            }
            for (final Map.Entry<ConfigResource, Config> c : admin.describeConfigs(resources).all().get(60, TimeUnit.SECONDS).entrySet())
            {
                assertEquals("compact", c.getValue().get("cleanup.policy").value(), c.getKey().name());
            }
            CreationChunksTest.produceAndConsume("127.0.0.1:" + server.port(), "rw-" + (requests - 1) + "-0", partitions);
            assertEquals(0, Files.size(data.resolve(CreationJournal.FILE_NAME)), "the journal emptied once its records are made");
        }
        finally
        {
            server.stop();
        }
        org.junit.jupiter.api.Assumptions.assumeTrue(made < (long)answered.size() * partitions,
            "the agent made every file before the kill: nothing was replayed (" + made + " directories)");
    }

    private static String[] args(final Path data)
    {
        return new String[] {"--override", "log.dir=" + data, "--override", "listeners=PLAINTEXT://127.0.0.1:0"};
    }

    private static Admin admin(final int port)
    {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port));
    }
}
