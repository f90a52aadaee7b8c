package io.ferrite.broker.cluster;

import io.ferrite.broker.e2e.RawClient;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Requests to one node itself, over its own socket (kafka-clients' Admin sends a request to whichever broker it likes
 * best once it knows the cluster, so it cannot say what one given node answers).
 */
final class NodeRequests
{
    private static final short METADATA_VERSION = 12;
    private static final short DESCRIBE_CONFIGS_VERSION = 4;
    private static final short INCREMENTAL_ALTER_CONFIGS_VERSION = 1;

    private NodeRequests()
    {
    }

    /** The node's Metadata answer for {@code topic}, auto-creation allowed or not. */
    static MetadataResponseData.MetadataResponseTopic topic(final int port, final String topic, final boolean autoCreate)
        throws IOException
    {
        try (RawClient raw = new RawClient(port))
        {
            final MetadataRequestData request = new MetadataRequestData().setAllowAutoTopicCreation(autoCreate)
                .setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName(topic)));
            return new MetadataResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.METADATA, METADATA_VERSION, request)),
                METADATA_VERSION).topics().find(topic);
        }
    }

    /**
     * Partition 0 of {@code topic} as the node describes it: "leader L epoch E replicas [..] isr [..] offline [..]",
     * or its error.
     */
    static String partition0(final int port, final String topic) throws IOException
    {
        final MetadataResponseData.MetadataResponseTopic t = topic(port, topic, false);
        if (t.errorCode() != 0 || t.partitions().isEmpty())
        {
            return "error " + t.errorCode();
        }
        final MetadataResponseData.MetadataResponsePartition p = t.partitions().get(0);
        return "leader " + p.leaderId() + " epoch " + p.leaderEpoch() + " replicas " + p.replicaNodes().stream().sorted().toList() +
            " isr " + p.isrNodes().stream().sorted().toList() + " offline " + p.offlineReplicas().stream().sorted().toList();
    }

    /** The leader id in a {@link #partition0} description. */
    static int leader(final String description)
    {
        return Integer.parseInt(description.split(" ")[1]);
    }

    /** The leader epoch in a {@link #partition0} description. */
    static int epoch(final String description)
    {
        return Integer.parseInt(description.split(" ")[3]);
    }

    /** The node's own DescribeConfigs of one resource ({@code type}: Kafka's id), with synonyms. */
    static DescribeConfigsResponseData.DescribeConfigsResult describe(final int port, final byte type, final String name)
        throws IOException
    {
        try (RawClient raw = new RawClient(port))
        {
            final DescribeConfigsRequestData request = new DescribeConfigsRequestData().setIncludeSynonyms(true)
                .setResources(List.of(new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType(type)
                .setResourceName(name)));
            return new DescribeConfigsResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.DESCRIBE_CONFIGS,
                DESCRIBE_CONFIGS_VERSION, request)), DESCRIBE_CONFIGS_VERSION).results().get(0);
        }
    }

    /**
     * The node's own answer to an IncrementalAlterConfigs SET (or DELETE, {@code value} null) of one config of one
     * resource: "error E message M".
     */
    static String alter(final int port, final byte type, final String name, final String config, final String value)
        throws IOException
    {
        try (RawClient raw = new RawClient(port))
        {
            final IncrementalAlterConfigsRequestData.AlterableConfigCollection configs =
                new IncrementalAlterConfigsRequestData.AlterableConfigCollection();
            configs.add(new IncrementalAlterConfigsRequestData.AlterableConfig().setName(config).setValue(value)
                .setConfigOperation(value == null ? (byte)1 : (byte)0));
            final IncrementalAlterConfigsRequestData.AlterConfigsResourceCollection resources =
                new IncrementalAlterConfigsRequestData.AlterConfigsResourceCollection();
            resources.add(new IncrementalAlterConfigsRequestData.AlterConfigsResource().setResourceType(type)
                .setResourceName(name).setConfigs(configs));
            final IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse answer =
                new IncrementalAlterConfigsResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.INCREMENTAL_ALTER_CONFIGS,
                INCREMENTAL_ALTER_CONFIGS_VERSION, new IncrementalAlterConfigsRequestData().setResources(resources))),
                INCREMENTAL_ALTER_CONFIGS_VERSION).responses().get(0);
            return "error " + answer.errorCode() + " message " + answer.errorMessage();
        }
    }

    /** The node's own DescribeConfigs of {@code topic}: its configs that are the topic's overrides. */
    static Map<String, String> topicOverrides(final int port, final String topic) throws IOException
    {
        try (RawClient raw = new RawClient(port))
        {
            final DescribeConfigsRequestData request = new DescribeConfigsRequestData().setResources(List.of(
                new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte)2).setResourceName(topic)));
            final DescribeConfigsResponseData response = new DescribeConfigsResponseData(new ByteBufferAccessor(
                raw.exchange(ApiKeys.DESCRIBE_CONFIGS, DESCRIBE_CONFIGS_VERSION, request)), DESCRIBE_CONFIGS_VERSION);
            final Map<String, String> overrides = new TreeMap<>();
            for (final DescribeConfigsResponseData.DescribeConfigsResourceResult c : response.results().get(0).configs())
            {
                if (c.configSource() == 1) // DYNAMIC_TOPIC_CONFIG
                {
                    overrides.put(c.name(), c.value());
                }
            }
            return overrides;
        }
    }
}
