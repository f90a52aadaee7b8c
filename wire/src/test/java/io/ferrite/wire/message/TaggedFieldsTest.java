package io.ferrite.wire.message;

import io.ferrite.wire.ProtocolException;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class TaggedFieldsTest
{
    @Test
    void unknownTaggedFieldsAreSkippedAndCountedAsKafkaKeepsThem()
    {
        final FetchRequestData kafka = new FetchRequestData().setMaxWaitMs(500).setMinBytes(1).setClusterId("c1");
        kafka.unknownTaggedFields().add(new RawTaggedField(7, new byte[] {1, 2, 3}));
        kafka.unknownTaggedFields().add(new RawTaggedField(99, new byte[300]));
        final byte[] bytes = KafkaCrossValidationTest.KafkaMessages.serialize(kafka, (short)17);

        final FetchRequestDecoder d = new FetchRequestDecoder();
        assertEquals(bytes.length, d.wrap(new UnsafeBuffer(bytes), 0, bytes.length, (short)17));
        assertEquals(2, d.unknownTaggedFields());
        assertEquals("c1", d.clusterId());
        assertEquals(500, d.maxWaitMs());
    }

    @Test
    void anyUnknownTaggedFieldsAreSkippedWhereverTheyAre()
    {
        io.ferrite.wire.testing.Property.check("unknown tagged fields", 500, r ->
        {
            final short version = (short)(12 + r.nextInt(7));
            final FetchRequestData kafka = new FetchRequestData().setMaxWaitMs(r.nextInt(1000)).setMinBytes(r.nextInt(9))
                .setClusterId(r.nextBoolean() ? null : io.ferrite.wire.testing.Property.string(r, 8, false));
            final FetchRequestData.FetchTopic topic = new FetchRequestData.FetchTopic().setTopic("t")
                .setTopicId(org.apache.kafka.common.Uuid.randomUuid());
            kafka.topics().add(topic);
            final FetchRequestData.FetchPartition partition = new FetchRequestData.FetchPartition().setPartition(r.nextInt(50))
                .setFetchOffset(r.nextLong() >>> 1);
            topic.partitions().add(partition);
            int expected = 0;
            for (final java.util.List<RawTaggedField> where : java.util.List.of(
                kafka.unknownTaggedFields(), topic.unknownTaggedFields(), partition.unknownTaggedFields()))
            {
                int tag = 10;
                for (int i = r.nextInt(3); i > 0; i--)
                {
                    tag += 1 + r.nextInt(1000);
                    final byte[] data = new byte[r.nextInt(r.nextBoolean() ? 300 : 5)];
                    r.nextBytes(data);
                    where.add(new RawTaggedField(tag, data));
                    expected += where == kafka.unknownTaggedFields() ? 1 : 0;
                }
            }
            final byte[] bytes = KafkaCrossValidationTest.KafkaMessages.serialize(kafka, version);
            final FetchRequestDecoder d = new FetchRequestDecoder();
            assertEquals(bytes.length, d.wrap(new UnsafeBuffer(bytes), 0, bytes.length, version));
            assertEquals(expected, d.unknownTaggedFields());
            assertEquals(kafka.clusterId(), d.clusterId());
            assertEquals(kafka.maxWaitMs(), d.maxWaitMs());
            final FetchRequestDecoder.FetchTopic t = d.topics().next();
            assertEquals(topic.unknownTaggedFields().size(), t.unknownTaggedFields());
            final FetchRequestDecoder.FetchPartition p = t.partitions().next();
            assertEquals(partition.unknownTaggedFields().size(), p.unknownTaggedFields());
            assertEquals(partition.fetchOffset(), p.fetchOffset());
        });
    }

    @Test
    void aTaggedFieldWhoseValueDoesNotFillItsSizeIsRefused()
    {
        // FetchRequest v12: ReplicaId, MaxWaitMs, MinBytes, MaxBytes, IsolationLevel, SessionId, SessionEpoch,
        // Topics (empty), ForgottenTopicsData (empty), RackId (empty), then tag 0 (ClusterId) of size 3
        // holding the compact string "a" (2 bytes) and one stray byte
        final byte[] bytes = {
            0, 0, 0, 0, 0, 0, 1, -12, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1,
            1, 0, 3, 2, 'a', 9, 0};
        final FetchRequestDecoder d = new FetchRequestDecoder();
        final ProtocolException ex = assertThrows(ProtocolException.class,
            () -> d.wrap(new UnsafeBuffer(bytes), 0, bytes.length - 1, (short)12));
        assertEquals("ClusterId", ex.field());
    }

    @Test
    void largeTaggedFieldsGetMultiByteSizesLikeKafkas()
    {
        // SupportedFeatures is a tagged array; 40 entries need a size of more than 127 bytes
        final ApiVersionsResponseData kafka = new ApiVersionsResponseData();
        final ApiVersionsResponseEncoder e = new ApiVersionsResponseEncoder();
        final ExpandableArrayBuffer out = new ExpandableArrayBuffer(16);
        e.wrap(out, 0, (short)3).errorCode((short)0);
        final ApiVersionsResponseEncoder.SupportedFeatureKey keys = e.supportedFeatures(40);
        for (int i = 0; i < 40; i++)
        {
            final String name = "feature-" + i;
            keys.next().name(name).minVersion((short)1).maxVersion((short)i);
            kafka.supportedFeatures().add(new ApiVersionsResponseData.SupportedFeatureKey()
                .setName(name).setMinVersion((short)1).setMaxVersion((short)i));
        }
        e.finalizedFeaturesEpoch(7L);
        kafka.setFinalizedFeaturesEpoch(7L);
        final int length = e.finish();
        assertArrayEquals(KafkaCrossValidationTest.KafkaMessages.serialize(kafka, (short)3), Arrays.copyOf(out.byteArray(), length));
    }

    @Test
    void writingOutOfOrderOrTooFewElementsThrows()
    {
        final ExpandableArrayBuffer out = new ExpandableArrayBuffer(16);
        final FetchRequestEncoder e = new FetchRequestEncoder().wrap(out, 0, (short)12);
        e.maxWaitMs(5);
        assertThrows(IllegalStateException.class, () -> e.replicaId(1));
        e.topics(2).next().topic("t");
        assertThrows(IllegalStateException.class, e::finish);
    }
}
