package io.ferrite.broker.e2e;

import io.ferrite.broker.admin.CreationJournal;
import io.ferrite.broker.admin.CreationsHold;
import io.ferrite.broker.admin.PendingCreations;
import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Journaled creations whose files the admin agent makes in chunks between its commands ({@link PendingCreations}):
 * a CreateTopics answered while earlier ones' files are not made, and every rule with several topics being made —
 * their names taken, a deletion that drops the pending files for good, a command that needs one finished, a stop or a
 * SIGKILL with topics pending. The in-process tests hold the chunks with {@link CreationsHold} (a test hook:
 * what is not made yet is then certain, not a matter of timing); a command that needs a topic still makes it.
 */
class CreationChunksTest
{
    private static final Map<String, String> KEPT = Map.of("cleanup.policy", "compact", "retention.ms", "-1");

    @TempDir
    Path dir;

    /**
     * The chunks held: two CreateTopics, each answered NONE with its ids while none of the first one's files are made;
     * a third of a name being made is TOPIC_ALREADY_EXISTS. Released, both are made, in order, and serve records.
     */
    @Test
    void aSecondCreateTopicsIsAnsweredBeforeTheFirstOnesFiles() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            final PendingCreations pending = broker.broker.admin().creations();
            CreationsHold.hold(pending, true);
            final CreateTopicsResult first = admin.createTopics(topics("first-", 5, 10));
            first.all().get(30, TimeUnit.SECONDS);
            final CreateTopicsResult second = admin.createTopics(topics("second-", 5, 10));
            second.all().get(30, TimeUnit.SECONDS);
            for (int t = 0; t < 5; t++)
            {
                assertFalse(Files.exists(dir.resolve("first-" + t + "-0")), "held: no file of first-" + t + " made");
                assertTrue(broker.broker.topics().creatingId("first-" + t) != null, "first-" + t + " is being made");
                assertTrue(pending.isPending("second-" + t), "second-" + t + " is pending");
            }
            final ExecutionException again = assertThrows(ExecutionException.class,
                () -> admin.createTopics(List.of(new NewTopic("first-0", 1, (short)1))).all().get(30, TimeUnit.SECONDS));
            assertInstanceOf(TopicExistsException.class, again.getCause());
            assertTrue(Files.size(dir.resolve(CreationJournal.FILE_NAME)) > 0, "the journal holds the pending creations");

            CreationsHold.hold(pending, false);
            awaitPublished(broker, "first-", 5);
            awaitPublished(broker, "second-", 5);
            final Map<String, TopicDescription> described = admin.describeTopics(List.of("first-4", "second-4"))
                .allTopicNames().get(30, TimeUnit.SECONDS);
            assertEquals(first.topicId("first-4").get(), described.get("first-4").topicId());
            assertEquals(second.topicId("second-4").get(), described.get("second-4").topicId());
            assertEquals(10, described.get("second-4").partitions().size());
            Await.await(() -> Files.size(dir.resolve(CreationJournal.FILE_NAME)) == 0, Duration.ofSeconds(30),
                "the journal emptied once nothing is pending");
            produceAndConsume(broker, "first-0", 10);
            produceAndConsume(broker, "second-4", 10);
        }
    }

    /**
     * The chunks held: under the default bound (10 s of estimated work) a second CreateTopics is answered with the first
     * one's topics still pending; with the bound set to no work at all, a third CreateTopics first makes every pending
     * topic (the bound is not held by the test hook), so once it is answered the first two are published and only it
     * is pending.
     */
    @Test
    void aCreateTopicsOverTheBacklogBoundIsAnsweredOnlyOnceTheOlderTopicsAreMade() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            final PendingCreations pending = broker.broker.admin().creations();
            CreationsHold.hold(pending, true);
            admin.createTopics(topics("under-", 5, 10)).all().get(30, TimeUnit.SECONDS);
            admin.createTopics(topics("still-", 5, 10)).all().get(30, TimeUnit.SECONDS);
            assertTrue(pending.isPending("under-0") && pending.isPending("still-4"), "100 partitions are under the default bound");
            CreationsHold.backlog(pending, Duration.ZERO);
            admin.createTopics(topics("over-", 2, 10)).all().get(30, TimeUnit.SECONDS);
            for (int t = 0; t < 5; t++)
            {
                assertTrue(broker.broker.topics().topic("under-" + t) != null && broker.broker.topics().topic("still-" + t) != null,
                    "made before the request over the bound was answered: topic " + t);
            }
            assertTrue(pending.isPending("over-0") && pending.isPending("over-1"), "held: the request's own topics pending");
            assertEquals(2, pending.size());
            CreationsHold.hold(pending, false);
            Await.await(() -> pending.size() == 0, Duration.ofSeconds(30), "over- made");
        }
    }

    /**
     * The chunks held: a DeleteTopics by topic id of a topic being made (found through the registry's id map of the
     * names being made) drops it and frees its name, leaves the other one pending; a second delete by the same id is
     * UNKNOWN_TOPIC_ID; the name created again gets a new id and is made with it.
     */
    @Test
    void aTopicBeingMadeDeletedByItsIdFreesItsName() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            final PendingCreations pending = broker.broker.admin().creations();
            CreationsHold.hold(pending, true);
            final CreateTopicsResult created = admin.createTopics(List.of(new NewTopic("by-id", 2, (short)1),
                new NewTopic("stays", 1, (short)1)));
            created.all().get(30, TimeUnit.SECONDS);
            final Uuid first = created.topicId("by-id").get();
            admin.deleteTopics(org.apache.kafka.common.TopicCollection.ofTopicIds(List.of(first))).all().get(30, TimeUnit.SECONDS);
            assertFalse(pending.isPending("by-id"), "dropped from the pending creations");
            assertTrue(pending.isPending("stays"));
            assertEquals(null, broker.broker.topics().creatingName(first.getMostSignificantBits(), first.getLeastSignificantBits()));
            final ExecutionException again = assertThrows(ExecutionException.class, () -> admin.deleteTopics(
                org.apache.kafka.common.TopicCollection.ofTopicIds(List.of(first))).all().get(30, TimeUnit.SECONDS));
            assertInstanceOf(org.apache.kafka.common.errors.UnknownTopicIdException.class, again.getCause());
            final CreateTopicsResult recreated = admin.createTopics(List.of(new NewTopic("by-id", 3, (short)1)));
            recreated.all().get(30, TimeUnit.SECONDS);
            final Uuid second = recreated.topicId("by-id").get();
            assertFalse(first.equals(second), "a new id for the name created again");
            CreationsHold.hold(pending, false);
            Await.await(() -> broker.broker.topics().topic("by-id") != null && broker.broker.topics().topic("stays") != null,
                Duration.ofSeconds(30), "both made");
            final TopicDescription d = admin.describeTopics(List.of("by-id")).allTopicNames().get(30, TimeUnit.SECONDS).get("by-id");
            assertEquals(second, d.topicId());
            assertEquals(3, d.partitions().size());
        }
    }

    /**
     * The chunks held: a topic being made deleted (its DELETE journaled, its pending files dropped: none is ever made),
     * CreatePartitions of another being made (made first, then grown), AlterConfigs of a third (made first, then
     * changed); then the broker stopped with topics still pending. The start makes every answered topic that was not
     * deleted, with its id and configs; the deleted one stays deleted.
     */
    @Test
    void aTopicBeingMadeDeletedStaysDeletedAndAStopWithTopicsPendingMakesTheRestAtTheStart() throws Exception
    {
        final Map<String, Uuid> answered = new HashMap<>();
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            final PendingCreations pending = broker.broker.admin().creations();
            CreationsHold.hold(pending, true);
            final List<NewTopic> topics = new ArrayList<>();
            for (final String name : List.of("doomed", "grown", "altered", "kept-1", "kept-2"))
            {
                topics.add(new NewTopic(name, 3, (short)1).configs(KEPT));
            }
            final CreateTopicsResult created = admin.createTopics(topics);
            created.all().get(30, TimeUnit.SECONDS);
            for (final NewTopic t : topics)
            {
                answered.put(t.name(), created.topicId(t.name()).get());
            }
            admin.deleteTopics(List.of("doomed")).all().get(30, TimeUnit.SECONDS);
            assertFalse(pending.isPending("doomed"), "dropped from the pending creations");
            assertFalse(Files.exists(dir.resolve("doomed-0")), "no file of the deleted topic made");
            admin.createPartitions(Map.of("grown", NewPartitions.increaseTo(5))).all().get(30, TimeUnit.SECONDS);
            final ConfigResource altered = new ConfigResource(ConfigResource.Type.TOPIC, "altered");
            admin.incrementalAlterConfigs(Map.of(altered, List.of(new org.apache.kafka.clients.admin.AlterConfigOp(
                new org.apache.kafka.clients.admin.ConfigEntry("retention.ms", "123456"),
                org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
            assertTrue(pending.isPending("kept-2"), "still held: kept-2 pending at the stop");
            assertFalse(Files.exists(dir.resolve("kept-2-0")), "kept-2 not made before the stop");
            final List<String> entries = new ArrayList<>();
            final Path copy = Files.createTempDirectory("journal-copy"); // the journal as it is on disk (the agent has it open)
            Files.copy(dir.resolve(CreationJournal.FILE_NAME), copy.resolve(CreationJournal.FILE_NAME));
            try (CreationJournal read = CreationJournal.open(copy))
            {
                for (final CreationJournal.Entry e : read.entries())
                {
                    entries.add(e.kind() + " " + e.name());
                }
            }
            assertTrue(entries.contains("DELETE doomed"), "the deletion journaled: " + entries);
        }
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            final Set<String> names = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            assertFalse(names.contains("doomed"), "a deleted topic made again: " + names);
            answered.remove("doomed");
            final Map<String, TopicDescription> described = admin.describeTopics(answered.keySet()).allTopicNames().get(30, TimeUnit.SECONDS);
            for (final Map.Entry<String, Uuid> e : answered.entrySet())
            {
                assertEquals(e.getValue(), described.get(e.getKey()).topicId(), e.getKey());
            }
            assertEquals(5, described.get("grown").partitions().size());
            assertEquals(3, described.get("kept-2").partitions().size());
            final ConfigResource altered = new ConfigResource(ConfigResource.Type.TOPIC, "altered");
            final ConfigResource kept = new ConfigResource(ConfigResource.Type.TOPIC, "kept-2");
            final Map<ConfigResource, Config> configs = admin.describeConfigs(List.of(altered, kept)).all().get(30, TimeUnit.SECONDS);
            assertEquals("123456", configs.get(altered).get("retention.ms").value());
            assertEquals("compact", configs.get(kept).get("cleanup.policy").value());
            assertEquals("-1", configs.get(kept).get("retention.ms").value());
            assertEquals(0, Files.size(dir.resolve(CreationJournal.FILE_NAME)), "the start made the rest and emptied the journal");
            produceAndConsume(broker, "kept-2", 3);
        }
    }

    /**
     * The chunks held: a producer (acks=all) sends to a topic answered as created and not made. Its metadata request
     * for the topic is answered while the topic is still held (so UNKNOWN_TOPIC_OR_PARTITION, as a Kafka broker answers
     * for a topic it has not made yet), and the send is not done; released, the client's retries reach the made topic:
     * the send's callback reports the record acknowledged, and it is read back.
     */
    @Test
    void produceToATopicBeingMadeSucceedsOnceItIsMade() throws Exception
    {
        final java.util.concurrent.atomic.AtomicInteger updates = new java.util.concurrent.atomic.AtomicInteger();
        final Map<String, Object> config = Map.of("bootstrap.servers", "", "acks", "all", "max.block.ms", 60_000);
        final class CountingUpdates extends org.apache.kafka.common.serialization.ByteArraySerializer
            implements org.apache.kafka.common.ClusterResourceListener
        {
            @Override
            public void onUpdate(final org.apache.kafka.common.ClusterResource cluster)
            {
                updates.incrementAndGet(); // each metadata response the producer applied
            }
        }
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin();
            KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(withBootstrap(config, broker.bootstrap()),
                new org.apache.kafka.common.serialization.ByteArraySerializer(), new CountingUpdates()))
        {
            admin.createTopics(List.of(new NewTopic("ready", 1, (short)1))).all().get(30, TimeUnit.SECONDS);
            Await.await(() -> broker.broker.topics().topic("ready") != null, Duration.ofSeconds(30), "ready made");
            producer.partitionsFor("ready"); // the producer's metadata current: no request of it is under way
            final int before = updates.get();
            final PendingCreations pending = broker.broker.admin().creations();
            CreationsHold.hold(pending, true);
            admin.createTopics(List.of(new NewTopic("early", 2, (short)1))).all().get(30, TimeUnit.SECONDS);
            assertTrue(pending.isPending("early"));
            final java.util.concurrent.CompletableFuture<RecordMetadata> acked = new java.util.concurrent.CompletableFuture<>();
            final Thread sender = new Thread(() ->
            {
                try // send blocks for the topic's metadata
                {
                    producer.send(new ProducerRecord<>("early", 1, null, "v".getBytes(StandardCharsets.UTF_8)),
                        (m, e) -> { if (e != null) acked.completeExceptionally(e); else acked.complete(m); });
                }
                catch (final RuntimeException ex)
                {
                    acked.completeExceptionally(ex);
                }
            }, "early-sender");
            sender.start();
            // the next metadata response comes from the request the new topic made the producer send
            Await.await(() -> updates.get() > before, Duration.ofSeconds(60), "the producer's metadata request for early answered");
            assertTrue(pending.isPending("early"), "held: early not made while its metadata was asked for");
            assertFalse(acked.isDone(), "the send done while its topic is not made: " + acked);
            CreationsHold.hold(pending, false);
            assertEquals(0, acked.get(60, TimeUnit.SECONDS).offset());
            sender.join(60_000);
            produceAndConsume(broker, "early", 2);
        }
    }

    private static Map<String, Object> withBootstrap(final Map<String, Object> config, final String bootstrap)
    {
        final Map<String, Object> c = new HashMap<>(config);
        c.put("bootstrap.servers", bootstrap);
        return c;
    }

    /** One chunk made on the held child's agent, awaited (its line) so that it runs before the test's next request. */
    private static void stepChunk(final ServerCommand.Running server) throws Exception
    {
        LargeTopicSlicesTest.command(server, "chunk");
        server.awaitLine("chunked ", Duration.ofSeconds(60));
    }

    /**
     * A topic whose files failed (a file where its partition 1 directory goes), the obstacle then gone: the embedders'
     * {@code AdminAgent.createTopic} of its name fails rather than create it under a second id; AlterConfigs of it is
     * accepted, CreatePartitions answers KAFKA_STORAGE_ERROR; the next start makes it with its answered id and the new config.
     */
    @Test
    void aTopicWhoseFilesFailedKeepsItsIdAndAnswersStorageErrorsAlike() throws Exception
    {
        Files.writeString(dir.resolve("broken-1"), "a file where the partition directory would go");
        final Uuid answered;
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            answered = createAwaiting(broker, admin, "after", new NewTopic("broken", 2, (short)1), new NewTopic("after", 1, (short)1))
                .get("broken"); // after made: broken tried first
            assertTrue(broker.broker.topics().topic("broken") != null && broker.broker.topics().topic("broken").hasOfflinePartitions(),
                "broken's files failed: listed offline");
            Files.delete(dir.resolve("broken-1")); // a create of the name would succeed now
            final ExecutionException again = assertThrows(ExecutionException.class,
                () -> broker.broker.admin().createTopic("broken", 2, Map.of()).get(30, TimeUnit.SECONDS));
            assertInstanceOf(java.io.IOException.class, again.getCause());
            final io.ferrite.broker.topic.Topic kept = broker.broker.topics().topic("broken");
            assertEquals(0, kept.partitions.length, "made under a second id");
            assertEquals(answered, new Uuid(kept.idMostSignificantBits, kept.idLeastSignificantBits), "the name keeps its journaled id");
            final ConfigResource broken = new ConfigResource(ConfigResource.Type.TOPIC, "broken");
            // accepted, as Kafka's controller accepts a config change of a topic in a failed directory
            admin.incrementalAlterConfigs(Map.of(broken, List.of(new org.apache.kafka.clients.admin.AlterConfigOp(
                new org.apache.kafka.clients.admin.ConfigEntry("retention.ms", "123456"),
                org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
            final ExecutionException grown = assertThrows(ExecutionException.class,
                () -> admin.createPartitions(Map.of("broken", NewPartitions.increaseTo(3))).all().get(30, TimeUnit.SECONDS));
            assertInstanceOf(org.apache.kafka.common.errors.KafkaStorageException.class, grown.getCause());
        }
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            final TopicDescription d = admin.describeTopics(List.of("broken")).allTopicNames().get(30, TimeUnit.SECONDS).get("broken");
            assertEquals(answered, d.topicId(), "made at the start with its answered id");
            assertEquals(2, d.partitions().size());
            final ConfigResource broken = new ConfigResource(ConfigResource.Type.TOPIC, "broken");
            assertEquals("123456", admin.describeConfigs(List.of(broken)).all().get(30, TimeUnit.SECONDS).get(broken)
                .get("retention.ms").value(), "made with the config changed while it was offline");
        }
    }

    /**
     * One CreateTopics of three small topics, made before its answer as one batch, the middle one's files failing (a file
     * where its partition 1 directory goes): all three answered with their ids; the first and the last published and
     * served; the middle one published offline with its answered id, between them (journal order), and the journal kept
     * for the next start, which makes it with that id once the obstacle is gone and then empties the journal.
     */
    @Test
    void aTopicWhoseFilesFailInARequestsBatchCostsThatTopicAlone() throws Exception
    {
        Files.writeString(dir.resolve("middle-1"), "a file where the partition directory would go");
        final Uuid answered;
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            answered = createAwaiting(broker, admin, "last", new NewTopic("first", 2, (short)1), new NewTopic("middle", 2, (short)1),
                new NewTopic("last", 3, (short)1)).get("middle");
            final io.ferrite.broker.topic.Topic middle = broker.broker.topics().topic("middle");
            assertTrue(middle != null && middle.hasOfflinePartitions(), "middle's files failed: listed offline");
            assertEquals(answered, new Uuid(middle.idMostSignificantBits, middle.idLeastSignificantBits), "middle's answered id");
            assertEquals(List.of("first", "middle", "last"), broker.broker.topics().topics().stream().map(t -> t.name)
                .filter(n -> Set.of("first", "middle", "last").contains(n)).toList(), "published in journal order");
            assertTrue(Files.size(dir.resolve(CreationJournal.FILE_NAME)) > 0, "the journal kept: middle's files were not made");
            produceAndConsume(broker, "first", 2);
            produceAndConsume(broker, "last", 3);
        }
        Files.delete(dir.resolve("middle-1"));
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            final TopicDescription d = admin.describeTopics(List.of("middle")).allTopicNames().get(30, TimeUnit.SECONDS).get("middle");
            assertEquals(answered, d.topicId(), "made at the start with its answered id");
            assertEquals(2, d.partitions().size());
            produceAndConsume(broker, "middle", 2);
            assertEquals(0, Files.size(dir.resolve(CreationJournal.FILE_NAME)), "the journal emptied once middle is made");
        }
    }

    /**
     * The chunks held: a validateOnly CreatePartitions of a topic being made is checked against its planned count
     * (an increase passes, the same count is INVALID_PARTITIONS) and makes no file; the topic is made later as created.
     */
    @Test
    void aValidateOnlyCreatePartitionsOfATopicBeingMadeMakesNoFile() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            final PendingCreations pending = broker.broker.admin().creations();
            CreationsHold.hold(pending, true);
            admin.createTopics(List.of(new NewTopic("planned", 3, (short)1))).all().get(30, TimeUnit.SECONDS);
            final org.apache.kafka.clients.admin.CreatePartitionsOptions validate =
                new org.apache.kafka.clients.admin.CreatePartitionsOptions().validateOnly(true);
            admin.createPartitions(Map.of("planned", NewPartitions.increaseTo(5)), validate).all().get(30, TimeUnit.SECONDS);
            final ExecutionException same = assertThrows(ExecutionException.class,
                () -> admin.createPartitions(Map.of("planned", NewPartitions.increaseTo(3)), validate).all().get(30, TimeUnit.SECONDS));
            assertInstanceOf(org.apache.kafka.common.errors.InvalidPartitionsException.class, same.getCause());
            assertTrue(pending.isPending("planned"), "a validate-only request made the topic");
            assertFalse(Files.exists(dir.resolve("planned-0")), "a validate-only request made files");
            CreationsHold.hold(pending, false);
            Await.await(() -> broker.broker.topics().topic("planned") != null, Duration.ofSeconds(30), "planned made");
            assertEquals(3, broker.broker.topics().topic("planned").partitions.length, "validate-only grew nothing");
        }
    }

    /**
     * SIGKILL of a broker (child JVM) right after a burst of CreateTopics and the deletion of one of its topics: every
     * topic answered is there after the start, with its id, configs and partitions, and serves records; the deleted
     * one is not made again. The child's creations are held ({@link HeldCreationsServer}) and stepped, chunks awaited, after
     * each of the first two requests, so the kill comes with topics made and topics pending whatever the machine's speed
     * (before, a quiet machine made every file before each answer and the test skipped: nothing was replayed).
     */
    @Test
    void aSigkillWithSeveralTopicsBeingMadeLosesNoneAnsweredAndResurrectsNoneDeleted() throws Exception
    {
        burstThenSigkill(dir, Map.of(), "burst-", List.of("burst-3-24")); // the newest: most likely pending
    }

    /**
     * A broker in a child JVM ({@code environment} added to its own) whose creations are held ({@link HeldCreationsServer}),
     * given 4 CreateTopics of 25 topics x 2 partitions named {@code prefix<request>-<topic>}, chunks stepped and awaited
     * after the first two (the child prints {@code chunked} from the agent once a chunk's files are made, so it runs
     * before the next request; a held agent otherwise makes files only to keep its backlog under its bound): after the
     * first until the oldest topic is made, one after the second; then a DeleteTopics of {@code deleted}, then
     * SIGKILLed; started again (the plain server, without {@code environment}): every answered topic not deleted is there
     * with its id, partitions and configs and serves records, no deleted one is, the journal is empty; of their partition
     * directories some were there at the kill and some missing (the start replayed them). Returns what the killed broker
     * wrote to standard error.
     */
    static String burstThenSigkill(final Path dir, final Map<String, String> environment, final String prefix,
        final List<String> deleted) throws Exception
    {
        final Path data = Files.createDirectories(dir.resolve("data")).toRealPath();
        final Map<String, Uuid> answered = new HashMap<>();
        final int requests = 4;
        final int perRequest = 25;
        final int partitions = 2; // 10 before issue 17's build work: the start made 740 of them again, no more proven
        ServerCommand.Running server = ServerCommand.startMain(dir, environment, HeldCreationsServer.class.getName(), args(data));
        try (Admin admin = admin(server.port()))
        {
            for (int r = 0; r < requests; r++)
            {
                final List<NewTopic> topics = new ArrayList<>();
                for (int t = 0; t < perRequest; t++)
                {
                    topics.add(new NewTopic(prefix + r + "-" + t, partitions, (short)1).configs(KEPT));
                }
                final CreateTopicsResult result = admin.createTopics(topics);
                result.all().get(30, TimeUnit.SECONDS);
                for (final NewTopic t : topics)
                {
                    answered.put(t.name(), result.topicId(t.name()).get());
                }
                if (r == 0)
                {
                    // a chunk ends after 20 ms of work: a loaded machine can pre-empt it before its first topic
                    final Path oldest = data.resolve(prefix + "0-0-0");
                    for (int steps = 0; steps < 10 && !Files.isDirectory(oldest); steps++)
                    {
                        stepChunk(server);
                    }
                    assertTrue(Files.isDirectory(oldest), "the oldest topic not made by 10 chunks (so its deletion is not of a made one)");
                }
                else if (r == 1)
                {
                    stepChunk(server);
                }
            }
            admin.deleteTopics(deleted).all().get(30, TimeUnit.SECONDS);
            deleted.forEach(answered::remove);
            server.process().destroyForcibly();
            assertTrue(server.process().waitFor(30, TimeUnit.SECONDS));
            assertEquals(137, server.process().exitValue(), "killed");
        }
        final String killedLog = server.stderr();
        long made = 0; // the answered, not deleted, topics' partition directories (not the deleted ones', nor -delete ones)
        for (final String name : answered.keySet())
        {
            for (int p = 0; p < partitions; p++)
            {
                made += Files.isDirectory(data.resolve(name + "-" + p)) ? 1 : 0;
            }
        }
        final long dirsAtKill = made;
        System.out.println("partition directories at the kill: " + dirsAtKill + " of " + answered.size() * partitions + "; journal "
            + Files.size(data.resolve(CreationJournal.FILE_NAME)) + " bytes");
        server = ServerCommand.start(dir, args(data));
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
                assertEquals(e.getValue(), described.get(e.getKey()).topicId(), e.getKey() + " (" + dirsAtKill + " at the kill)");
                assertEquals(partitions, described.get(e.getKey()).partitions().size(), e.getKey());
                resources.add(new ConfigResource(ConfigResource.Type.TOPIC, e.getKey()));
            }
            for (final Map.Entry<ConfigResource, Config> c : admin.describeConfigs(resources).all().get(60, TimeUnit.SECONDS).entrySet())
            {
                assertEquals("compact", c.getValue().get("cleanup.policy").value(), c.getKey().name());
            }
            produceAndConsume("127.0.0.1:" + server.port(), prefix + (requests - 1) + "-0", partitions);
            assertEquals(0, Files.size(data.resolve(CreationJournal.FILE_NAME)), "the journal emptied once its records are made");
        }
        finally
        {
            server.stop();
        }
        assertTrue(dirsAtKill < (long)answered.size() * partitions,
            "held creations, yet every file made before the kill: nothing was replayed (" + dirsAtKill + " directories)");
        assertTrue(dirsAtKill > 0, "no files made before the kill: the chunks made nothing, only a replay was shown");
        return killedLog;
    }

    /**
     * A topic whose files failed (a file where its partition 1 directory goes) and whose failed creation left a
     * partition directory behind (laid out by hand: the cleanup of a failed creation is best effort, and a crash or a
     * second failure leaves one): its deletion renames that directory for deletion before it journals the DELETE, so
     * the next start does not load it as a topic with a new id. The topic journaled with it is made and stays.
     */
    @Test
    void aFailedTopicsLeftoverDirectoryDoesNotComeBackAfterItsDeletion() throws Exception
    {
        Files.writeString(dir.resolve("left-1"), "a file where the partition directory would go");
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            admin.createTopics(List.of(new NewTopic("left", 2, (short)1), new NewTopic("fine", 1, (short)1)))
                .all().get(30, TimeUnit.SECONDS);
            Await.await(() -> broker.broker.topics().topic("fine") != null, Duration.ofSeconds(30), "fine made");
            assertTrue(broker.broker.topics().topic("left") != null && broker.broker.topics().topic("left").hasOfflinePartitions(),
                "left's files failed: its name kept, listed offline");
            Files.createDirectory(dir.resolve("left-0")); // what a failed cleanup leaves
            admin.deleteTopics(List.of("left")).all().get(30, TimeUnit.SECONDS);
            assertFalse(Files.exists(dir.resolve("left-0")), "the leftover renamed for deletion");
        }
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            final Set<String> names = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            assertFalse(names.contains("left"), "a deleted topic's leftover loaded as a topic: " + names);
            assertTrue(names.contains("fine"), names.toString());
        }
    }

    /** One CreateTopics of {@code topics}, answered, then topic {@code last} awaited published: the ids answered, by name. */
    private static Map<String, Uuid> createAwaiting(final RunningBroker broker, final Admin admin, final String last,
        final NewTopic... topics) throws Exception
    {
        final CreateTopicsResult created = admin.createTopics(List.of(topics));
        created.all().get(30, TimeUnit.SECONDS);
        final Map<String, Uuid> ids = new HashMap<>();
        for (final NewTopic t : topics)
        {
            ids.put(t.name(), created.topicId(t.name()).get());
        }
        Await.await(() -> broker.broker.topics().topic(last) != null, Duration.ofSeconds(30), last + " made");
        return ids;
    }

    private static List<NewTopic> topics(final String prefix, final int count, final int partitions)
    {
        final List<NewTopic> topics = new ArrayList<>();
        for (int t = 0; t < count; t++)
        {
            topics.add(new NewTopic(prefix + t, partitions, (short)1));
        }
        return topics;
    }

    private static void awaitPublished(final RunningBroker broker, final String prefix, final int count)
    {
        for (int t = 0; t < count; t++)
        {
            final String name = prefix + t;
            Await.await(() -> broker.broker.topics().topic(name) != null, Duration.ofSeconds(30), "topic " + name + " made");
        }
    }

    private static void produceAndConsume(final RunningBroker broker, final String topic, final int partitions) throws Exception
    {
        produceAndConsume(broker.bootstrap(), topic, partitions);
    }

    private static void produceAndConsume(final String bootstrap, final String topic, final int partitions) throws Exception
    {
        final Map<String, Object> p = Map.of("bootstrap.servers", bootstrap, "acks", "all",
            "key.serializer", org.apache.kafka.common.serialization.ByteArraySerializer.class,
            "value.serializer", org.apache.kafka.common.serialization.ByteArraySerializer.class);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p))
        {
            for (int partition = 0; partition < partitions; partition++)
            {
                producer.send(new ProducerRecord<>(topic, partition, null, ("p" + partition).getBytes(StandardCharsets.UTF_8)))
                    .get(30, TimeUnit.SECONDS);
            }
        }
        final Map<String, Object> c = Map.of("bootstrap.servers", bootstrap, "auto.offset.reset", "earliest",
            "key.deserializer", org.apache.kafka.common.serialization.ByteArrayDeserializer.class,
            "value.deserializer", org.apache.kafka.common.serialization.ByteArrayDeserializer.class);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c))
        {
            final List<TopicPartition> assigned = new ArrayList<>();
            for (int partition = 0; partition < partitions; partition++)
            {
                assigned.add(new TopicPartition(topic, partition));
            }
            consumer.assign(assigned);
            final Set<String> values = new java.util.HashSet<>();
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (values.stream().filter(v -> v.startsWith("p")).count() < partitions && System.nanoTime() < deadline)
            {
                for (final ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200)))
                {
                    values.add(new String(r.value(), StandardCharsets.UTF_8));
                }
            }
            assertEquals(partitions, values.stream().filter(v -> v.startsWith("p")).count(), topic + ": records read back " + values);
        }
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
