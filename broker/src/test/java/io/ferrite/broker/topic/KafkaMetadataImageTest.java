package io.ferrite.broker.topic;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.AccessControlEntryRecord;
import org.apache.kafka.common.metadata.ClientQuotaRecord;
import org.apache.kafka.common.metadata.ConfigRecord;
import org.apache.kafka.common.metadata.DelegationTokenRecord;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.RemoveAccessControlEntryRecord;
import org.apache.kafka.common.metadata.RemoveDelegationTokenRecord;
import org.apache.kafka.common.metadata.RemoveTopicRecord;
import org.apache.kafka.common.metadata.RemoveUserScramCredentialRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.metadata.UserScramCredentialRecord;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The metadata records as Kafka 4.4's own serializer ({@code MetadataRecordSerde}) writes them, replayed by the image. */
class KafkaMetadataImageTest
{
    private static final Uuid ORDERS = Uuid.randomUuid();
    private static final Uuid GONE = Uuid.randomUuid();

    @Test
    void topicsPartitionsAndConfigsAsKafkaWritesThem()
    {
        final KafkaMetadataImage image = new KafkaMetadataImage();
        apply(image, new TopicRecord().setName("orders").setTopicId(ORDERS), 0);
        apply(image, new TopicRecord().setName("gone").setTopicId(GONE), 0);
        // v2 with its tagged ELR fields set, which come after the fields read
        apply(image, new PartitionRecord().setPartitionId(0).setTopicId(ORDERS).setReplicas(List.of(1)).setIsr(List.of(1))
            .setLeader(1).setLeaderEpoch(3).setEligibleLeaderReplicas(List.of(1)).setLastKnownElr(List.of(1))
            .setDirectories(List.of(Uuid.randomUuid())), 2);
        apply(image, new PartitionRecord().setPartitionId(1).setTopicId(ORDERS).setReplicas(List.of(1, 2, 3)).setIsr(List.of(2))
            .setLeader(2), 0);
        apply(image, new PartitionRecord().setPartitionId(0).setTopicId(GONE).setReplicas(List.of(1)).setLeader(1), 1);
        // a clean stop's controlled shutdown: no leader; a change of replicas; one with the leader unchanged (-2)
        apply(image, new PartitionChangeRecord().setPartitionId(0).setTopicId(ORDERS).setLeader(-1).setIsr(List.of(1)), 2);
        apply(image, new PartitionChangeRecord().setPartitionId(1).setTopicId(ORDERS).setReplicas(List.of(3, 4)), 0);
        apply(image, new PartitionChangeRecord().setPartitionId(1).setTopicId(ORDERS), 1);
        apply(image, topicConfig("orders", "retention.ms", "604800001"), 0);
        apply(image, topicConfig("orders", "retention.bytes", "1000"), 0);
        apply(image, topicConfig("orders", "retention.bytes", null), 0); // deleted
        apply(image, topicConfig("gone", "cleanup.policy", "compact"), 0);
        apply(image, new ConfigRecord().setResourceType(KafkaMetadataImage.RESOURCE_BROKER).setResourceName("")
            .setName("min.insync.replicas").setValue("1"), 0);
        apply(image, new RemoveTopicRecord().setTopicId(GONE), 0);

        assertEquals(Set.of(ORDERS.toString()), image.topics.keySet(), "Kafka's base64url text of the id");
        final KafkaMetadataImage.TopicState orders = image.topics.get(ORDERS.toString());
        assertEquals("orders", orders.name);
        assertEquals(ORDERS.getMostSignificantBits(), orders.id[0]);
        assertEquals(ORDERS.getLeastSignificantBits(), orders.id[1]);
        assertEquals(-1, orders.partitions.get(0).leader);
        assertArrayEquals(new int[] {1}, orders.partitions.get(0).replicas);
        assertEquals(2, orders.partitions.get(1).leader);
        assertArrayEquals(new int[] {3, 4}, orders.partitions.get(1).replicas);
        assertEquals(Map.of("orders", Map.of("retention.ms", "604800001")), image.topicConfigs, "the deleted topic's configs gone with it");
        assertEquals(Map.of("broker (default)", Set.of("min.insync.replicas")), image.otherConfigs);
        assertEquals(0, image.unreadable);
    }

    @Test
    void whatDoesNotComeAcrossIsKeptToBeSaid()
    {
        final KafkaMetadataImage image = new KafkaMetadataImage();
        final Uuid kept = Uuid.randomUuid();
        final Uuid removed = Uuid.randomUuid();
        apply(image, acl(kept), 0);
        apply(image, acl(removed), 0);
        apply(image, new RemoveAccessControlEntryRecord().setId(removed), 0);
        apply(image, new UserScramCredentialRecord().setName("alice").setMechanism((byte)1).setSalt(new byte[8])
            .setStoredKey(new byte[32]).setServerKey(new byte[32]).setIterations(4096), 0);
        apply(image, new UserScramCredentialRecord().setName("bob").setMechanism((byte)2).setSalt(new byte[8])
            .setStoredKey(new byte[64]).setServerKey(new byte[64]).setIterations(4096), 0);
        apply(image, new RemoveUserScramCredentialRecord().setName("bob").setMechanism((byte)2), 0);
        apply(image, new ClientQuotaRecord().setEntity(List.of(new ClientQuotaRecord.EntityData().setEntityType("user")
            .setEntityName("alice"))).setKey("producer_byte_rate").setValue(1024), 0);
        apply(image, new ClientQuotaRecord().setEntity(List.of(new ClientQuotaRecord.EntityData().setEntityType("client-id")
            .setEntityName(null))).setKey("consumer_byte_rate").setValue(2048), 0);
        apply(image, new ClientQuotaRecord().setEntity(List.of(new ClientQuotaRecord.EntityData().setEntityType("client-id")
            .setEntityName(null))).setKey("consumer_byte_rate").setRemove(true), 0);
        apply(image, new DelegationTokenRecord().setOwner("User:alice").setRequester("User:alice").setRenewers(List.of("User:bob"))
            .setTokenId("token-1").setIssueTimestamp(1).setMaxTimestamp(2).setExpirationTimestamp(3), 0);
        apply(image, new DelegationTokenRecord().setOwner("User:alice").setRequester("User:alice").setTokenId("token-2"), 0);
        apply(image, new RemoveDelegationTokenRecord().setTokenId("token-2"), 0);
        apply(image, new FeatureLevelRecord().setName("metadata.version").setFeatureLevel((short)33), 0);
        apply(image, new RegisterBrokerRecord().setBrokerId(1).setIncarnationId(Uuid.randomUuid()), 3);

        assertEquals(Set.of(kept.toString()), image.acls);
        assertEquals(Set.of("alice (SCRAM-SHA-256)"), image.scramCredentials);
        assertEquals(Set.of("user=alice producer_byte_rate"), image.quotas);
        assertEquals(Set.of("token-1"), image.delegationTokens);
        assertEquals(Map.of("metadata.version", (short)33), image.featureLevels);
        assertEquals(Map.of(0, 1), image.skipped, "a type not read: counted by api key");
    }

    @Test
    void aRecordCutShortOrOfAnotherFrameIsRefusedTypedAndChangesNothing()
    {
        final byte[] whole = bytes(new TopicRecord().setName("orders").setTopicId(ORDERS), 0);
        final long seed = System.nanoTime();
        final Random random = new Random(seed);
        for (int i = 0; i < 200; i++)
        {
            final KafkaMetadataImage image = new KafkaMetadataImage();
            final int length = random.nextInt(whole.length - 1); // the id's 16 bytes are last: every cut loses some
            final ByteBuffer cut = ByteBuffer.wrap(whole, 0, length);
            assertThrows(IllegalArgumentException.class, () -> image.apply(cut), "seed " + seed + ", cut at " + length);
            assertTrue(image.topics.isEmpty(), "seed " + seed);
        }
        final byte[] otherFrame = whole.clone();
        otherFrame[0] = 2;
        final KafkaMetadataImage image = new KafkaMetadataImage();
        assertThrows(IllegalArgumentException.class, () -> image.apply(ByteBuffer.wrap(otherFrame)));
        assertFalse(image.topics.containsKey(ORDERS.toString()));
    }

    @Test
    void aStringLengthPastTheRecordIsRefusedBeforeAnyArray()
    {
        // frame 1, TopicRecord (api key 2) v0, then its name's compact length as 2^31 - 1: far past the 9 bytes there are
        final byte[] record = {1, 2, 0, (byte)0xff, (byte)0xff, (byte)0xff, (byte)0xff, 0x07, 'o', 'r', 'd', 'e', 'r', 's'};
        final KafkaMetadataImage image = new KafkaMetadataImage();
        assertThrows(IllegalArgumentException.class, () -> image.apply(ByteBuffer.wrap(record)));
        assertTrue(image.topics.isEmpty());
    }

    private static ConfigRecord topicConfig(final String topic, final String name, final String value)
    {
        return new ConfigRecord().setResourceType(KafkaMetadataImage.RESOURCE_TOPIC).setResourceName(topic).setName(name).setValue(value);
    }

    private static AccessControlEntryRecord acl(final Uuid id)
    {
        return new AccessControlEntryRecord().setId(id).setResourceType((byte)2).setResourceName("orders").setPatternType((byte)3)
            .setPrincipal("User:alice").setHost("*").setOperation((byte)3).setPermissionType((byte)3);
    }

    private static void apply(final KafkaMetadataImage image, final ApiMessage record, final int version)
    {
        image.apply(ByteBuffer.wrap(bytes(record, version)));
    }

    /** The value Kafka's metadata log holds for a record: {@code MetadataRecordSerde}'s frame and the record. */
    static byte[] bytes(final ApiMessage record, final int version)
    {
        final MetadataRecordSerde serde = new MetadataRecordSerde();
        final ObjectSerializationCache cache = new ObjectSerializationCache();
        final ApiMessageAndVersion message = new ApiMessageAndVersion(record, (short)version);
        final ByteBuffer out = ByteBuffer.allocate(serde.recordSize(message, cache));
        serde.write(message, cache, new ByteBufferAccessor(out));
        return out.array();
    }
}
