package io.ferrite.broker.group;

import io.ferrite.broker.Broker;
import io.ferrite.broker.config.BrokerConfig;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static io.ferrite.broker.group.KafkaOffsetsLog.key;
import static io.ferrite.broker.group.KafkaOffsetsLog.message;
import static io.ferrite.broker.group.KafkaOffsetsLog.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * The group tombstone rule of the {@code __consumer_offsets} load, on real files: a GroupMetadata
 * tombstone does not drop the group's offsets (Kafka 4.4's replay keeps them in its offset manager:
 * what it writes when it converts a classic group to the consumer protocol), while a DeleteGroups
 * still deletes every offset after a restart, since it writes a tombstone for each of them.
 */
class GroupTombstoneLoadTest
{
    private static final String GROUP = "converted";
    private static final String TOPIC = "orders";

    @TempDir
    Path dir;

    /** Kafka's classic -> consumer conversion: [group][offsets][group tombstone][ConsumerGroup* records]; the offsets stay. */
    @Test
    void aKafkaGroupTombstoneKeepsTheOffsets() throws Exception
    {
        final long now = System.currentTimeMillis();
        final KafkaOffsetsLog log = new KafkaOffsetsLog();
        log.add(key(message("GroupMetadataKey", "Group", GROUP)), value(message("GroupMetadataValue", "ProtocolType", "consumer",
            "Generation", 3, "Protocol", "range", "CurrentStateTimestamp", now), 4));
        final Map<TopicPartition, OffsetAndMetadata> expected = new java.util.HashMap<>();
        for (int p = 0; p < 3; p++)
        {
            log.add(key(message("OffsetCommitKey", "Group", GROUP, "Topic", TOPIC, "Partition", p)),
                value(message("OffsetCommitValue", "Offset", 10L + p, "LeaderEpoch", 0, "Metadata", "", "CommitTimestamp", now,
                    "TopicId", Uuid.randomUuid()), 4));
            expected.put(new TopicPartition(TOPIC, p), new OffsetAndMetadata(10L + p, Optional.of(0), ""));
        }
        log.add(key(message("GroupMetadataKey", "Group", GROUP)), null);
        log.add(key(message("ConsumerGroupMetadataKey", "GroupId", GROUP)), value(message("ConsumerGroupMetadataValue", "Epoch", 4), 0));
        log.writeTo(dir);
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            assertEquals(expected, listed(admin), "the converted group's offsets, kept across its classic group's tombstone");
        }
    }

    /** Offsets committed through Ferrite, the group deleted with Admin, a restart: no group, no offset. */
    @Test
    void deleteGroupsThenARestartLeavesNothing() throws Exception
    {
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 3, (short)1))).all().get(30, TimeUnit.SECONDS);
            final Map<TopicPartition, OffsetAndMetadata> offsets = Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(5),
                new TopicPartition(TOPIC, 1), new OffsetAndMetadata(6), new TopicPartition(TOPIC, 2), new OffsetAndMetadata(7));
            admin.alterConsumerGroupOffsets(GROUP, offsets).all().get(30, TimeUnit.SECONDS);
            assertEquals(offsets.keySet(), listed(admin).keySet(), "committed");
            admin.deleteConsumerGroups(List.of(GROUP)).all().get(30, TimeUnit.SECONDS);
            assertEquals(Map.of(), listed(admin), "live, deleted");
        }
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            assertEquals(Map.of(), listed(admin), "after a restart: the deleted group's offsets");
            final Set<String> groups = admin.listGroups().all().get(30, TimeUnit.SECONDS).stream().map(GroupListing::groupId)
                .collect(Collectors.toSet());
            assertFalse(groups.contains(GROUP), "after a restart the deleted group is not listed: " + groups);
        }
    }

    private Broker start() throws Exception
    {
        return Broker.start(BrokerConfig.of(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0", BrokerConfig.LOG_DIR, dir.toString(),
            BrokerConfig.KAFKA_METADATA_IMPORT_ENABLE, "false", // a coordinator log written here, no Kafka metadata
            "offsets.topic.num.partitions", "1")));
    }

    private static Admin admin(final Broker broker)
    {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.address().getPort()));
    }

    private static Map<TopicPartition, OffsetAndMetadata> listed(final Admin admin) throws Exception
    {
        return admin.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
    }
}
