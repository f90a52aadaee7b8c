package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.MetadataRequestDecoder;
import io.ferrite.wire.message.MetadataResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.Collection;

/**
 * Metadata: this one node as the only broker, the controller and the leader of every partition,
 * with itself as the only replica and in-sync replica. Requested topics that do not exist are
 * UNKNOWN_TOPIC_OR_PARTITION (by name) or UNKNOWN_TOPIC_ID (by id) — unless the request allows
 * auto-creation (always before v4) and {@code auto.create.topics.enable} is on: then a topic named
 * by the request is created with {@code num.partitions} partitions and the broker's topic defaults,
 * and an illegal name is INVALID_TOPIC_EXCEPTION, as Kafka answers. Kafka answers a topic it is still
 * creating with LEADER_NOT_AVAILABLE and the client asks again; here creation is done before the
 * answer, so the topic is described at once.
 */
public final class MetadataHandler implements RequestHandler
{
    /** Kafka's value for "not requested" authorized operations. */
    private static final int AUTHORIZED_OPERATIONS_OMITTED = Integer.MIN_VALUE;

    private final TopicRegistry topics;
    private final int nodeId;
    private final String clusterId;
    private boolean autoCreate;
    private int autoCreatePartitions = 1;
    private volatile String host;
    private volatile int port;
    private final MetadataRequestDecoder request = new MetadataRequestDecoder();
    private final MetadataResponseEncoder response = new MetadataResponseEncoder();

    public MetadataHandler(final TopicRegistry topics, final int nodeId, final String clusterId)
    {
        this.topics = topics;
        this.nodeId = nodeId;
        this.clusterId = clusterId;
    }

    /** Kafka's {@code auto.create.topics.enable} and {@code num.partitions}. */
    public MetadataHandler autoCreate(final boolean enabled, final int partitions)
    {
        this.autoCreate = enabled;
        this.autoCreatePartitions = partitions;
        return this;
    }

    public String advertisedHost()
    {
        return host;
    }

    public int advertisedPort()
    {
        return port;
    }

    /** The address clients are told to connect to (known once the listener is bound). */
    public MetadataHandler advertise(final String host, final int port)
    {
        this.host = host;
        this.port = port;
        return this;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final MetadataRequestDecoder.MetadataRequestTopic requested = request.topics();
        final boolean all = requested.isNullArray() || (version == 0 && requested.elementCount() == 0);

        response.wrap(out, outOffset, version).throttleTimeMs(0);
        response.brokers(1).next().nodeId(nodeId).host(host).port(port).rack((CharSequence)null);
        response.clusterId(clusterId).controllerId(nodeId);
        if (all)
        {
            final Collection<Topic> list = topics.topics();
            final MetadataResponseEncoder.MetadataResponseTopic t = response.topics(list.size());
            for (final Topic topic : list)
            {
                describe(t.next(), topic);
            }
        }
        else
        {
            final MetadataResponseEncoder.MetadataResponseTopic t = response.topics(requested.elementCount());
            while (requested.hasNext())
            {
                requested.next();
                final boolean byName = !requested.nameIsNull();
                Topic topic = PartitionLookup.find(topics, !byName, requested.topicIdMostSignificantBits(),
                    requested.topicIdLeastSignificantBits(), in, requested.nameOffset(), requested.nameLength());
                // live first: a deleted topic named by id is UNKNOWN_TOPIC_ID, as in Fetch
                short error = PartitionLookup.notFound(PartitionLookup.live(topic), !byName);
                if (PartitionLookup.live(topic) == null && byName && autoCreate && (version < 4 || request.allowAutoTopicCreation()))
                {
                    final String name = requested.name();
                    if (TopicNames.illegal(name) != null)
                    {
                        error = Errors.INVALID_TOPIC_EXCEPTION;
                    }
                    else
                    {
                        topic = create(name);
                        error = topic == null ? Errors.UNKNOWN_TOPIC_OR_PARTITION : Errors.NONE;
                    }
                }
                t.next();
                if (PartitionLookup.live(topic) == null)
                {
                    t.errorCode(error);
                    if (byName)
                    {
                        t.name(in, requested.nameOffset(), requested.nameLength());
                    }
                    else
                    {
                        t.name((CharSequence)null);
                    }
                    t.topicId(requested.topicIdMostSignificantBits(), requested.topicIdLeastSignificantBits()).isInternal(false)
                        .partitions(0);
                    t.topicAuthorizedOperations(AUTHORIZED_OPERATIONS_OMITTED);
                }
                else
                {
                    describe(t, topic);
                }
            }
        }
        response.clusterAuthorizedOperations(AUTHORIZED_OPERATIONS_OMITTED);
        return outOffset + response.finish();
    }

    /** Creates a topic a Metadata request names; another request may have created it meanwhile. */
    private Topic create(final String name)
    {
        try
        {
            return topics.create(name, autoCreatePartitions, java.util.Map.of());
        }
        catch (final IllegalArgumentException exists)
        {
            return topics.topic(name);
        }
        catch (final java.io.IOException | RuntimeException ex)
        {
            org.slf4j.LoggerFactory.getLogger(MetadataHandler.class).error("auto-creating topic {} failed", name, ex);
            return null;
        }
    }

    private void describe(final MetadataResponseEncoder.MetadataResponseTopic t, final Topic topic)
    {
        t.errorCode(Errors.NONE).name(topic.name).topicId(topic.idMostSignificantBits, topic.idLeastSignificantBits)
            .isInternal(topic.isInternal());
        final MetadataResponseEncoder.MetadataResponsePartition p = t.partitions(topic.partitions.length);
        for (int i = 0; i < topic.partitions.length; i++)
        {
            p.next().errorCode(Errors.NONE).partitionIndex(i).leaderId(nodeId).leaderEpoch(0);
            p.replicaNodes(1).addInt32(nodeId);
            p.isrNodes(1).addInt32(nodeId);
            p.offlineReplicas(0);
        }
        t.topicAuthorizedOperations(AUTHORIZED_OPERATIONS_OMITTED);
    }
}
