package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.OffsetFetchRequestDecoder;
import io.ferrite.wire.message.OffsetFetchResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.Map;

/** OffsetFetch, one group (v1-7) or several (v8+); no committed offset is -1 with an empty metadata. */
final class OffsetFetchHandler implements RequestHandler
{
    private final GroupCoordinator coordinator;
    private final TopicRegistry topics;
    private final OffsetFetchRequestDecoder request = new OffsetFetchRequestDecoder();
    private final OffsetFetchResponseEncoder response = new OffsetFetchResponseEncoder();

    OffsetFetchHandler(final GroupCoordinator coordinator, final TopicRegistry topics)
    {
        this.coordinator = coordinator;
        this.topics = topics;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        if (version < 8)
        {
            final String groupId = request.groupId();
            final OffsetFetchRequestDecoder.OffsetFetchRequestTopic t = request.topics();
            if (t.isNullArray())
            {
                final Map<String, Map<Integer, GroupCoordinator.Committed>> all = coordinator.committed(groupId);
                final OffsetFetchResponseEncoder.OffsetFetchResponseTopic rt = response.topics(all.size());
                for (final Map.Entry<String, Map<Integer, GroupCoordinator.Committed>> e : all.entrySet())
                {
                    final OffsetFetchResponseEncoder.OffsetFetchResponsePartition rp = rt.next().name(e.getKey())
                        .partitions(e.getValue().size());
                    for (final Map.Entry<Integer, GroupCoordinator.Committed> c : e.getValue().entrySet())
                    {
                        rp.next().partitionIndex(c.getKey()).committedOffset(c.getValue().offset())
                            .committedLeaderEpoch(c.getValue().leaderEpoch()).metadata(c.getValue().metadata())
                            .errorCode(Errors.NONE);
                    }
                }
            }
            else
            {
                final OffsetFetchResponseEncoder.OffsetFetchResponseTopic rt = response.topics(t.elementCount());
                while (t.hasNext())
                {
                    t.next();
                    final String name = t.name();
                    final OffsetFetchResponseEncoder.OffsetFetchResponsePartition rp = rt.next().name(name)
                        .partitions(t.partitionIndexesCount());
                    for (int i = 0; i < t.partitionIndexesCount(); i++)
                    {
                        final int partition = t.partitionIndexes(i);
                        final GroupCoordinator.Committed c = coordinator.committed(groupId, name, partition);
                        rp.next().partitionIndex(partition).committedOffset(c == null ? -1 : c.offset())
                            .committedLeaderEpoch(c == null ? -1 : c.leaderEpoch()).metadata(c == null ? "" : c.metadata())
                            .errorCode(Errors.NONE);
                    }
                }
            }
            response.errorCode(Errors.NONE);
            return outOffset + response.finish();
        }
        final OffsetFetchRequestDecoder.OffsetFetchRequestGroup g = request.groups();
        final OffsetFetchResponseEncoder.OffsetFetchResponseGroup rg = response.groups(g.elementCount());
        while (g.hasNext())
        {
            g.next();
            final String groupId = g.groupId();
            rg.next().groupId(groupId);
            final OffsetFetchRequestDecoder.OffsetFetchRequestTopics t = g.topics();
            if (t.isNullArray())
            {
                final Map<String, Map<Integer, GroupCoordinator.Committed>> all = coordinator.committed(groupId);
                final OffsetFetchResponseEncoder.OffsetFetchResponseTopics rt = rg.topics(all.size());
                for (final Map.Entry<String, Map<Integer, GroupCoordinator.Committed>> e : all.entrySet())
                {
                    rt.next();
                    if (version >= 10)
                    {
                        final Topic topic = topics.topic(e.getKey());
                        rt.topicId(topic == null ? 0 : topic.idMostSignificantBits, topic == null ? 0 : topic.idLeastSignificantBits);
                    }
                    else
                    {
                        rt.name(e.getKey());
                    }
                    final OffsetFetchResponseEncoder.OffsetFetchResponsePartitions rp = rt.partitions(e.getValue().size());
                    for (final Map.Entry<Integer, GroupCoordinator.Committed> c : e.getValue().entrySet())
                    {
                        rp.next().partitionIndex(c.getKey()).committedOffset(c.getValue().offset())
                            .committedLeaderEpoch(c.getValue().leaderEpoch()).metadata(c.getValue().metadata())
                            .errorCode(Errors.NONE);
                    }
                }
            }
            else
            {
                final OffsetFetchResponseEncoder.OffsetFetchResponseTopics rt = rg.topics(t.elementCount());
                while (t.hasNext())
                {
                    t.next();
                    rt.next();
                    final String name;
                    if (version >= 10)
                    {
                        final Topic topic = topics.topic(t.topicIdMostSignificantBits(), t.topicIdLeastSignificantBits());
                        name = topic == null ? null : topic.name;
                        rt.topicId(t.topicIdMostSignificantBits(), t.topicIdLeastSignificantBits());
                    }
                    else
                    {
                        name = t.name();
                        rt.name(name);
                    }
                    final OffsetFetchResponseEncoder.OffsetFetchResponsePartitions rp = rt.partitions(t.partitionIndexesCount());
                    for (int i = 0; i < t.partitionIndexesCount(); i++)
                    {
                        final int partition = t.partitionIndexes(i);
                        final GroupCoordinator.Committed c = name == null ? null : coordinator.committed(groupId, name, partition);
                        rp.next().partitionIndex(partition).committedOffset(c == null ? -1 : c.offset())
                            .committedLeaderEpoch(c == null ? -1 : c.leaderEpoch()).metadata(c == null ? "" : c.metadata())
                            .errorCode(name == null ? Errors.UNKNOWN_TOPIC_ID : Errors.NONE);
                    }
                }
            }
            rg.errorCode(groupId == null || groupId.isEmpty() ? Errors.INVALID_GROUP_ID : Errors.NONE);
        }
        return outOffset + response.finish();
    }
}
