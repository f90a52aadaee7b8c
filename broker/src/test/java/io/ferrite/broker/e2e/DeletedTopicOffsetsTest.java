package io.ferrite.broker.e2e;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.testing.LoopbackPorts;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A deleted topic's committed offsets are deleted, as Kafka 4.4 deletes them ({@code OffsetMetadataManager.onTopicsDeleted}:
 * tombstones in {@code __consumer_offsets}): two groups commit on a topic (one on another topic too), the topic is
 * deleted, and the Admin's listConsumerGroupOffsets no longer shows it, its lag rows are gone from {@code ferrite-stat
 * --once --group} and from the Prometheus endpoint's text; the group left with no offset goes at the next retention
 * check (Kafka's cleanupGroupMetadata); all of it still so after a restart. A topic created again with the name takes
 * new commits, which the deletion does not touch.
 */
class DeletedTopicOffsetsTest
{
    private static final String DOOMED = "doomed";
    private static final String KEPT = "kept";
    /** Commits on both topics. */
    private static final String BOTH = "both-topics";
    /** Commits on the deleted topic only: left with nothing, it goes. */
    private static final String ONLY = "only-doomed";
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @Test
    void aDeletedTopicsOffsetsAndLagsGoAndStayGoneAfterARestart() throws Exception
    {
        final int metricsPort = LoopbackPorts.take();
        final Path data = Files.createDirectories(dir.resolve("data"));
        try (RunningBroker broker = new RunningBroker(data, Map.of(BrokerConfig.METRICS_LISTENER, "http://127.0.0.1:" + metricsPort,
            BrokerConfig.OFFSETS_RETENTION_CHECK_INTERVAL_MS, "500", BrokerConfig.AUTO_CREATE_TOPICS, "false")))
        {
            try (Admin admin = broker.admin(); KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
            {
                admin.createTopics(List.of(new NewTopic(DOOMED, 2, (short)1), new NewTopic(KEPT, 1, (short)1)))
                    .all().get(30, TimeUnit.SECONDS);
                for (int i = 0; i < 10; i++)
                {
                    producer.send(new ProducerRecord<>(DOOMED, i % 2, null, new byte[] {(byte)i}));
                    producer.send(new ProducerRecord<>(KEPT, 0, null, new byte[] {(byte)i}));
                }
                producer.flush();
                admin.alterConsumerGroupOffsets(BOTH, Map.of(tp(DOOMED, 0), new OffsetAndMetadata(2), tp(DOOMED, 1),
                    new OffsetAndMetadata(3), tp(KEPT, 0), new OffsetAndMetadata(4))).all().get(30, TimeUnit.SECONDS);
                admin.alterConsumerGroupOffsets(ONLY, Map.of(tp(DOOMED, 0), new OffsetAndMetadata(1)))
                    .all().get(30, TimeUnit.SECONDS);
                // before: every offset has its lag (high watermark 5 on each partition of doomed, 10 on kept)
                awaitLags(broker, BOTH, Map.of(lag(DOOMED, 0, BOTH), 3L, lag(DOOMED, 1, BOTH), 2L, lag(KEPT, 0, BOTH), 6L));
                awaitLags(broker, ONLY, Map.of(lag(DOOMED, 0, ONLY), 4L));
                await(() -> prometheusLagTopics(metricsPort).contains(DOOMED), DEADLINE, "the endpoint shows doomed's lags");

                admin.deleteTopics(List.of(DOOMED)).all().get(30, TimeUnit.SECONDS);

                // Kafka writes the tombstones after the deletion is answered (its metadata publisher): awaited, bounded
                await(() -> offsets(admin, BOTH).equals(Map.of(tp(KEPT, 0), 4L)), DEADLINE,
                    () -> "only kept's offset is left to " + BOTH + ": " + offsets(admin, BOTH));
                await(() -> offsets(admin, ONLY).isEmpty(), DEADLINE, () -> ONLY + " has no offset: " + offsets(admin, ONLY));
                awaitLags(broker, BOTH, Map.of(lag(KEPT, 0, BOTH), 6L));
                awaitLags(broker, ONLY, Map.of());
                await(() -> !prometheusLagTopics(metricsPort).contains(DOOMED), DEADLINE,
                    () -> "no lag of doomed on the endpoint: " + prometheusLagTopics(metricsPort));
                // Empty with no offset: gone at the next retention check, as Kafka's cleanupGroupMetadata deletes it
                await(() -> groups(admin).equals(Set.of(BOTH)), DEADLINE, () -> "only " + BOTH + " is left: " + groups(admin));
            }

            broker.restart();
            try (Admin admin = broker.admin(); KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
            {
                assertEquals(Map.of(tp(KEPT, 0), 4L), offsets(admin, BOTH), "the tombstones replayed");
                assertEquals(Set.of(BOTH), groups(admin), "the group's tombstone replayed");
                awaitLags(broker, BOTH, Map.of(lag(KEPT, 0, BOTH), 6L));

                // the name again: a new topic, whose commits stay
                admin.createTopics(List.of(new NewTopic(DOOMED, 1, (short)1))).all().get(30, TimeUnit.SECONDS);
                producer.send(new ProducerRecord<>(DOOMED, 0, null, new byte[] {1})).get(30, TimeUnit.SECONDS);
                admin.alterConsumerGroupOffsets(BOTH, Map.of(tp(DOOMED, 0), new OffsetAndMetadata(1))).all().get(30, TimeUnit.SECONDS);
                awaitLags(broker, BOTH, Map.of(lag(DOOMED, 0, BOTH), 0L, lag(KEPT, 0, BOTH), 6L));
            }
            broker.restart();
            try (Admin admin = broker.admin())
            {
                assertEquals(Map.of(tp(DOOMED, 0), 1L, tp(KEPT, 0), 4L), offsets(admin, BOTH));
            }
        }
    }

    private static TopicPartition tp(final String topic, final int partition)
    {
        return new TopicPartition(topic, partition);
    }

    private static String lag(final String topic, final int partition, final String group)
    {
        return "consumer lag topic=" + topic + " partition=" + partition + " group=" + group;
    }

    /**
     * A transaction's offset of a topic deleted while the transaction is open: the deletion tombstones it and drops it
     * from the pending ones (as Kafka's {@code onTopicsDeleted} does its pending transactional offsets), so the
     * transaction's commit brings only its other offset; after a restart too, where the replay meets the transactional
     * record, the tombstone and the marker in that order. The EndTxn is a call on the coordinators' agent made after the
     * DeleteTopics answer, so the pass that runs it drains the deletion first.
     */
    @Test
    void aTransactionsOffsetOfADeletedTopicIsNotCommittedWithIt() throws Exception
    {
        final String group = "transactional";
        try (RunningBroker broker = new RunningBroker(Files.createDirectories(dir.resolve("data")),
            Map.of(BrokerConfig.AUTO_CREATE_TOPICS, "false")))
        {
            try (Admin admin = broker.admin(); KafkaProducer<byte[], byte[]> producer =
                broker.producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "deleting-mid-transaction")))
            {
                admin.createTopics(List.of(new NewTopic(DOOMED, 1, (short)1), new NewTopic(KEPT, 1, (short)1)))
                    .all().get(30, TimeUnit.SECONDS);
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(KEPT, 0, null, new byte[] {1})).get(30, TimeUnit.SECONDS);
                producer.sendOffsetsToTransaction(Map.of(tp(DOOMED, 0), new OffsetAndMetadata(3), tp(KEPT, 0),
                    new OffsetAndMetadata(1)), new ConsumerGroupMetadata(group));
                admin.deleteTopics(List.of(DOOMED)).all().get(30, TimeUnit.SECONDS);
                producer.commitTransaction();
                await(() -> offsets(admin, group).equals(Map.of(tp(KEPT, 0), 1L)), DEADLINE,
                    () -> "only kept's offset committed: " + offsets(admin, group));
            }
            broker.restart();
            try (Admin admin = broker.admin())
            {
                assertEquals(Map.of(tp(KEPT, 0), 1L), offsets(admin, group), "replayed: the tombstone between the record and the marker");
            }
        }
    }

    /**
     * The retention check's other face (Kafka's {@code cleanupGroupMetadata}: a group with no offset at all expires
     * whatever its age): a classic group whose consumer joined and left without committing goes at the next check, while
     * a group Empty as long but with an offset within its retention stays.
     */
    @Test
    void aGroupThatJoinedAndNeverCommittedGoesAtTheNextRetentionCheck() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(Files.createDirectories(dir.resolve("data")),
            Map.of(BrokerConfig.OFFSETS_RETENTION_CHECK_INTERVAL_MS, "500", BrokerConfig.AUTO_CREATE_TOPICS, "false"));
             Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic(KEPT, 1, (short)1))).all().get(30, TimeUnit.SECONDS);
            admin.alterConsumerGroupOffsets("with-offset", Map.of(tp(KEPT, 0), new OffsetAndMetadata(0))).all().get(30, TimeUnit.SECONDS);
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG, "never-committed")))
            {
                consumer.subscribe(List.of(KEPT));
                await(() ->
                {
                    consumer.poll(Duration.ofMillis(100));
                    return !consumer.assignment().isEmpty();
                }, DEADLINE, "the consumer joined and was assigned");
            } // its LeaveGroup: the group is Empty, with no offset
            await(() -> groups(admin).equals(Set.of("with-offset")), DEADLINE,
                () -> "the group without offsets is gone, the one with an offset stays: " + groups(admin));
        }
    }

    private static Map<TopicPartition, Long> offsets(final Admin admin, final String group)
    {
        final Map<TopicPartition, Long> offsets = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        unchecked(() -> admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS))
            .forEach((tp, o) -> offsets.put(tp, o.offset()));
        return offsets;
    }

    private static Set<String> groups(final Admin admin)
    {
        return unchecked(() -> admin.listConsumerGroups().all().get(30, TimeUnit.SECONDS)).stream()
            .map(ConsumerGroupListing::groupId).collect(Collectors.toSet());
    }

    private static <T> T unchecked(final java.util.concurrent.Callable<T> call)
    {
        try
        {
            return call.call();
        }
        catch (final Exception e)
        {
            throw new IllegalStateException(e);
        }
    }

    /** Awaits exactly {@code expected} as {@code ferrite-stat --once --group group}'s rows. */
    private static void awaitLags(final RunningBroker broker, final String group, final Map<String, Long> expected)
    {
        final Map<?, ?>[] last = {null};
        await(() ->
        {
            last[0] = FerriteStatTest.rows(FerriteStatTest.statLines(broker.dir, "--once", "--group", group));
            return expected.equals(last[0]);
        }, DEADLINE, () -> "ferrite-stat --group " + group + " shows " + expected + "; it showed " + last[0]);
    }

    /** The topics of the kafka_consumergroup_lag series in the endpoint's text. */
    private static Set<String> prometheusLagTopics(final int port)
    {
        final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        final String text = unchecked(() -> http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
            .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body());
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^kafka_consumergroup_lag\\{([^}]*)}").matcher(text);
        final java.util.regex.Pattern topic = java.util.regex.Pattern.compile("topic=\"([^\"]*)\"");
        final Set<String> topics = new java.util.TreeSet<>();
        while (m.find())
        {
            final java.util.regex.Matcher t = topic.matcher(m.group(1));
            if (t.find())
            {
                topics.add(t.group(1));
            }
        }
        return topics;
    }
}
