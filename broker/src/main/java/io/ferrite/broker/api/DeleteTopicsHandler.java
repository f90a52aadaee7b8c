package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.DeleteTopicsRequestDecoder;
import io.ferrite.wire.message.DeleteTopicsResponseEncoder;
import io.ferrite.wire.message.StringArrayDecoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;

/**
 * DeleteTopics, by name (v1-5) or by name or id (v6+). A deleted topic disappears at once for new
 * requests; its logs are deleted on their owner threads a moment later, when requests that found it
 * before are done with it. Errors as Kafka's: an unknown name UNKNOWN_TOPIC_OR_PARTITION, an unknown
 * id UNKNOWN_TOPIC_ID, a topic named twice (or by name and id at once) INVALID_REQUEST,
 * {@code delete.topic.enable=false} TOPIC_DELETION_DISABLED.
 */
public final class DeleteTopicsHandler implements RequestHandler
{
    private final TopicRegistry topics;
    private final TopicRegistry.OwnerExecutor owners;
    private final ScheduledExecutorService scheduler;
    private final long delayMs;
    private final boolean enabled;
    private final DeleteTopicsRequestDecoder request = new DeleteTopicsRequestDecoder();
    private final DeleteTopicsResponseEncoder response = new DeleteTopicsResponseEncoder();

    public DeleteTopicsHandler(final TopicRegistry topics, final TopicRegistry.OwnerExecutor owners,
        final ScheduledExecutorService scheduler, final long delayMs, final boolean enabled)
    {
        this.topics = topics;
        this.owners = owners;
        this.scheduler = scheduler;
        this.delayMs = delayMs;
        this.enabled = enabled;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        final Set<String> seen = new HashSet<>();
        final Set<String> repeated = new HashSet<>();
        if (version >= 6)
        {
            final DeleteTopicsRequestDecoder.DeleteTopicState t = request.topics();
            while (t.hasNext())
            {
                t.next();
                final Topic topic = t.nameIsNull() ? topics.topic(t.topicIdMostSignificantBits(), t.topicIdLeastSignificantBits()) : null;
                final String key = t.nameIsNull() ? (topic != null ? topic.name : TopicRegistry.encode(
                    t.topicIdMostSignificantBits(), t.topicIdLeastSignificantBits())) : t.name();
                if (!seen.add(key))
                {
                    repeated.add(key);
                }
            }
            final DeleteTopicsRequestDecoder.DeleteTopicState t2 = request.topics();
            final DeleteTopicsResponseEncoder.DeletableTopicResult r = response.responses(t2.elementCount());
            while (t2.hasNext())
            {
                t2.next();
                r.next();
                final boolean byId = t2.nameIsNull();
                final long msb = t2.topicIdMostSignificantBits();
                final long lsb = t2.topicIdLeastSignificantBits();
                if (!byId && (msb != 0 || lsb != 0))
                {
                    r.name(t2.name()).topicId(msb, lsb).errorCode(Errors.INVALID_REQUEST)
                        .errorMessage("Both topic name and topic id were provided");
                    continue;
                }
                final Topic topic = byId ? topics.topic(msb, lsb) : topics.topic(t2.name());
                final String key = byId ? (topic != null ? topic.name : TopicRegistry.encode(msb, lsb)) : t2.name();
                if (PartitionLookup.live(topic) == null)
                {
                    r.name(byId ? null : t2.name()).topicId(msb, lsb)
                        .errorCode(PartitionLookup.notFound(PartitionLookup.live(topic), byId))
                        .errorMessage(byId ? "This server does not host this topic ID." : "This server does not host this topic-partition.");
                    continue;
                }
                r.name(topic.name).topicId(topic.idMostSignificantBits, topic.idLeastSignificantBits);
                delete(r, topic, repeated.contains(key));
            }
        }
        else
        {
            final StringArrayDecoder names = request.topicNames();
            while (names.hasNext())
            {
                final String name = names.next().value();
                if (!seen.add(name))
                {
                    repeated.add(name);
                }
            }
            final StringArrayDecoder names2 = request.topicNames();
            final DeleteTopicsResponseEncoder.DeletableTopicResult r = response.responses(names2.elementCount());
            while (names2.hasNext())
            {
                final String name = names2.next().value();
                r.next().name(name);
                final Topic topic = topics.topic(name);
                if (PartitionLookup.live(topic) == null)
                {
                    r.errorCode(PartitionLookup.notFound(topic, false)).errorMessage("This server does not host this topic-partition.");
                    continue;
                }
                delete(r, topic, repeated.contains(name));
            }
        }
        return outOffset + response.finish();
    }

    private void delete(final DeleteTopicsResponseEncoder.DeletableTopicResult r, final Topic topic, final boolean repeated)
    {
        if (repeated)
        {
            r.errorCode(Errors.INVALID_REQUEST).errorMessage("Duplicate topic name.");
        }
        else if (!enabled)
        {
            r.errorCode(Errors.TOPIC_DELETION_DISABLED).errorMessage("Topic deletion is disabled.");
        }
        else if (topic.isInternal())
        {
            r.errorCode(Errors.INVALID_TOPIC_EXCEPTION).errorMessage("Cannot delete internal topic " + topic.name);
        }
        else
        {
            topics.delete(topic, owners, scheduler, delayMs);
            r.errorCode(Errors.NONE).errorMessage(null);
        }
    }
}
