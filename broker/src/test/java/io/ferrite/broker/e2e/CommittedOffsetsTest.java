package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Committed offsets with kafka-clients' consumer (classic group protocol) and Admin: commitSync,
 * commitAsync and commitSync with explicit offsets and metadata; a new consumer of the group, and one
 * after a broker restart, starts exactly at the committed offsets (nothing committed is read again,
 * nothing is skipped) and reads the metadata back; the offsets live in the internal __consumer_offsets
 * topic and are reloaded from it at start, deletions included.
 */
class CommittedOffsetsTest
{
    private static final int PARTITIONS = 3;
    private static final int PER_PARTITION = 100;
    private static final String TOPIC = "invoices";
    private static final String GROUP = "billing";

    @TempDir
    Path dir;

    private static String text(final byte[] b)
    {
        return new String(b, StandardCharsets.UTF_8);
    }

    private static Map<String, Object> consumerConfig()
    {
        final Map<String, Object> c = new HashMap<>();
        c.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        c.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10);
        c.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 500);
        c.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 10_000);
        return c;
    }

    /** Produces {@code perPartition} records to each partition, value "p-offset", and waits for them. */
    private static void produce(final RunningBroker broker, final int from, final int perPartition) throws Exception
    {
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
        {
            for (int i = from; i < from + perPartition; i++)
            {
                for (int p = 0; p < PARTITIONS; p++)
                {
                    producer.send(new ProducerRecord<>(TOPIC, p, null, (p + "-" + i).getBytes(StandardCharsets.UTF_8)));
                }
            }
            producer.flush();
        }
    }

    /** Polls until the predicate on everything read so far holds (30 s at most), and returns what was read. */
    private static List<ConsumerRecord<byte[], byte[]>> pollUntil(final KafkaConsumer<byte[], byte[]> consumer,
        final Predicate<List<ConsumerRecord<byte[], byte[]>>> done)
    {
        return Polling.pollUntil(consumer, done, Duration.ofSeconds(30), "the records wanted");
    }

    private static Map<Integer, List<Long>> offsetsByPartition(final List<ConsumerRecord<byte[], byte[]>> records)
    {
        final Map<Integer, List<Long>> map = new HashMap<>();
        for (final ConsumerRecord<byte[], byte[]> r : records)
        {
            map.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(r.offset());
            assertEquals(r.partition() + "-" + r.offset(), text(r.value()), "the record at its offset");
        }
        return map;
    }

    /** The offsets read from one partition are exactly from, from+1, ..., to-1. */
    private static void assertContiguous(final List<Long> offsets, final long from, final long to, final String what)
    {
        final List<Long> expected = new ArrayList<>();
        for (long o = from; o < to; o++)
        {
            expected.add(o);
        }
        assertEquals(expected, offsets == null ? List.of() : offsets, what);
    }

    private static Set<TopicPartition> all()
    {
        return new HashSet<>(Members.partitions(TOPIC, PARTITIONS));
    }

    /**
     * Consumer 1 reads part of the topic and commits with commitSync(); consumer 2 of the same group starts
     * exactly there, commits with commitAsync() (the callback reports success and committed() agrees), reads
     * to the end and commits explicit offsets with metadata, leaving the last 5 records of partition 0
     * uncommitted. After a broker restart, committed() returns those offsets and metadata, __consumer_offsets
     * is an internal topic with offsets.topic.num.partitions partitions, and consumer 3 reads exactly the 5
     * uncommitted records, then the records produced after the restart, and nothing else.
     */
    @Test
    void consumptionResumesAtCommittedOffsetsAfterConsumerAndBrokerRestarts() throws Exception
    {
        final Map<String, String> overrides = Map.of("group.initial.rebalance.delay.ms", "0", "offsets.topic.num.partitions", "5");
        try (RunningBroker broker = new RunningBroker(dir, overrides))
        {
            try (Admin admin = broker.admin())
            {
                Members.createTopic(admin, TOPIC, PARTITIONS);
            }
            produce(broker, 0, PER_PARTITION);

            // 1: read some of every partition, commitSync() the positions
            final Map<TopicPartition, Long> committed1 = new HashMap<>();
            try (KafkaConsumer<byte[], byte[]> c1 = broker.consumer(consumerConfig()))
            {
                c1.subscribe(List.of(TOPIC));
                final List<ConsumerRecord<byte[], byte[]>> read = pollUntil(c1,
                    got -> got.size() >= 60 && got.stream().map(ConsumerRecord::partition).distinct().count() == PARTITIONS);
                c1.commitSync();
                final Map<Integer, List<Long>> byPartition = offsetsByPartition(read);
                final Map<TopicPartition, OffsetAndMetadata> committed = c1.committed(all());
                for (final TopicPartition tp : all())
                {
                    final List<Long> offsets = byPartition.get(tp.partition());
                    final long position = c1.position(tp);
                    assertContiguous(offsets, 0, position, "c1 read " + tp + " from the start");
                    assertNotNull(committed.get(tp), "committed " + tp);
                    assertEquals(position, committed.get(tp).offset(), "commitSync() committed the position of " + tp);
                    assertEquals("", committed.get(tp).metadata(), "no metadata given");
                    committed1.put(tp, position);
                }
                assertTrue(committed1.values().stream().anyMatch(o -> o < PER_PARTITION), "stopped before the end: " + committed1);
            }

            // 2: a new consumer starts at the committed offsets; commitAsync; explicit offsets with metadata
            final Map<TopicPartition, OffsetAndMetadata> committed2 = new HashMap<>();
            try (KafkaConsumer<byte[], byte[]> c2 = broker.consumer(consumerConfig()))
            {
                c2.subscribe(List.of(TOPIC));
                final List<ConsumerRecord<byte[], byte[]>> first = pollUntil(c2, got -> got.size() >= 30);
                final AtomicReference<Object> callback = new AtomicReference<>();
                c2.commitAsync((offsets, exception) -> callback.set(exception == null ? offsets : exception));
                final List<ConsumerRecord<byte[], byte[]>> rest = new ArrayList<>();
                await(() ->
                {
                    c2.poll(Duration.ofMillis(100)).forEach(rest::add);
                    return callback.get() != null;
                }, Duration.ofSeconds(30), "commitAsync's callback");
                assertInstanceOf(Map.class, callback.get(), "commitAsync completed without error: " + callback.get());
                @SuppressWarnings("unchecked")
                final Map<TopicPartition, OffsetAndMetadata> asyncCommitted = (Map<TopicPartition, OffsetAndMetadata>)callback.get();
                final Map<TopicPartition, OffsetAndMetadata> afterAsync = c2.committed(asyncCommitted.keySet());
                for (final Map.Entry<TopicPartition, OffsetAndMetadata> e : asyncCommitted.entrySet())
                {
                    assertEquals(e.getValue().offset(), afterAsync.get(e.getKey()).offset(), "commitAsync committed " + e.getKey());
                }
                final List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>(first);
                read.addAll(rest);
                read.addAll(pollUntil(c2,
                    got -> all().stream().allMatch(tp -> c2.assignment().contains(tp) && c2.position(tp) == PER_PARTITION)));
                final Map<Integer, List<Long>> byPartition = offsetsByPartition(read);
                for (final TopicPartition tp : all())
                {
                    assertContiguous(byPartition.get(tp.partition()), committed1.get(tp), PER_PARTITION,
                        "c2 read " + tp + " from the committed offset to the end, nothing again, nothing skipped");
                }
                for (final TopicPartition tp : all())
                {
                    final long offset = tp.partition() == 0 ? PER_PARTITION - 5 : PER_PARTITION;
                    committed2.put(tp, new OffsetAndMetadata(offset, "processed-by=c2;partition=" + tp.partition()));
                }
                c2.commitSync(committed2);
                final Map<TopicPartition, OffsetAndMetadata> readBack = c2.committed(all());
                for (final TopicPartition tp : all())
                {
                    assertEquals(committed2.get(tp).offset(), readBack.get(tp).offset(), tp.toString());
                    assertEquals(committed2.get(tp).metadata(), readBack.get(tp).metadata(), "metadata of " + tp);
                }
            }

            broker.restart();

            try (Admin admin = broker.admin())
            {
                assertTrue(admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get(20, TimeUnit.SECONDS)
                    .contains("__consumer_offsets"), "offsets live in __consumer_offsets");
                assertFalse(admin.listTopics().names().get(20, TimeUnit.SECONDS).contains("__consumer_offsets"),
                    "__consumer_offsets is internal: not listed by default");
                final TopicDescription offsetsTopic = admin.describeTopics(List.of("__consumer_offsets")).allTopicNames()
                    .get(20, TimeUnit.SECONDS).get("__consumer_offsets");
                assertTrue(offsetsTopic.isInternal(), "__consumer_offsets is internal");
                assertEquals(5, offsetsTopic.partitions().size(), "offsets.topic.num.partitions");
            }
            produce(broker, PER_PARTITION, 10);

            // 3: after the restart: the committed offsets and metadata are back; reading resumes there
            try (KafkaConsumer<byte[], byte[]> c3 = broker.consumer(consumerConfig()))
            {
                final Map<TopicPartition, OffsetAndMetadata> reloaded = c3.committed(all());
                for (final TopicPartition tp : all())
                {
                    assertNotNull(reloaded.get(tp), "committed offset of " + tp + " reloaded");
                    assertEquals(committed2.get(tp).offset(), reloaded.get(tp).offset(), "reloaded offset of " + tp);
                    assertEquals(committed2.get(tp).metadata(), reloaded.get(tp).metadata(), "reloaded metadata of " + tp);
                }
                c3.subscribe(List.of(TOPIC));
                final List<ConsumerRecord<byte[], byte[]>> read = pollUntil(c3,
                    got -> all().stream().allMatch(tp -> c3.assignment().contains(tp) && c3.position(tp) == PER_PARTITION + 10));
                final Map<Integer, List<Long>> byPartition = offsetsByPartition(read);
                for (final TopicPartition tp : all())
                {
                    assertContiguous(byPartition.get(tp.partition()), committed2.get(tp).offset(), PER_PARTITION + 10,
                        "c3 read " + tp + " from the reloaded offset: the uncommitted records again, then the new ones");
                }
                assertEquals(5 + PARTITIONS * 10, read.size());
                c3.commitSync();
                for (final Map.Entry<TopicPartition, OffsetAndMetadata> e : c3.committed(all()).entrySet())
                {
                    assertEquals(PER_PARTITION + 10, e.getValue().offset(), "committed at the end: " + e.getKey());
                }
            }
        }
    }

    /**
     * Twelve groups commit (through Admin alterConsumerGroupOffsets and through standalone consumers with
     * assign()), some several times, with metadata; one group's offsets for one partition are deleted and
     * another group is deleted. After a restart Admin's multi-group listConsumerGroupOffsets shows every
     * group's latest offsets and metadata, the deleted offsets and group stay deleted, and the groups are
     * listed as Empty.
     */
    @Test
    void manyGroupsOffsetsAndDeletionsSurviveRestart() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("group.initial.rebalance.delay.ms", "0")))
        {
            final Map<String, Map<TopicPartition, OffsetAndMetadata>> expected = new HashMap<>();
            try (Admin admin = broker.admin())
            {
                Members.createTopic(admin, TOPIC, PARTITIONS);
                produce(broker, 0, 50);
                for (int g = 0; g < 12; g++)
                {
                    final String group = "ledger-" + g;
                    final Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                    for (final TopicPartition tp : all())
                    {
                        offsets.put(tp, new OffsetAndMetadata(g + tp.partition(), "g" + g + "p" + tp.partition()));
                    }
                    if (g % 2 == 0)
                    {
                        admin.alterConsumerGroupOffsets(group, offsets).all().get(20, TimeUnit.SECONDS);
                    }
                    else
                    {
                        final Map<String, Object> config = new HashMap<>(consumerConfig());
                        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
                        try (KafkaConsumer<byte[], byte[]> standalone = broker.consumer(config))
                        {
                            standalone.assign(all());
                            standalone.commitSync(Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(1, "older")));
                            standalone.commitSync(offsets);
                        }
                    }
                    expected.put(group, offsets);
                }
                admin.alterConsumerGroupOffsets("ledger-3", Map.of(new TopicPartition(TOPIC, 1),
                    new OffsetAndMetadata(40, "latest"))).all().get(20, TimeUnit.SECONDS);
                expected.get("ledger-3").put(new TopicPartition(TOPIC, 1), new OffsetAndMetadata(40, "latest"));
                admin.deleteConsumerGroupOffsets("ledger-4", Set.of(new TopicPartition(TOPIC, 2))).all().get(20, TimeUnit.SECONDS);
                expected.get("ledger-4").remove(new TopicPartition(TOPIC, 2));
                admin.deleteConsumerGroups(List.of("ledger-5")).all().get(20, TimeUnit.SECONDS);
                expected.remove("ledger-5");
                assertOffsets(admin, expected);
            }

            broker.restart();

            try (Admin admin = broker.admin())
            {
                assertOffsets(admin, expected);
                final Set<String> listed = new HashSet<>();
                admin.listGroups(ListGroupsOptions.forConsumerGroups()).all().get(20, TimeUnit.SECONDS).forEach(l ->
                {
                    listed.add(l.groupId());
                    assertEquals(GroupState.EMPTY, l.groupState().orElseThrow(), l.groupId() + " is Empty");
                });
                assertEquals(expected.keySet(), listed, "groups listed after the restart");
                final ExecutionException gone = assertThrows(ExecutionException.class,
                    () -> admin.describeConsumerGroups(List.of("ledger-5")).all().get(20, TimeUnit.SECONDS));
                // Kafka 4.4 answers DescribeGroups v6 with GROUP_ID_NOT_FOUND for a group that does not exist
                assertInstanceOf(GroupIdNotFoundException.class, gone.getCause());
                assertTrue(admin.listConsumerGroupOffsets("ledger-5").partitionsToOffsetAndMetadata().get(20, TimeUnit.SECONDS)
                    .isEmpty(), "a deleted group has no offsets");
            }
        }
    }

    private static void assertOffsets(final Admin admin, final Map<String, Map<TopicPartition, OffsetAndMetadata>> expected)
        throws Exception
    {
        final Map<String, ListConsumerGroupOffsetsSpec> specs = new HashMap<>();
        for (final String group : expected.keySet())
        {
            specs.put(group, new ListConsumerGroupOffsetsSpec());
        }
        final Map<String, Map<TopicPartition, OffsetAndMetadata>> got = admin.listConsumerGroupOffsets(specs).all().get(20, TimeUnit.SECONDS);
        for (final Map.Entry<String, Map<TopicPartition, OffsetAndMetadata>> e : expected.entrySet())
        {
            final Map<TopicPartition, OffsetAndMetadata> have = got.get(e.getKey());
            assertNotNull(have, e.getKey());
            assertEquals(e.getValue().keySet(), have.keySet(), e.getKey() + " partitions with offsets");
            for (final Map.Entry<TopicPartition, OffsetAndMetadata> o : e.getValue().entrySet())
            {
                assertEquals(o.getValue().offset(), have.get(o.getKey()).offset(), e.getKey() + " " + o.getKey());
                assertEquals(o.getValue().metadata(), have.get(o.getKey()).metadata(), e.getKey() + " " + o.getKey() + " metadata");
            }
        }
    }
}
