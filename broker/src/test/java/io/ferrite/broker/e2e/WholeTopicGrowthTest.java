package io.ferrite.broker.e2e;

import io.ferrite.broker.admin.CreationJournal;
import io.ferrite.broker.admin.CreationsHold;
import io.ferrite.broker.admin.PendingCreations;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreatePartitionsOptions;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.Errors;
import io.ferrite.testing.Await;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.ferrite.broker.e2e.LargeTopicSlicesTest.alterRetention;
import static io.ferrite.broker.e2e.LargeTopicSlicesTest.made;
import static io.ferrite.broker.e2e.LargeTopicSlicesTest.record;
import static io.ferrite.broker.e2e.LargeTopicSlicesTest.step;
import static io.ferrite.broker.e2e.LargeTopicSlicesTest.storedOverrides;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A CreatePartitions that grows a whole topic by more than a slice (issue 11: 10 -> 5 000 made every new partition's
 * files before its answer, past Admin's 30 s request timeout at scale, whose retry then got INVALID_PARTITIONS): answered
 * once its GROW is journaled, the topic listed with the new count at once, the new partitions made in slices between
 * the agent's commands and answering NOT_LEADER_OR_FOLLOWER until then — what a Kafka 4.4 broker answers for a partition
 * in its metadata whose log it has not made. The slices are held with {@link CreationsHold} and stepped on the agent.
 */
class WholeTopicGrowthTest
{
    private static final Map<String, String> KEPT = Map.of("cleanup.policy", "compact", "retention.ms", "-1");
    /**
     * The new partitions of the SIGKILL test's growth: 350 (three and a half slices) in the default build, 1 600 in
     * {@code -Pslow} and {@code -Plong} (the test is tagged {@code shortened}): the same steps and assertions, fewer
     * files for the start to make. 1 600 in the default build before issue 17's build work (25 s of the class's 34).
     */
    private static final int SIGKILL_GROWTH = Integer.getInteger("ferrite.wholeTopicGrowth.partitions", 350);

    @TempDir
    Path dir;

    /**
     * A topic of 10 partitions, one holding a record, grown to 360: answered with nothing made, Metadata lists 360,
     * ListOffsets / Fetch / Produce (unretried) of a new partition NOT_LEADER_OR_FOLLOWER, of an old one NONE; a slice
     * stepped makes 100; meanwhile another CreateTopics, a config change (made partitions changed at once, later ones
     * made with it) and a further growth are answered without more files, validateOnly checks the grown count; a
     * producer's record to the last partition is acknowledged once the rest is made, the journal empties, the old
     * record is still there.
     */
    @Test
    void aWholeTopicGrownByMoreThanASliceIsAnsweredAtOnceAndMadeInSlices() throws Exception
    {
        final int chunk = CreationsHold.chunkPartitions();
        final int from = 10;
        final int count = from + 3 * chunk + 50;
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final PendingCreations pending = broker.broker.admin().creations();
            final CreateTopicsResult created = admin.createTopics(List.of(new NewTopic("grown", from, (short)1).configs(KEPT)));
            created.all().get(30, TimeUnit.SECONDS);
            final Uuid id = created.topicId("grown").get();
            Await.await(() -> made(broker, "grown") == from, Duration.ofSeconds(30), "the topic made");
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of("acks", "all")))
            {
                assertEquals(0, producer.send(record("grown", 0)).get(30, TimeUnit.SECONDS).offset());
            }
            Await.await(() -> pending.size() == 0 && Files.size(dir.resolve(CreationJournal.FILE_NAME)) == 0, Duration.ofSeconds(30),
                "the creation made, the journal empty");
            CreationsHold.hold(pending, true);

            admin.createPartitions(Map.of("grown", NewPartitions.increaseTo(count))).all().get(30, TimeUnit.SECONDS);
            assertEquals(from, made(broker, "grown"), "answered with none of the new partitions made");
            assertTrue(Files.size(dir.resolve(CreationJournal.FILE_NAME)) > 0, "the growth journaled before the answer");
            final MetadataResponseData.MetadataResponseTopic listed = LargeTopicSlicesTest.metadata(raw, "grown");
            assertEquals(Errors.NONE.code(), listed.errorCode());
            assertEquals(count, listed.partitions().size(), "listed with the new count at once");
            assertEquals(Errors.NONE.code(), CreationWindowTest.listOffsets(raw, "grown", from - 1));
            assertEquals(Errors.NOT_LEADER_OR_FOLLOWER.code(), CreationWindowTest.listOffsets(raw, "grown", from));
            assertEquals(Errors.NOT_LEADER_OR_FOLLOWER.code(), CreationWindowTest.fetch(raw, id, count - 1));
            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(), CreationWindowTest.listOffsets(raw, "grown", count), "past its count");
            try (KafkaProducer<byte[], byte[]> once = broker.producer(Map.of("acks", "1", "retries", 0, "enable.idempotence", false)))
            {
                final ExecutionException notMade = assertThrows(ExecutionException.class,
                    () -> once.send(record("grown", from + chunk)).get(30, TimeUnit.SECONDS));
                assertInstanceOf(NotLeaderOrFollowerException.class, notMade.getCause(), "Produce to a partition not made, unretried");
            }

            step(broker, pending);
            assertEquals(from + chunk, made(broker, "grown"), "one slice made");
            assertEquals(Errors.NONE.code(), CreationWindowTest.listOffsets(raw, "grown", from + chunk - 1));
            assertEquals(Errors.NOT_LEADER_OR_FOLLOWER.code(), CreationWindowTest.listOffsets(raw, "grown", from + chunk));
            admin.createTopics(List.of(new NewTopic("other", 3, (short)1))).all().get(30, TimeUnit.SECONDS);
            alterRetention(admin, "grown", "12345");
            assertEquals("12345", storedOverrides(dir.resolve("grown-0")).get("retention.ms"), "a partition made: changed now");
            admin.createPartitions(Map.of("grown", NewPartitions.increaseTo(count + 5))).all().get(30, TimeUnit.SECONDS);
            final ExecutionException validated = assertThrows(ExecutionException.class, () -> admin.createPartitions(
                Map.of("grown", NewPartitions.increaseTo(count + 5)), new CreatePartitionsOptions().validateOnly(true)).all()
                .get(30, TimeUnit.SECONDS));
            assertInstanceOf(InvalidPartitionsException.class, validated.getCause(), "checked against the grown count");
            final ExecutionException exists = assertThrows(ExecutionException.class,
                () -> broker.broker.admin().createTopic("grown", 1, Map.of()).get(30, TimeUnit.SECONDS));
            assertInstanceOf(IllegalArgumentException.class, exists.getCause(), "an embedder's creation of a topic being grown");
            assertEquals(from + chunk, made(broker, "grown"), "nothing more made for the other commands");
            assertEquals(count + 5, admin.describeTopics(List.of("grown")).allTopicNames().get(30, TimeUnit.SECONDS).get("grown")
                .partitions().size());

            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of("acks", "all")))
            {
                final Future<RecordMetadata> last = producer.send(record("grown", count + 4));
                CreationsHold.hold(pending, false);
                assertEquals(0, last.get(60, TimeUnit.SECONDS).offset(), "acknowledged once made, through the producer's retries");
            }
            Await.await(() -> pending.size() == 0 && made(broker, "grown") == count + 5 && made(broker, "other") == 3,
                Duration.ofSeconds(60), "every slice made");
            Await.await(() -> Files.size(dir.resolve(CreationJournal.FILE_NAME)) == 0, Duration.ofSeconds(30), "the journal emptied");
            final Map<String, String> last = storedOverrides(dir.resolve("grown-" + (count + 4)));
            assertEquals("12345", last.get("retention.ms"), "a partition made after the change: made with it " + last);
            assertEquals("compact", last.get("cleanup.policy"), "and with the topic's other overrides " + last);
            final TopicDescription d = admin.describeTopics(List.of("grown")).allTopicNames().get(30, TimeUnit.SECONDS).get("grown");
            assertEquals(id, d.topicId());
            assertEquals(1, latestOffset(admin, "grown", 0), "the record written before the growth");
        }
    }

    /**
     * A DeleteTopics while the topic is grown in slices: answered, no more of its files made, its name free; created
     * again it is a new topic, and after a restart neither the deleted topic nor its partitions come back.
     */
    @Test
    void aTopicDeletedWhileGrownInSlicesStaysDeleted() throws Exception
    {
        final int chunk = CreationsHold.chunkPartitions();
        final int from = 10;
        final int count = from + 2 * chunk + 50;
        final Uuid again;
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            final PendingCreations pending = broker.broker.admin().creations();
            admin.createTopics(List.of(new NewTopic("gone", from, (short)1))).all().get(30, TimeUnit.SECONDS);
            Await.await(() -> pending.size() == 0, Duration.ofSeconds(30), "the creation made");
            CreationsHold.hold(pending, true);
            admin.createPartitions(Map.of("gone", NewPartitions.increaseTo(count))).all().get(30, TimeUnit.SECONDS);
            step(broker, pending);
            assertEquals(from + chunk, made(broker, "gone"));
            admin.deleteTopics(List.of("gone")).all().get(30, TimeUnit.SECONDS);
            assertTrue(broker.broker.topics().topic("gone") == null && !pending.isPending("gone"), "deleted and dropped");
            step(broker, pending);
            assertFalse(Files.exists(dir.resolve("gone-" + (from + chunk))), "no file of it made after its deletion");
            final CreateTopicsResult recreated = admin.createTopics(List.of(new NewTopic("gone", 2, (short)1)));
            recreated.all().get(30, TimeUnit.SECONDS);
            again = recreated.topicId("gone").get();
            CreationsHold.hold(pending, false);
            Await.await(() -> pending.size() == 0 && made(broker, "gone") == 2, Duration.ofSeconds(60), "the new topic made");
            Await.await(() -> Files.size(dir.resolve(CreationJournal.FILE_NAME)) == 0, Duration.ofSeconds(30), "the journal emptied");
        }
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            final TopicDescription d = admin.describeTopics(List.of("gone")).allTopicNames().get(30, TimeUnit.SECONDS).get("gone");
            assertEquals(again, d.topicId(), "the new topic, not the deleted one");
            assertEquals(2, d.partitions().size());
        }
    }

    /**
     * A growth of one slice or less is made before its answer, as before (one chunk's work): 10 -> 110 is whole when
     * answered; one more partition (10 -> 111, review of grow L2: the bound is {@code >}) is journaled and answered with
     * none of the new partitions made, then made in slices.
     */
    @Test
    void aGrowthOfOneSliceIsMadeBeforeItsAnswerAndOfOneMoreAfterIt() throws Exception
    {
        final int chunk = CreationsHold.chunkPartitions();
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            final PendingCreations pending = broker.broker.admin().creations();
            admin.createTopics(List.of(new NewTopic("small", 10, (short)1), new NewTopic("sliced", 10, (short)1))).all()
                .get(30, TimeUnit.SECONDS);
            Await.await(() -> pending.size() == 0, Duration.ofSeconds(30), "the creations made");
            CreationsHold.hold(pending, true);
            admin.createPartitions(Map.of("small", NewPartitions.increaseTo(10 + chunk))).all().get(30, TimeUnit.SECONDS);
            assertEquals(10 + chunk, made(broker, "small"), "made before the answer");
            assertEquals(0, pending.size());
            admin.createPartitions(Map.of("sliced", NewPartitions.increaseTo(10 + chunk + 1))).all().get(30, TimeUnit.SECONDS);
            assertEquals(10, made(broker, "sliced"), "one more than a slice: answered with none of the new partitions made");
            assertTrue(pending.isGrowing("sliced"));
            assertTrue(Files.size(dir.resolve(CreationJournal.FILE_NAME)) > 0, "journaled");
            CreationsHold.hold(pending, false);
            Await.await(() -> pending.size() == 0 && made(broker, "sliced") == 10 + chunk + 1, Duration.ofSeconds(60),
                "made in slices");
        }
    }

    /**
     * A child JVM whose creations are held ({@link HeldCreationsServer}): a topic of 10 partitions (one record in
     * partition 0) grown by {@link #SIGKILL_GROWTH} (350, to 360; 1 600, to 1 610, in {@code -Pslow} and {@code -Plong})
     * and its retention changed, both answered with none of the new partitions made; two slices made (stepped);
     * SIGKILLed. Started again, the topic has the grown count, every partition with the change and the topic's other
     * overrides, the record is still in partition 0, the last partition takes a record and the journal is empty: the
     * start completed the growth from its GROW. Before this branch the CreatePartitions made all the new partitions
     * before its answer (the hold does not hold a command's files).
     */
    @Test
    @Tag("shortened")
    void aGrowthCutShortBySigkillIsCompletedByTheStart() throws Exception
    {
        final Path data = Files.createDirectories(dir.resolve("data")).toRealPath();
        final int from = 10;
        final int chunk = CreationsHold.chunkPartitions();
        assertTrue(SIGKILL_GROWTH >= 3 * chunk, "-Dferrite.wholeTopicGrowth.partitions=" + SIGKILL_GROWTH
            + ": the SIGKILL test needs " + 3 * chunk + " or more (killed before the third slice of " + chunk + ")");
        final int grown = from + SIGKILL_GROWTH;
        final String[] args = {"--override", "log.dir=" + data, "--override", "listeners=PLAINTEXT://127.0.0.1:0"};
        ServerCommand.Running server = ServerCommand.startMain(dir, Map.of(), HeldCreationsServer.class.getName(), args);
        try (Admin admin = LargeTopicSlicesTest.admin(server.port()))
        {
            admin.createTopics(List.of(new NewTopic("big", from, (short)1).configs(KEPT))).all().get(60, TimeUnit.SECONDS);
            LargeTopicSlicesTest.command(server, "chunk"); // held: the topic's files made by a stepped chunk
            try (KafkaProducer<byte[], byte[]> producer = producer(server.port()))
            {
                assertEquals(0, producer.send(record("big", 0)).get(60, TimeUnit.SECONDS).offset()); // once published
            }
            admin.createPartitions(Map.of("big", NewPartitions.increaseTo(grown))).all().get(60, TimeUnit.SECONDS);
            alterRetention(admin, "big", "4321");
            assertTrue(Files.isDirectory(data.resolve("big-" + (from - 1))), "the topic made");
            assertFalse(Files.isDirectory(data.resolve("big-" + from)), "none of the new partitions made while held");
            LargeTopicSlicesTest.command(server, "chunk");
            LargeTopicSlicesTest.command(server, "chunk");
            Await.await(() -> Files.isDirectory(data.resolve("big-" + (from + 2 * chunk - 1))), Duration.ofSeconds(120),
                "two slices made");
            alterRetention(admin, "big", "5432"); // after the two slices on the agent: none after them while held
            LargeTopicSlicesTest.kill(server);
        }
        assertFalse(Files.isDirectory(data.resolve("big-" + (from + 2 * chunk))), "killed before the third slice");
        server = ServerCommand.start(dir, Map.of(), args);
        try (Admin admin = LargeTopicSlicesTest.admin(server.port()))
        {
            final TopicDescription d = admin.describeTopics(List.of("big")).allTopicNames().get(60, TimeUnit.SECONDS).get("big");
            assertEquals(grown, d.partitions().size());
            for (final int p : new int[] {0, from, from + 2 * chunk - 1, from + 2 * chunk, grown - 1})
            {
                final Map<String, String> stored = storedOverrides(data.resolve("big-" + p));
                assertEquals("5432", stored.get("retention.ms"), "partition " + p + ": " + stored);
                assertEquals("compact", stored.get("cleanup.policy"), "partition " + p + ": " + stored);
            }
            assertEquals(1, latestOffset(admin, "big", 0), "the record written before the growth");
            LargeTopicSlicesTest.lastPartitionTakesARecord(server.port(), grown - 1, data);
        }
        finally
        {
            server.stop();
        }
    }

    private static long latestOffset(final Admin admin, final String topic, final int partition) throws Exception
    {
        final org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition(topic, partition);
        return admin.listOffsets(Map.of(tp, org.apache.kafka.clients.admin.OffsetSpec.latest())).partitionResult(tp)
            .get(60, TimeUnit.SECONDS).offset();
    }

    private static KafkaProducer<byte[], byte[]> producer(final int port)
    {
        return new KafkaProducer<>(Map.of("bootstrap.servers", "127.0.0.1:" + port, "acks", "all",
            "key.serializer", org.apache.kafka.common.serialization.ByteArraySerializer.class,
            "value.serializer", org.apache.kafka.common.serialization.ByteArraySerializer.class));
    }
}
