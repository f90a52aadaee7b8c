package io.ferrite.broker.group;

import io.ferrite.broker.Broker;
import io.ferrite.broker.config.BrokerConfig;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static io.ferrite.broker.group.KafkaOffsetsLog.key;
import static io.ferrite.broker.group.KafkaOffsetsLog.message;
import static io.ferrite.broker.group.KafkaOffsetsLog.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ferrite starts on a {@code __consumer_offsets} that Kafka 4.4's serializers wrote, in every key and
 * value version Kafka 4.4 writes or reads: committed offsets under record type 1 with OffsetCommitValue
 * 0 to 4 and under the legacy type 0 with LegacyOffsetCommitValue 0 (its only version: a type-0 value of
 * another version is skipped, as Kafka's serde rejects it) (4 flexible: compact strings, tagged fields — what 4.4 writes, and the
 * start failure of issue 19 before Ferrite read it), a classic group's GroupMetadataValue 0 to 4, and a
 * consumer-protocol (KIP-848) group: its ConsumerGroup* records, which Ferrite skips, and its offsets,
 * which come across. Kafka's Admin lists both groups' offsets, and consumers resume from them.
 */
class KafkaOffsetsLoadTest
{
    private static final String CLASSIC = "classic-group";
    private static final String MODERN = "consumer-protocol-group";
    private static final String TOPIC = "orders";

    @TempDir
    Path dir;

    @Test
    void offsetsOfEveryVersionKafkaWritesComeAcross() throws Exception
    {
        final long now = System.currentTimeMillis();
        final KafkaOffsetsLog log = new KafkaOffsetsLog();
        final Map<TopicPartition, OffsetAndMetadata> classic = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        // the classic group's metadata in every value version, the last (4, flexible) as 4.4 writes it
        for (int v = 0; v <= 4; v++)
        {
            final Object member = KafkaOffsetsLog.load("GroupMetadataValue$MemberMetadata").getConstructor().newInstance();
            for (final Object[] s : new Object[][] {{"setMemberId", "member-" + v}, {"setClientId", "client"}, {"setClientHost", "/127.0.0.1"},
                {"setSubscription", new byte[] {0, 1}}, {"setAssignment", new byte[] {2}}})
            {
                member.getClass().getMethod((String)s[0], s[1].getClass()).invoke(member, s[1]);
            }
            log.add(key(message("GroupMetadataKey", "Group", CLASSIC)), value(message("GroupMetadataValue", "ProtocolType", "consumer",
                "Generation", 10 + v, "Protocol", "range", "Leader", "member-" + v, "CurrentStateTimestamp", now, "Members",
                List.of(member)), v));
        }
        // its offsets: one partition per value version under record type 1, one under the legacy record type 0
        for (int v = 0; v <= 4; v++)
        {
            log.add(key(message("OffsetCommitKey", "Group", CLASSIC, "Topic", TOPIC, "Partition", v)),
                value(message("OffsetCommitValue", "Offset", 100L + v, "LeaderEpoch", 0, "Metadata", "v" + v, "CommitTimestamp", now,
                    "ExpireTimestamp", now + 60_000, "TopicId", Uuid.randomUuid()), v));
            classic.put(new TopicPartition(TOPIC, v), new OffsetAndMetadata(100L + v, v >= 3 ? Optional.of(0) : Optional.empty(), "v" + v));
        }
        log.add(key(message("LegacyOffsetCommitKey", "Group", CLASSIC, "Topic", TOPIC, "Partition", 5)),
            value(message("LegacyOffsetCommitValue", "Offset", 105L, "Metadata", "legacy", "CommitTimestamp", now), 0));
        classic.put(new TopicPartition(TOPIC, 5), new OffsetAndMetadata(105L, Optional.empty(), "legacy"));
        // a legacy key's value in any version but 0 is skipped, as Kafka 4.4's serde rejects it (unknown record version)
        log.add(key(message("LegacyOffsetCommitKey", "Group", CLASSIC, "Topic", TOPIC, "Partition", 6)),
            value(message("OffsetCommitValue", "Offset", 106L, "Metadata", "not read", "CommitTimestamp", now), 1));

        // a consumer-protocol group as 4.4 writes it: its group, member and assignment records, then offsets (value 4)
        log.add(key(message("ConsumerGroupMetadataKey", "GroupId", MODERN)), value(message("ConsumerGroupMetadataValue", "Epoch", 4), 0));
        log.add(key(message("ConsumerGroupMemberMetadataKey", "GroupId", MODERN, "MemberId", "m1")),
            value(message("ConsumerGroupMemberMetadataValue", "ClientId", "c", "ClientHost", "/127.0.0.1", "SubscribedTopicNames",
                List.of(TOPIC)), 0));
        log.add(key(message("ConsumerGroupTargetAssignmentMetadataKey", "GroupId", MODERN)),
            value(message("ConsumerGroupTargetAssignmentMetadataValue", "AssignmentEpoch", 4), 0));
        log.add(key(message("ConsumerGroupCurrentMemberAssignmentKey", "GroupId", MODERN, "MemberId", "m1")),
            value(message("ConsumerGroupCurrentMemberAssignmentValue", "MemberEpoch", 4), 0));
        final Map<TopicPartition, OffsetAndMetadata> modern = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        for (int p = 0; p < 6; p++)
        {
            log.add(key(message("OffsetCommitKey", "Group", MODERN, "Topic", TOPIC, "Partition", p)),
                value(message("OffsetCommitValue", "Offset", 200L + p, "LeaderEpoch", 0, "Metadata", "", "CommitTimestamp", now,
                    "TopicId", Uuid.randomUuid()), 4));
            modern.put(new TopicPartition(TOPIC, p), new OffsetAndMetadata(200L + p, Optional.of(0), ""));
        }
        log.writeTo(dir);

        try (Broker broker = Broker.start(BrokerConfig.of(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0",
            BrokerConfig.LOG_DIR, dir.toString(), BrokerConfig.KAFKA_METADATA_IMPORT_ENABLE, "false", // a coordinator log written here, no Kafka metadata
            "offsets.topic.num.partitions", "1"))))
        {
            final String bootstrap = "127.0.0.1:" + broker.address().getPort();
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap)))
            {
                assertEquals(classic, listed(admin, CLASSIC), "the classic group's offsets");
                assertEquals(modern, listed(admin, MODERN), "the consumer-protocol group's offsets");
                admin.createTopics(List.of(new NewTopic(TOPIC, 6, (short)1))).all().get(30, TimeUnit.SECONDS);
            }
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.LINGER_MS_CONFIG, 5), new ByteArraySerializer(), new ByteArraySerializer()))
            {
                for (int p = 0; p < 6; p++)
                {
                    for (int i = 0; i < 210; i++)
                    {
                        producer.send(new ProducerRecord<>(TOPIC, p, null, new byte[] {(byte)i}));
                    }
                }
                producer.flush();
            }
            assertEquals(offsets(classic), firstConsumed(bootstrap, CLASSIC), "where a consumer of the classic group resumes");
            assertEquals(offsets(modern), firstConsumed(bootstrap, MODERN), "where a consumer of the consumer-protocol group resumes");
        }
    }

    private static Map<TopicPartition, OffsetAndMetadata> listed(final Admin admin, final String group) throws Exception
    {
        return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
    }

    private static Map<TopicPartition, Long> offsets(final Map<TopicPartition, OffsetAndMetadata> committed)
    {
        final Map<TopicPartition, Long> offsets = new HashMap<>();
        committed.forEach((tp, o) -> offsets.put(tp, o.offset()));
        return offsets;
    }

    /** The offset of the first record a (classic protocol) consumer of {@code group} gets from each partition. */
    private static Map<TopicPartition, Long> firstConsumed(final String bootstrap, final String group)
    {
        final Map<TopicPartition, Long> first = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
            ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
            ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none"), new ByteArrayDeserializer(), new ByteArrayDeserializer()))
        {
            consumer.subscribe(List.of(TOPIC));
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (first.size() < 6 && System.nanoTime() < deadline)
            {
                for (final ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200)))
                {
                    first.putIfAbsent(new TopicPartition(r.topic(), r.partition()), r.offset());
                }
            }
        }
        assertTrue(first.size() == 6, "records from all 6 partitions within 60 s: " + first);
        return first;
    }
}
