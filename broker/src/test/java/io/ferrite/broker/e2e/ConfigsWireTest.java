package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.message.AlterConfigsRequestData;
import org.apache.kafka.common.message.AlterConfigsResponseData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * DescribeConfigs v1-v4, AlterConfigs v0-v2 and IncrementalAlterConfigs v0-v1 on the wire, written
 * and read by kafka-clients' own message classes over a socket: every version Kafka 4.4 declares
 * valid, with the answers Admin cannot show (the old AlterConfigs, which Admin no longer sends;
 * another broker's id; repeated resources and keys; null values; unknown operations and resource
 * types; Kafka's order of checks), each resource answered in request order.
 */
class ConfigsWireTest
{
    private static final byte TOPIC = 2;
    private static final byte BROKER = 4;
    private static final byte GROUP = 32;

    @TempDir
    Path dir;

    private RunningBroker broker;
    private int correlation;

    @BeforeEach
    void start() throws Exception
    {
        broker = new RunningBroker(dir, Map.of("log.retention.hours", "48"));
        try (Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic("wired", 1, (short)1).configs(Map.of("retention.ms", "60000"))))
                .all().get(20, TimeUnit.SECONDS);
        }
    }

    @AfterEach
    void stop() throws Exception
    {
        broker.close();
    }

    /** One request and its response body, on a fresh connection. */
    private ByteBuffer roundTrip(final ApiKeys api, final short version, final ApiMessage body) throws Exception
    {
        final int id = ++correlation;
        final short headerVersion = api.requestHeaderVersion(version);
        final RequestHeaderData header = new RequestHeaderData().setRequestApiKey(api.id).setRequestApiVersion(version)
            .setCorrelationId(id).setClientId("configs-wire-test");
        final ObjectSerializationCache cache = new ObjectSerializationCache();
        final ByteBuffer request = ByteBuffer.allocate(header.size(cache, headerVersion) + body.size(cache, version));
        header.write(new ByteBufferAccessor(request), cache, headerVersion);
        body.write(new ByteBufferAccessor(request), cache, version);
        request.flip();
        try (Socket socket = new Socket("127.0.0.1", broker.broker.address().getPort()))
        {
            socket.setSoTimeout(10_000);
            final DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            out.writeInt(request.remaining());
            out.write(request.array(), 0, request.remaining());
            final DataInputStream in = new DataInputStream(socket.getInputStream());
            final byte[] bytes = new byte[in.readInt()];
            in.readFully(bytes);
            final ByteBuffer response = ByteBuffer.wrap(bytes);
            assertEquals(id, ResponseHeader.parse(response, api.responseHeaderVersion(version)).correlationId());
            return response;
        }
    }

    private static DescribeConfigsRequestData.DescribeConfigsResource describeResource(final byte type, final String name,
        final String... keys)
    {
        return new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType(type).setResourceName(name)
            .setConfigurationKeys(keys.length == 0 ? null : Arrays.asList(keys));
    }

    @Test
    void describeConfigsEveryVersion() throws Exception
    {
        for (short version = 1; version <= 4; version++)
        {
            final DescribeConfigsRequestData request = new DescribeConfigsRequestData().setIncludeSynonyms(true)
                .setIncludeDocumentation(version >= 3).setResources(List.of(
                    describeResource(TOPIC, "wired", "retention.ms", "segment.bytes", "no.such.config"),
                    describeResource(TOPIC, "missing"),
                    describeResource(BROKER, "1", "log.retention.hours", "no.such.config"),
                    describeResource(BROKER, "7"),
                    describeResource(BROKER, "x"),
                    describeResource(BROKER, ""),
                    describeResource(GROUP, "g"),
                    describeResource(TOPIC, "wired")));
            final DescribeConfigsResponseData response = new DescribeConfigsResponseData(
                new ByteBufferAccessor(roundTrip(ApiKeys.DESCRIBE_CONFIGS, version, request)), version);
            final String v = "v" + version;
            assertEquals(0, response.throttleTimeMs(), v);
            final List<DescribeConfigsResponseData.DescribeConfigsResult> results = response.results();
            assertEquals(8, results.size(), v);
            for (int i = 0; i < 8; i++)
            {
                assertEquals(request.resources().get(i).resourceType(), results.get(i).resourceType(), v);
                assertEquals(request.resources().get(i).resourceName(), results.get(i).resourceName(), v);
            }

            final DescribeConfigsResponseData.DescribeConfigsResult wired = results.get(0);
            assertEquals(Errors.NONE.code(), wired.errorCode(), v);
            assertEquals(List.of("retention.ms", "segment.bytes"), wired.configs().stream().map(c -> c.name()).toList(), v);
            final DescribeConfigsResponseData.DescribeConfigsResourceResult retention = wired.configs().get(0);
            assertEquals("60000", retention.value(), v);
            assertEquals(1, retention.configSource(), v);
            assertEquals(1, retention.synonyms().size(), v);
            assertEquals("retention.ms", retention.synonyms().get(0).name(), v);
            assertEquals(1, retention.synonyms().get(0).source(), v);
            final DescribeConfigsResponseData.DescribeConfigsResourceResult segment = wired.configs().get(1);
            assertEquals(5, segment.configSource(), v);
            assertEquals("log.segment.bytes", segment.synonyms().get(0).name(), v);
            if (version >= 3)
            {
                assertEquals(5, retention.configType(), v + ": LONG");
                assertEquals(3, segment.configType(), v + ": INT");
                assertNotNull(retention.documentation(), v);
            }
            else
            {
                assertEquals(0, retention.configType(), v + ": not in this version");
            }

            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(), results.get(1).errorCode(), v);
            assertEquals(List.of(), results.get(1).configs(), v);

            final DescribeConfigsResponseData.DescribeConfigsResult self = results.get(2);
            assertEquals(Errors.NONE.code(), self.errorCode(), v);
            assertEquals(1, self.configs().size(), v + ": a name Ferrite does not know is left out");
            assertEquals("48", self.configs().get(0).value(), v);
            assertEquals(4, self.configs().get(0).configSource(), v);
            assertTrue(self.configs().get(0).readOnly(), v);

            assertEquals(Errors.INVALID_REQUEST.code(), results.get(3).errorCode(), v);
            assertEquals("Unexpected broker id, expected 1 or empty string, but received 7", results.get(3).errorMessage(), v);
            assertEquals(Errors.INVALID_REQUEST.code(), results.get(4).errorCode(), v);
            assertEquals("Broker id must be an integer, but it is: x", results.get(4).errorMessage(), v);
            assertEquals(Errors.NONE.code(), results.get(5).errorCode(), v);
            assertEquals(List.of(), results.get(5).configs(), v + ": no dynamic defaults");
            assertEquals(Errors.INVALID_REQUEST.code(), results.get(6).errorCode(), v);
            assertTrue(results.get(7).configs().size() > 30, v + ": all the topic's configs");
        }

        // synonyms only when asked for
        final DescribeConfigsRequestData bare = new DescribeConfigsRequestData()
            .setResources(List.of(describeResource(TOPIC, "wired", "retention.ms")));
        final DescribeConfigsResponseData response = new DescribeConfigsResponseData(
            new ByteBufferAccessor(roundTrip(ApiKeys.DESCRIBE_CONFIGS, (short)4, bare)), (short)4);
        assertEquals(List.of(), response.results().get(0).configs().get(0).synonyms());
        assertNull(response.results().get(0).configs().get(0).documentation());
    }

    private static AlterConfigsRequestData.AlterConfigsResource legacy(final byte type, final String name, final String... kv)
    {
        final AlterConfigsRequestData.AlterConfigsResource resource = new AlterConfigsRequestData.AlterConfigsResource()
            .setResourceType(type).setResourceName(name);
        for (int i = 0; i < kv.length; i += 2)
        {
            resource.configs().add(new AlterConfigsRequestData.AlterableConfig().setName(kv[i]).setValue(kv[i + 1]));
        }
        return resource;
    }

    private List<AlterConfigsResponseData.AlterConfigsResourceResponse> alterConfigs(final short version, final boolean validateOnly,
        final AlterConfigsRequestData.AlterConfigsResource... resources) throws Exception
    {
        final AlterConfigsRequestData request = new AlterConfigsRequestData().setValidateOnly(validateOnly);
        for (final AlterConfigsRequestData.AlterConfigsResource r : resources)
        {
            request.resources().add(r);
        }
        final AlterConfigsResponseData response = new AlterConfigsResponseData(
            new ByteBufferAccessor(roundTrip(ApiKeys.ALTER_CONFIGS, version, request)), version);
        assertEquals(resources.length, response.responses().size());
        for (int i = 0; i < resources.length; i++)
        {
            assertEquals(resources[i].resourceName(), response.responses().get(i).resourceName());
            assertEquals(resources[i].resourceType(), response.responses().get(i).resourceType());
        }
        return response.responses();
    }

    private static void assertError(final Errors error, final String message,
        final AlterConfigsResponseData.AlterConfigsResourceResponse response)
    {
        assertEquals(error.code(), response.errorCode(), response.toString());
        assertEquals(message, response.errorMessage(), response.toString());
    }

    private Map<String, String> overrides(final String topic)
    {
        return broker.broker.topics().topic(topic).overrides;
    }

    @Test
    void alterConfigsEveryVersionReplacesTheWholeOverrideSet() throws Exception
    {
        for (short version = 0; version <= 2; version++)
        {
            final String segmentMs = Integer.toString(100_000 + version);
            List<AlterConfigsResponseData.AlterConfigsResourceResponse> r = alterConfigs(version, false,
                legacy(TOPIC, "wired", "segment.ms", segmentMs, "max.message.bytes", "5000"));
            assertError(Errors.NONE, null, r.get(0));
            assertEquals(Map.of("segment.ms", segmentMs, "max.message.bytes", "5000"), overrides("wired"), "retention.ms removed");
            assertEquals(172_800_000L, broker.broker.topics().topic("wired").partitions[0].log.config().retentionMs);

            r = alterConfigs(version, true, legacy(TOPIC, "wired", "retention.ms", "1"));
            assertError(Errors.NONE, null, r.get(0));
            assertEquals(Map.of("segment.ms", segmentMs, "max.message.bytes", "5000"), overrides("wired"), "validate only");

            final short v = version;
            assertError(Errors.INVALID_CONFIG, "Invalid value 0 for configuration segment.ms: Value must be at least 1",
                alterConfigs(v, false, legacy(TOPIC, "wired", "segment.ms", "0")).get(0));
            assertError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'missing' does not exist.",
                alterConfigs(v, false, legacy(TOPIC, "missing", "segment.ms", "1000")).get(0));
            // Kafka's controller checks the config before it looks for the topic
            assertError(Errors.INVALID_CONFIG, "Invalid value bad for configuration segment.ms: Not a number of type LONG",
                alterConfigs(v, false, legacy(TOPIC, "missing", "segment.ms", "bad")).get(0));
            r = alterConfigs(v, false, legacy(TOPIC, "wired", "segment.ms", "1000"), legacy(BROKER, "1"),
                legacy(TOPIC, "wired", "segment.ms", "2000"));
            assertError(Errors.INVALID_REQUEST, "Each resource must appear at most once.", r.get(0));
            assertError(Errors.NONE, null, r.get(1));
            assertError(Errors.INVALID_REQUEST, "Each resource must appear at most once.", r.get(2));
            assertError(Errors.INVALID_REQUEST, "Default topic resources are not allowed.",
                alterConfigs(v, false, legacy(TOPIC, "", "segment.ms", "1000")).get(0));
            assertError(Errors.INVALID_TOPIC_EXCEPTION,
                "Topic name \"bad name\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'",
                alterConfigs(v, false, legacy(TOPIC, "bad name", "segment.ms", "1000")).get(0));
            assertError(Errors.INVALID_REQUEST, "Error due to duplicate config keys",
                alterConfigs(v, false, legacy(TOPIC, "wired", "segment.ms", "1000", "segment.ms", "2000")).get(0));
            assertError(Errors.INVALID_REQUEST, "Null value not supported for : segment.ms",
                alterConfigs(v, false, legacy(TOPIC, "wired", "segment.ms", null)).get(0));
            assertError(Errors.INVALID_CONFIG, "Unknown topic config name: no.such.config",
                alterConfigs(v, false, legacy(TOPIC, "wired", "no.such.config", "1")).get(0));
            r = alterConfigs(v, false, legacy(BROKER, "1", "log.retention.hours", "1", "num.partitions", "3"));
            assertError(Errors.INVALID_REQUEST, "Cannot update these configs dynamically: [log.retention.hours, num.partitions]", r.get(0));
            assertError(Errors.INVALID_REQUEST, "Unexpected broker id, expected 1, but received 2",
                alterConfigs(v, false, legacy(BROKER, "2", "log.retention.hours", "1")).get(0));
            r = alterConfigs(v, false, legacy(GROUP, "g", "consumer.session.timeout.ms", "45000"), legacy((byte)0, "u", "a", "b"));
            assertEquals(Errors.INVALID_REQUEST.code(), r.get(0).errorCode());
            assertEquals(Errors.INVALID_REQUEST.code(), r.get(1).errorCode());
            assertEquals(Map.of("segment.ms", segmentMs, "max.message.bytes", "5000"), overrides("wired"), "nothing changed");
        }
    }

    private static IncrementalAlterConfigsRequestData.AlterConfigsResource incremental(final byte type, final String name,
        final Object... opKeyValue)
    {
        final IncrementalAlterConfigsRequestData.AlterConfigsResource resource = new IncrementalAlterConfigsRequestData
            .AlterConfigsResource().setResourceType(type).setResourceName(name);
        for (int i = 0; i < opKeyValue.length; i += 3)
        {
            resource.configs().add(new IncrementalAlterConfigsRequestData.AlterableConfig()
                .setConfigOperation(((Number)opKeyValue[i]).byteValue()).setName((String)opKeyValue[i + 1])
                .setValue((String)opKeyValue[i + 2]));
        }
        return resource;
    }

    private List<IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse> incrementalAlterConfigs(final short version,
        final boolean validateOnly, final IncrementalAlterConfigsRequestData.AlterConfigsResource... resources) throws Exception
    {
        final IncrementalAlterConfigsRequestData request = new IncrementalAlterConfigsRequestData().setValidateOnly(validateOnly);
        for (final IncrementalAlterConfigsRequestData.AlterConfigsResource r : resources)
        {
            request.resources().add(r);
        }
        final IncrementalAlterConfigsResponseData response = new IncrementalAlterConfigsResponseData(
            new ByteBufferAccessor(roundTrip(ApiKeys.INCREMENTAL_ALTER_CONFIGS, version, request)), version);
        assertEquals(resources.length, response.responses().size());
        for (int i = 0; i < resources.length; i++)
        {
            assertEquals(resources[i].resourceName(), response.responses().get(i).resourceName());
            assertEquals(resources[i].resourceType(), response.responses().get(i).resourceType());
        }
        return response.responses();
    }

    private static void assertError(final Errors error, final String message,
        final IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse response)
    {
        assertEquals(error.code(), response.errorCode(), response.toString());
        assertEquals(message, response.errorMessage(), response.toString());
    }

    @Test
    void incrementalAlterConfigsEveryVersion() throws Exception
    {
        final int set = 0;
        final int delete = 1;
        final int append = 2;
        final int subtract = 3;
        for (short version = 0; version <= 1; version++)
        {
            List<IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse> r = incrementalAlterConfigs(version, false,
                incremental(TOPIC, "wired", set, "segment.ms", "200000", delete, "retention.ms", null,
                    append, "cleanup.policy", "compact,delete", subtract, "follower.replication.throttled.replicas", "0:1"));
            assertError(Errors.NONE, null, r.get(0));
            assertEquals(Map.of("segment.ms", "200000", "cleanup.policy", "delete,compact",
                "follower.replication.throttled.replicas", ""), overrides("wired"));

            r = incrementalAlterConfigs(version, true, incremental(TOPIC, "wired", set, "segment.ms", "1"));
            assertError(Errors.NONE, null, r.get(0));
            assertEquals("200000", overrides("wired").get("segment.ms"), "validate only");

            final short v = version;
            assertError(Errors.INVALID_REQUEST, "Null value not supported for : segment.ms",
                incrementalAlterConfigs(v, false, incremental(TOPIC, "wired", set, "segment.ms", null)).get(0));
            assertError(Errors.INVALID_REQUEST, "Unknown operations type 9",
                incrementalAlterConfigs(v, false, incremental(TOPIC, "wired", 9, "segment.ms", "1000")).get(0));
            assertError(Errors.INVALID_CONFIG, "Can't SUBTRACT to key segment.ms because its type is not LIST.",
                incrementalAlterConfigs(v, false, incremental(TOPIC, "wired", subtract, "segment.ms", "1000")).get(0));
            assertError(Errors.INVALID_CONFIG, "Can't APPEND to key no.such.config because its type is not LIST.",
                incrementalAlterConfigs(v, false, incremental(TOPIC, "wired", append, "no.such.config", "x")).get(0));
            assertError(Errors.INVALID_REQUEST, "Error due to duplicate config keys", incrementalAlterConfigs(v, false,
                incremental(TOPIC, "wired", set, "segment.ms", "1000", delete, "segment.ms", null)).get(0));
            assertError(Errors.INVALID_CONFIG, "Invalid value bad for configuration segment.ms: Not a number of type LONG",
                incrementalAlterConfigs(v, false, incremental(TOPIC, "missing", set, "segment.ms", "bad")).get(0));
            assertError(Errors.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'missing' does not exist.",
                incrementalAlterConfigs(v, false, incremental(TOPIC, "missing", delete, "segment.ms", null)).get(0));
            assertError(Errors.INVALID_CONFIG, "conflict topic config setting min.compaction.lag.ms (100) > max.compaction.lag.ms (10)",
                incrementalAlterConfigs(v, false, incremental(TOPIC, "wired", set, "min.compaction.lag.ms", "100",
                    set, "max.compaction.lag.ms", "10")).get(0));
            // a request string cannot exceed Kafka's 32767-byte limit, but an APPEND can make a value that does
            final StringBuilder half = new StringBuilder();
            final StringBuilder otherHalf = new StringBuilder();
            for (int p = 0; half.length() < 20_000; p++)
            {
                half.append(half.length() == 0 ? "" : ",").append(p).append(":1");
                otherHalf.append(otherHalf.length() == 0 ? "" : ",").append(p).append(":2");
            }
            assertError(Errors.NONE, null, incrementalAlterConfigs(v, false,
                incremental(TOPIC, "wired", set, "leader.replication.throttled.replicas", half.toString())).get(0));
            assertError(Errors.INVALID_CONFIG,
                "The configuration value cannot be added because it exceeds the maximum value size of 32767 bytes.",
                incrementalAlterConfigs(v, false,
                    incremental(TOPIC, "wired", append, "leader.replication.throttled.replicas", otherHalf.toString())).get(0));
            assertError(Errors.NONE, null, incrementalAlterConfigs(v, false,
                incremental(TOPIC, "wired", delete, "leader.replication.throttled.replicas", null)).get(0));
            r = incrementalAlterConfigs(v, false,
                incremental(BROKER, "1", delete, "log.retention.ms", null),
                incremental(BROKER, "x", set, "log.retention.hours", "1"),
                incremental(BROKER, "", set, "num.partitions", "3", set, "log.retention.hours", "1"));
            assertError(Errors.NONE, null, r.get(0));
            assertError(Errors.INVALID_REQUEST, "Node id must be an integer, but it is: x", r.get(1));
            assertError(Errors.INVALID_REQUEST, "Cannot update these configs dynamically: [num.partitions, log.retention.hours]",
                r.get(2));
            assertError(Errors.INVALID_CONFIG, "Config value append is not allowed for config key: log.retention.hours",
                incrementalAlterConfigs(v, false, incremental(BROKER, "1", append, "log.retention.hours", "1")).get(0));
            assertEquals(Map.of("segment.ms", "200000", "cleanup.policy", "delete,compact",
                "follower.replication.throttled.replicas", ""), overrides("wired"), "nothing changed");

            // back to where the next version starts
            r = incrementalAlterConfigs(version, false, incremental(TOPIC, "wired", delete, "segment.ms", null,
                delete, "cleanup.policy", null, delete, "follower.replication.throttled.replicas", null,
                set, "retention.ms", "60000"));
            assertError(Errors.NONE, null, r.get(0));
            assertEquals(Map.of("retention.ms", "60000"), overrides("wired"));
        }
    }
}
