package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a CreateTopics (its journal record: see the test), CreatePartitions, AlterConfigs or DeleteTopics answer promises
 * survives a power loss, in
 * the default durability mode as in fsync (Kafka commits them to its fsynced metadata log before
 * answering): the files a new partition is known by ({@code partition.metadata} with the topic id,
 * {@code partition.properties} with the overrides) fsynced, then the partition directory holding
 * their names, then the log directory holding the partition's. A power loss cannot be made here;
 * the child server runs with an LD_PRELOAD shim that records every successful fsync and rename, the
 * test adds a line once the answer came, and checks that what a power loss needs was made before
 * that line, in that order: a file's content fsynced (under the temporary name it is renamed from,
 * or a new file under its own), then renamed, then its directory fsynced.
 */
class CreationDurabilityTest
{
    private static final long ANSWER_DEADLINE_S = 20;

    @TempDir
    Path dir;

    @Test
    void aNewTopicsFilesAndDirectoriesAreFsyncedBeforeTheAnswer() throws Exception
    {
        final Path data = Files.createDirectories(dir.resolve("data")).toRealPath();
        final Path fsyncs = dir.resolve("fsyncs.txt");
        final ServerCommand.Running server = startRecordingFsyncs(data, fsyncs);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port())))
        {
            Files.write(fsyncs, new byte[0]); // the start's own (meta.properties, the journal made) do not count
            admin.createTopics(List.of(new NewTopic("ledger", 2, (short)1).configs(Map.of("retention.ms", "3600000"))))
                .all().get(ANSWER_DEADLINE_S, TimeUnit.SECONDS);
            // the promise changed with the creation journal (issue 11): as Kafka answers once its controller committed the
            // topic to its fsynced metadata log, a CreateTopics is answered once its one record in the journal is fsynced
            // (the journal file made, and its directory fsynced, at the start); the partitions' files follow, made by the
            // admin agent, each fsynced as before, and the next start makes them if a crash came first (CreationJournalTest)
            List<String> made = beforeTheAnswer(fsyncs);
            assertTrue(made.contains(data.resolve(io.ferrite.broker.admin.CreationJournal.FILE_NAME).toString()),
                "the creation journal not fsynced before the answer; recorded: " + made);
            io.ferrite.testing.Await.await(() ->
            {
                final List<String> lines = recorded(fsyncs);
                final int partitionDir = lines.lastIndexOf(data.resolve("ledger-1").toString());
                return partitionDir >= 0 && lines.lastIndexOf(data.toString()) > partitionDir;
            }, java.time.Duration.ofSeconds(ANSWER_DEADLINE_S),
                "the partitions' directories made and the log directory fsynced after them");
            made = recorded(fsyncs);
            for (int p = 0; p < 2; p++)
            {
                final Path partition = data.resolve("ledger-" + p);
                assertFsyncedIn(made, partition, "partition.metadata");
                assertFsyncedIn(made, partition, "partition.properties");
                assertFsyncedAfter(made, data, partition.toString());
            }

            Files.write(fsyncs, new byte[0]);
            admin.createPartitions(Map.of("ledger", NewPartitions.increaseTo(3))).all().get(ANSWER_DEADLINE_S, TimeUnit.SECONDS);
            made = beforeTheAnswer(fsyncs);
            assertFsyncedIn(made, data.resolve("ledger-2"), "partition.metadata");
            assertFsyncedIn(made, data.resolve("ledger-2"), "partition.properties");
            assertFsyncedAfter(made, data, data.resolve("ledger-2").toString());

            Files.write(fsyncs, new byte[0]);
            final ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, "ledger");
            admin.incrementalAlterConfigs(Map.of(topic, List.of(new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"),
                AlterConfigOp.OpType.SET)))).all().get(ANSWER_DEADLINE_S, TimeUnit.SECONDS);
            made = beforeTheAnswer(fsyncs);
            for (int p = 0; p < 3; p++)
            {
                assertReplacedIn(made, data.resolve("ledger-" + p), "partition.properties");
            }
        }
        finally
        {
            server.stop();
        }
    }

    /**
     * A CreateTopics of many small topics has their files made before its answer (PendingCreations.makeSmallBeforeAnswer)
     * as one batch: before the answer, every partition's files fsynced and renamed, its directory fsynced after them,
     * and the log directory fsynced after the last partition directory — exactly once for the whole request, where making
     * the topics one after another fsynced it once a topic (20 here). The offset checkpoints, which fsync the log
     * directory too, are put off for the test's length, so that no fsync of theirs can stand in for the creation's.
     */
    @Test
    void aRequestsSmallTopicsAreDurableBeforeTheAnswerWithOneFsyncOfTheLogDirectory() throws Exception
    {
        final Path data = Files.createDirectories(dir.resolve("data")).toRealPath();
        final Path fsyncs = dir.resolve("fsyncs.txt");
        final ServerCommand.Running server = startRecordingFsyncs(data, fsyncs,
            "--override", "log.flush.offset.checkpoint.interval.ms=3600000");
        final int topics = 20;
        final int partitions = 3;
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port())))
        {
            final List<NewTopic> created = new java.util.ArrayList<>();
            for (int t = 0; t < topics; t++)
            {
                created.add(new NewTopic("batch" + t, partitions, (short)1).configs(Map.of("retention.ms", "3600000")));
            }
            Files.write(fsyncs, new byte[0]);
            admin.createTopics(created).all().get(ANSWER_DEADLINE_S, TimeUnit.SECONDS);
            final List<String> made = beforeTheAnswer(fsyncs);
            int firstFile = made.size();
            int lastPartitionDir = -1;
            for (int t = 0; t < topics; t++)
            {
                for (int p = 0; p < partitions; p++)
                {
                    final Path partition = data.resolve("batch" + t + "-" + p);
                    assertFsyncedIn(made, partition, "partition.metadata");
                    assertFsyncedIn(made, partition, "partition.properties");
                    firstFile = Math.min(firstFile, made.indexOf(partition.resolve("partition.properties").toString()));
                    lastPartitionDir = Math.max(lastPartitionDir, made.lastIndexOf(partition.toString()));
                }
            }
            assertTrue(firstFile >= 0 && lastPartitionDir > firstFile, "recorded: " + made);
            final long logDirFsyncs = made.subList(firstFile, made.size()).stream().filter(data.toString()::equals).count();
            assertEquals(1, logDirFsyncs, "fsyncs of the log directory while " + topics + " topics were made; recorded: "
                + made);
            assertTrue(made.lastIndexOf(data.toString()) > lastPartitionDir, "the log directory's one fsync not after the"
                + " last partition directory; recorded: " + made);
        }
        finally
        {
            server.stop();
        }
    }

    /**
     * A DeleteTopics answered NONE survives a power loss too: the partition directories' renames to
     * {@code -delete} are made durable by an fsync of the log directory before the answer — one for
     * the whole topic, plus the two of the checkpoints written again without it, however many
     * partitions it has (a deletion per partition cost one fsync of the log directory each).
     */
    @Test
    void aDeletedTopicsRenamesAreFsyncedOnceForTheWholeTopicBeforeTheAnswer() throws Exception
    {
        final Path data = Files.createDirectories(dir.resolve("data")).toRealPath();
        final Path fsyncs = dir.resolve("fsyncs.txt");
        final ServerCommand.Running server = startRecordingFsyncs(data, fsyncs);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port())))
        {
            final int partitions = 50;
            admin.createTopics(List.of(new NewTopic("bulk", partitions, (short)1))).all().get(ANSWER_DEADLINE_S, TimeUnit.SECONDS);
            // answered once journaled: its files are made after the answer, and their fsyncs are not the deletion's
            TopicsPublished.await(admin, "bulk");
            Files.write(fsyncs, new byte[0]);
            admin.deleteTopics(List.of("bulk")).all().get(ANSWER_DEADLINE_S, TimeUnit.SECONDS);
            final List<String> made = beforeTheAnswer(fsyncs);
            for (int p = 0; p < partitions; p++)
            {
                assertFalse(Files.exists(data.resolve("bulk-" + p)), "bulk-" + p + " renamed before the answer");
            }
            int lastRename = -1;
            int renames = 0;
            for (int i = 0; i < made.size(); i++)
            {
                if (made.get(i).startsWith("rename " + data.resolve("bulk-")) && made.get(i).endsWith("-delete"))
                {
                    lastRename = i;
                    renames++;
                }
            }
            assertEquals(partitions, renames, "renames to -delete; recorded: " + made);
            assertTrue(made.lastIndexOf(data.toString()) > lastRename, "the log directory not fsynced after the renames");
            final long logDirFsyncs = made.stream().filter(data.toString()::equals).count();
            assertTrue(logDirFsyncs >= 1 && logDirFsyncs <= 3, "fsyncs of the log directory for a topic of " + partitions
                + " partitions: " + logDirFsyncs + "; fsyncs made: " + made);
        }
        finally
        {
            server.stop();
        }
    }

    /** A child server on {@code data} whose successful fsyncs are recorded, one path a line, in {@code fsyncs}. */
    private ServerCommand.Running startRecordingFsyncs(final Path data, final Path fsyncs, final String... more) throws Exception
    {
        final List<String> args = new java.util.ArrayList<>(List.of("--override", "log.dir=" + data, "--override",
            "listeners=PLAINTEXT://127.0.0.1:0"));
        args.addAll(List.of(more));
        return ServerCommand.start(dir, Map.of("LD_PRELOAD", FsyncShim.compile(dir).toString(), "FERRITE_FSYNC_LOG", fsyncs.toString()),
            args.toArray(new String[0]));
    }

    /** Every line recorded so far. */
    private static List<String> recorded(final Path fsyncs) throws java.io.IOException
    {
        return Files.readAllLines(fsyncs);
    }

    /** The recorded lines up to the one the test added once the answer came. */
    private static List<String> beforeTheAnswer(final Path fsyncs) throws java.io.IOException
    {
        Files.writeString(fsyncs, "answered\n", java.nio.file.StandardOpenOption.APPEND);
        final List<String> lines = Files.readAllLines(fsyncs);
        return lines.subList(0, lines.indexOf("answered"));
    }

    /**
     * A file of a new partition durable: its content fsynced — written under a temporary name and
     * renamed ({@code partition.metadata}), or written under its own ({@code partition.properties}) —
     * then its directory fsynced after the rename.
     */
    private static void assertFsyncedIn(final List<String> made, final Path partitionDir, final String file)
    {
        final String named = partitionDir.resolve(file).toString();
        if (made.contains(named))
        {
            assertFsyncedAfter(made, partitionDir, named);
        }
        else
        {
            assertReplacedIn(made, partitionDir, file);
        }
    }

    /** A file replaced durably: the temporary file fsynced, renamed over it, then its directory fsynced. */
    private static void assertReplacedIn(final List<String> made, final Path partitionDir, final String file)
    {
        final String content = partitionDir.resolve(file + ".tmp").toString();
        final String rename = "rename " + partitionDir.resolve(file);
        assertTrue(made.contains(content), content + " not fsynced; recorded: " + made);
        assertTrue(made.lastIndexOf(rename) > made.indexOf(content), "not renamed after its fsync: " + file + "; recorded: " + made);
        assertFsyncedAfter(made, partitionDir, rename);
    }

    private static void assertFsyncedAfter(final List<String> made, final Path directory, final String first)
    {
        assertTrue(made.lastIndexOf(directory.toString()) > made.lastIndexOf(first),
            directory + " not fsynced after " + first + "; recorded: " + made);
    }
}
