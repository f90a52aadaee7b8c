package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.config.DynamicBrokerConfigs;
import io.ferrite.broker.config.ConfigEntries;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.DescribeConfigsRequestDecoder;
import io.ferrite.wire.message.DescribeConfigsResponseEncoder;
import io.ferrite.wire.message.StringArrayDecoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * DescribeConfigs (v1 to v4) for TOPIC and BROKER resources, answered per resource in request
 * order as Kafka 4.4 answers them: a topic's configs with their sources and synonym chains
 * ({@link ConfigEntries}), an unknown topic UNKNOWN_TOPIC_OR_PARTITION, an illegal topic name
 * INVALID_TOPIC_EXCEPTION; the broker resource named by this node's id gives every broker config
 * Ferrite knows (dynamic values with their sources), the empty name the cluster-wide dynamic
 * defaults set, another id or a name that is not a number INVALID_REQUEST. Configuration keys
 * null or empty mean all; names Ferrite does not know are left out, as Kafka leaves them out.
 * Synonyms only when asked for (v1+), documentation only when asked for (v3+). In cluster mode a topic's configs are
 * the metadata image's ({@link #topicsFrom}) and the broker's dynamic configs follow the image
 * ({@link DynamicBrokerConfigs#follow}), so every node gives the same answer, as Kafka's brokers do.
 *
 * <p>An admin request: it runs on the network thread and allocates freely.
 */
public final class DescribeConfigsHandler implements RequestHandler
{
    static final byte TOPIC = 2;
    static final byte BROKER = 4;

    /**
     * In cluster mode, the topics whose configs are the metadata image's (Kafka's brokers answer DescribeConfigs from
     * the image, so every node answers for every topic, replicas here or not).
     */
    public interface ImageTopics
    {
        /** Whether {@code topic}'s configs are the image's (else this node's own topic's). */
        boolean fromImage(String topic);

        /** {@code topic}'s config overrides in the image; null when the image has no such topic. */
        Map<String, String> configs(String topic);
    }

    private final TopicRegistry topics;
    private ImageTopics image;
    private final int nodeId;
    private final ConfigEntries entries;
    private final DescribeConfigsRequestDecoder request = new DescribeConfigsRequestDecoder();
    private final DescribeConfigsResponseEncoder response = new DescribeConfigsResponseEncoder();

    public DescribeConfigsHandler(final TopicRegistry topics, final DynamicBrokerConfigs config)
    {
        this.topics = topics;
        this.nodeId = config.state().statics().nodeId();
        this.entries = new ConfigEntries(config);
    }

    /** In cluster mode: the topics' configs come from {@code image} ({@link ImageTopics#fromImage}). */
    public DescribeConfigsHandler topicsFrom(final ImageTopics image)
    {
        this.image = image;
        return this;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final boolean synonyms = request.includeSynonyms();
        final boolean documentation = request.includeDocumentation();
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        final DescribeConfigsResponseEncoder.DescribeConfigsResult result = response.results(request.resources().elementCount());
        for (final DescribeConfigsRequestDecoder.DescribeConfigsResource r = request.resources(); r.hasNext(); )
        {
            r.next();
            final byte type = r.resourceType();
            final String name = r.resourceName();
            final Predicate<String> wanted = wanted(r.configurationKeys());
            result.next();
            short error = Errors.NONE;
            String message = "";
            List<ConfigEntries.Entry> configs = List.of();
            // Kafka: DESCRIBE_CONFIGS on the topic, group or cluster first, refused with the error's own message
            final short refused = Access.configResource(connection, AclCodes.DESCRIBE_CONFIGS, type, name);
            if (refused != Errors.NONE)
            {
                error = refused;
                message = Access.message(refused);
            }
            else if (type == TOPIC)
            {
                final String illegal = TopicNames.illegal(name);
                final boolean imaged = illegal == null && image != null && image.fromImage(name);
                final Map<String, String> imageConfigs = imaged ? image.configs(name) : null;
                final Topic topic = illegal == null && !imaged ? topics.topic(name) : null;
                if (illegal != null)
                {
                    error = Errors.INVALID_TOPIC_EXCEPTION;
                    message = illegal;
                }
                else if (imaged)
                {
                    if (imageConfigs == null)
                    {
                        error = Errors.UNKNOWN_TOPIC_OR_PARTITION; // Kafka sets no message here
                    }
                    else
                    {
                        configs = entries.topic(imageConfigs, wanted);
                    }
                }
                else if (PartitionLookup.live(topic) == null)
                {
                    error = PartitionLookup.notFound(topic, false); // Kafka sets no message here
                }
                else
                {
                    configs = entries.topic(topic.overrides, wanted);
                }
            }
            else if (type == BROKER)
            {
                if (!name.isEmpty())
                {
                    message = brokerNameProblem(name, nodeId);
                    if (message == null)
                    {
                        configs = entries.broker(wanted);
                        message = "";
                    }
                    else
                    {
                        error = Errors.INVALID_REQUEST;
                    }
                }
                else
                {
                    configs = entries.clusterDefault(wanted); // the cluster-wide dynamic defaults
                }
            }
            else
            {
                error = Errors.INVALID_REQUEST;
                message = "Unsupported resource type: " + ConfigChanges.typeName(type);
            }
            result.errorCode(error).errorMessage(message).resourceType(type).resourceName(name);
            final DescribeConfigsResponseEncoder.DescribeConfigsResourceResult config = result.configs(configs.size());
            for (final ConfigEntries.Entry e : configs)
            {
                config.next().name(e.name()).value(e.value()).readOnly(e.readOnly()).configSource(e.source())
                    .isSensitive(e.sensitive());
                final List<ConfigEntries.Synonym> chain = synonyms ? e.synonyms() : List.of();
                final DescribeConfigsResponseEncoder.DescribeConfigsSynonym synonym = config.synonyms(chain.size());
                for (final ConfigEntries.Synonym s : chain)
                {
                    synonym.next().name(s.name()).value(s.value()).source(s.source());
                }
                config.configType(e.type()).documentation(documentation ? e.documentation() : null);
            }
        }
        return outOffset + response.finish();
    }

    /**
     * Why a broker resource name does not name this node (Kafka's messages), or null when it does.
     */
    static String brokerNameProblem(final String name, final int nodeId)
    {
        final int id;
        try
        {
            id = Integer.parseInt(name);
        }
        catch (final NumberFormatException ex)
        {
            return "Broker id must be an integer, but it is: " + name;
        }
        return id == nodeId ? null :
            "Unexpected broker id, expected " + nodeId + " or empty string, but received " + name;
    }

    /** Null or empty keys: every config; otherwise the ones named. */
    private static Predicate<String> wanted(final StringArrayDecoder keys)
    {
        if (keys.elementCount() <= 0)
        {
            return name -> true;
        }
        final Set<String> names = new HashSet<>();
        while (keys.hasNext())
        {
            names.add(keys.next().value());
        }
        return names::contains;
    }
}
