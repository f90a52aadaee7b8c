package io.ferrite.wire.message;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferrite.codegen.MessageSpec;
import io.ferrite.codegen.SchemaLoader;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every message of every version, both ways, against kafka-clients 4.4: random messages are
 * serialized by Kafka's generated {@code *Data} classes and parsed by our decoders to the same
 * field values; our encoders write the same messages to exactly Kafka's bytes, which Kafka parses
 * back equal. Seeds are printed with any failure; {@code -Dferrite.seed=N} replays a run.
 */
class KafkaCrossValidationTest
{
    static final List<MessageSpec> SPECS = SchemaLoader.loadFromClasspath();
    private static final long BASE_SEED = Long.getLong("ferrite.seed", 0x5EED_F3A1L);
    private static final int SAMPLES = Integer.getInteger("ferrite.samples", 25);

    /** The APIs the foundation issue names; each must be covered in every valid version. */
    static final List<String> REQUIRED_APIS = List.of(
        "ApiVersions", "Metadata", "Produce", "Fetch", "ListOffsets", "CreateTopics", "DeleteTopics",
        "CreatePartitions", "DescribeConfigs", "AlterConfigs", "IncrementalAlterConfigs", "DescribeCluster",
        "DeleteRecords", "OffsetForLeaderEpoch", "InitProducerId", "FindCoordinator", "JoinGroup", "SyncGroup",
        "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch", "ListGroups", "DescribeGroups", "DeleteGroups",
        "OffsetDelete", "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn", "TxnOffsetCommit", "WriteTxnMarkers",
        "SaslHandshake", "SaslAuthenticate");

    @Test
    void everyRequiredApiHasRequestAndResponseCodecs()
    {
        final Set<String> names = new TreeSet<>();
        for (final MessageSpec s : SPECS)
        {
            names.add(s.name());
        }
        for (final String api : REQUIRED_APIS)
        {
            assertTrue(names.contains(api + "Request"), api + "Request");
            assertTrue(names.contains(api + "Response"), api + "Response");
        }
        assertTrue(names.contains("RequestHeader") && names.contains("ResponseHeader"));
    }

    @TestFactory
    Stream<DynamicTest> everyMessageEveryVersionBothWays()
    {
        final List<DynamicTest> tests = new ArrayList<>();
        for (final MessageSpec spec : SPECS)
        {
            for (short v = spec.valid().lowest(); v <= spec.valid().highest(); v++)
            {
                final short version = v;
                tests.add(DynamicTest.dynamicTest(spec.name() + " v" + v, () -> roundTrips(spec, version)));
            }
        }
        return tests.stream();
    }

    static long seed(final MessageSpec spec, final short version, final int sample)
    {
        return BASE_SEED ^ (spec.name().hashCode() * 31L + version) * 1_000_003L ^ sample;
    }

    private static void roundTrips(final MessageSpec spec, final short version) throws Exception
    {
        for (int i = 0; i < SAMPLES; i++)
        {
            final long seed = seed(spec, version, i);
            try
            {
                roundTrip(spec, version, new RandomMessages(spec, seed).message(version));
            }
            catch (final AssertionError | RuntimeException ex)
            {
                throw new AssertionError(spec.name() + " v" + version + " seed " + seed + ": " + ex.getMessage(), ex);
            }
        }
    }

    static void roundTrip(final MessageSpec spec, final short version, final ObjectNode json) throws Exception
    {
        final Message kafka = KafkaMessages.fromJson(spec, json, version);
        final byte[] kafkaBytes = KafkaMessages.serialize(kafka, version);

        // Kafka's bytes through our decoder: the same values
        final UnsafeBuffer in = new UnsafeBuffer(kafkaBytes);
        final int[] end = new int[1];
        final JsonNode decoded = MessageCodecs.decode(spec.name(), in, 0, kafkaBytes.length, version, end);
        assertEquals(kafkaBytes.length, end[0], "decoder consumed the whole message");
        assertEquals(RandomMessages.normalize(json), RandomMessages.normalize(decoded), "decoded values");

        // our encoder: Kafka's exact bytes, which Kafka parses back equal
        final ExpandableArrayBuffer out = new ExpandableArrayBuffer(64);
        final int length = MessageCodecs.encode(spec.name(), json, out, 0, version);
        final byte[] ours = Arrays.copyOf(out.byteArray(), length);
        assertArrayEquals(kafkaBytes, ours, "encoded bytes");
        assertEquals(kafka, KafkaMessages.parse(spec, ByteBuffer.wrap(ours), version), "Kafka parses our bytes back");
    }

    /** Kafka's side, by reflection over the generated classes in kafka-clients. */
    static final class KafkaMessages
    {
        private static final String PACKAGE = "org.apache.kafka.common.message.";

        static Message fromJson(final MessageSpec spec, final JsonNode json, final short version) throws Exception
        {
            final Class<?> converter = Class.forName(PACKAGE + spec.kafkaDataClassName() + "JsonConverter");
            return (Message)converter.getMethod("read", JsonNode.class, short.class).invoke(null, json, version);
        }

        static byte[] serialize(final Message message, final short version)
        {
            final ObjectSerializationCache cache = new ObjectSerializationCache();
            final ByteBuffer buffer = ByteBuffer.allocate(message.size(cache, version));
            message.write(new ByteBufferAccessor(buffer), cache, version);
            return buffer.array();
        }

        static Message parse(final MessageSpec spec, final ByteBuffer bytes, final short version) throws Exception
        {
            final Message m = (Message)Class.forName(PACKAGE + spec.kafkaDataClassName()).getConstructor().newInstance();
            m.read(new ByteBufferAccessor(bytes), version);
            return m;
        }
    }
}
