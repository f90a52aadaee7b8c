package io.ferrite.broker.group;

import io.ferrite.broker.acl.Access;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.OffsetFetchRequestDecoder;
import io.ferrite.wire.message.OffsetFetchResponseEncoder;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * OffsetFetch, one group (v1-7) or several (v8+); no committed offset is -1 with an empty metadata.
 * The request is decoded into the groups, topics and partitions asked (topic ids resolved to names
 * here, from the published topics), the agent reads their committed offsets, and the response is
 * written from what it read. Offsets pending in a transaction are never returned; with RequireStable
 * (v7+, the Java consumer's under read_committed) a partition with one is UNSTABLE_OFFSET_COMMIT,
 * offset -1 (the client retries), as Kafka's {@code fetchOffsets}/{@code fetchAllOffsets}.
 * With an authorizer, as Kafka 4.4's KafkaApis: DESCRIBE on each group (a refused group of several is answered
 * GROUP_AUTHORIZATION_FAILED in its slot and not read; a request of one group is refused whole), and DESCRIBE on each
 * topic: a topic named without it is answered TOPIC_AUTHORIZATION_FAILED per partition and not read, and left out of a
 * group's every-offset answer.
 */
final class OffsetFetchHandler extends GroupApiHandler<OffsetFetchRequestDecoder>
{
    private final TopicRegistry topics;
    private final OffsetFetchResponseEncoder response = new OffsetFetchResponseEncoder();

    OffsetFetchHandler(final GroupCoordinator coordinator, final TopicRegistry topics, final Runnable waker)
    {
        super(coordinator, waker, new OffsetFetchRequestDecoder());
        this.topics = topics;
    }

    /**
     * A group asked for: its id and its topics, or null for every offset it committed; {@code refused}: the principal may
     * not DESCRIBE it (answered GROUP_AUTHORIZATION_FAILED, not read).
     */
    record Asked(String groupId, List<AskedTopic> topics, boolean refused)
    {
        Asked(final String groupId, final List<AskedTopic> topics)
        {
            this(groupId, topics, false);
        }
    }

    /**
     * A topic asked for: its name (null for a topic id that is not known, v10+) and partitions; {@code refused}: the
     * principal may not DESCRIBE it (answered TOPIC_AUTHORIZATION_FAILED, not read).
     */
    record AskedTopic(String name, long idMsb, long idLsb, int[] partitions, boolean refused)
    {
    }

    /**
     * What the agent read for a group: every committed offset ({@code all}), or each asked partition's (null: none); or, for
     * a group not coordinated here now, the {@code error} it is refused with (NONE: read) and nothing read.
     */
    record Read(Map<String, Map<Integer, GroupCoordinator.Committed>> all, List<GroupCoordinator.Committed[]> asked, short error)
    {
    }

    @Override
    protected int handle(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final List<Asked> asked = new ArrayList<>();
        if (version < 8)
        {
            final OffsetFetchRequestDecoder.OffsetFetchRequestTopic t = request.topics();
            List<AskedTopic> askedTopics = null;
            if (!t.isNullArray())
            {
                askedTopics = new ArrayList<>();
                while (t.hasNext())
                {
                    t.next();
                    askedTopics.add(askedTopic(connection, t.name(), 0, 0, partitions(t.partitionIndexesCount(), t::partitionIndexes)));
                }
            }
            asked.add(new Asked(request.groupId(), askedTopics));
        }
        else
        {
            final OffsetFetchRequestDecoder.OffsetFetchRequestGroup g = request.groups();
            while (g.hasNext())
            {
                g.next();
                final OffsetFetchRequestDecoder.OffsetFetchRequestTopics t = g.topics();
                List<AskedTopic> askedTopics = null;
                if (!t.isNullArray())
                {
                    askedTopics = new ArrayList<>();
                    while (t.hasNext())
                    {
                        t.next();
                        final int[] partitions = partitions(t.partitionIndexesCount(), t::partitionIndexes);
                        if (version >= 10)
                        {
                            final Topic topic = topics.topic(t.topicIdMostSignificantBits(), t.topicIdLeastSignificantBits());
                            askedTopics.add(askedTopic(connection, topic == null ? null : topic.name, t.topicIdMostSignificantBits(),
                                t.topicIdLeastSignificantBits(), partitions));
                        }
                        else
                        {
                            askedTopics.add(askedTopic(connection, t.name(), 0, 0, partitions));
                        }
                    }
                }
                final String groupId = g.groupId();
                asked.add(new Asked(groupId, askedTopics, !Access.group(connection, AclCodes.DESCRIBE, groupId)));
            }
        }
        final boolean requireStable = version >= 7 && request.requireStable();
        // one group (the consumers' case): refused NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS when not coordinated here
        // (GroupOwnership); several groups in one request: each group not coordinated here so, as Kafka (the Admin retries it);
        // each refused DESCRIBE on its group answered so in its slot
        return asked.size() == 1 ? submitFor(AclCodes.DESCRIBE, asked.get(0).groupId(), connection, out, outOffset, (c, now) -> read(c, asked, requireStable),
            (o, at, reads) -> write(o, at, version, asked, reads, Errors.NONE, connection),
            (o, at, error) -> write(o, at, version, asked, null, error, connection)) :
            submit(connection, out, outOffset, (c, now) -> read(c, asked, requireStable),
            (o, at, reads) -> write(o, at, version, asked, reads, Errors.NONE, connection),
            (o, at, error) -> write(o, at, version, asked, null, error, connection));
    }

    /** A topic asked for, refused when the principal may not DESCRIBE it (a topic id not known: its lookup's error answers). */
    private static AskedTopic askedTopic(final Connection connection, final String name, final long idMsb, final long idLsb,
        final int[] partitions)
    {
        return new AskedTopic(name, idMsb, idLsb, partitions, name != null && !Access.topic(connection, AclCodes.DESCRIBE, name));
    }

    /** A group's committed offsets without the topics the principal may not DESCRIBE (Kafka's filter of the every-offset form). */
    private static Map<String, Map<Integer, GroupCoordinator.Committed>> visible(final Connection connection,
        final Map<String, Map<Integer, GroupCoordinator.Committed>> all)
    {
        if (!Access.enabled(connection))
        {
            return all;
        }
        final Map<String, Map<Integer, GroupCoordinator.Committed>> visible = new LinkedHashMap<>();
        all.forEach((topic, partitions) ->
        {
            if (Access.topic(connection, AclCodes.DESCRIBE, topic))
            {
                visible.put(topic, partitions);
            }
        });
        return visible;
    }

    private static int[] partitions(final int count, final java.util.function.IntUnaryOperator partition)
    {
        final int[] partitions = new int[count];
        for (int i = 0; i < count; i++)
        {
            partitions[i] = partition.applyAsInt(i);
        }
        return partitions;
    }

    /** On the agent: the committed offsets asked for, of each group coordinated here now. */
    static List<Read> read(final GroupCoordinator coordinator, final List<Asked> asked, final boolean requireStable)
    {
        final List<Read> reads = new ArrayList<>(asked.size());
        for (final Asked a : asked)
        {
            if (a.refused())
            {
                reads.add(new Read(Map.of(), null, Errors.GROUP_AUTHORIZATION_FAILED));
                continue;
            }
            final short notHere = coordinator.ownership().error(a.groupId());
            if (notHere != Errors.NONE)
            {
                reads.add(new Read(Map.of(), null, notHere));
                continue;
            }
            if (a.topics() == null)
            {
                reads.add(new Read(coordinator.committed(a.groupId(), requireStable), null, Errors.NONE));
                continue;
            }
            final List<GroupCoordinator.Committed[]> perTopic = new ArrayList<>(a.topics().size());
            for (final AskedTopic t : a.topics())
            {
                final GroupCoordinator.Committed[] committed = new GroupCoordinator.Committed[t.partitions().length];
                for (int i = 0; t.name() != null && !t.refused() && i < committed.length; i++)
                {
                    committed[i] = coordinator.committed(a.groupId(), t.name(), t.partitions()[i], requireStable);
                }
                perTopic.add(committed);
            }
            reads.add(new Read(null, perTopic, Errors.NONE));
        }
        return reads;
    }

    /** The response from what the agent read, or with {@code reads} null (not taken) {@code error} for every group. */
    private int write(final MutableDirectBuffer out, final int outOffset, final short version, final List<Asked> asked,
        final List<Read> reads, final short error, final Connection connection)
    {
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        if (version < 8)
        {
            final Asked a = asked.get(0);
            final Read read = reads == null ? null : reads.get(0);
            if (a.topics() == null)
            {
                final Map<String, Map<Integer, GroupCoordinator.Committed>> all = read == null ? Map.of() : visible(connection, read.all());
                final OffsetFetchResponseEncoder.OffsetFetchResponseTopic rt = response.topics(all.size());
                for (final Map.Entry<String, Map<Integer, GroupCoordinator.Committed>> e : all.entrySet())
                {
                    final OffsetFetchResponseEncoder.OffsetFetchResponsePartition rp = rt.next().name(e.getKey())
                        .partitions(e.getValue().size());
                    for (final Map.Entry<Integer, GroupCoordinator.Committed> c : e.getValue().entrySet())
                    {
                        rp.next().partitionIndex(c.getKey()).committedOffset(c.getValue().offset())
                            .committedLeaderEpoch(c.getValue().leaderEpoch()).metadata(c.getValue().metadata())
                            .errorCode(partitionError(c.getValue(), Errors.NONE));
                    }
                }
            }
            else
            {
                final OffsetFetchResponseEncoder.OffsetFetchResponseTopic rt = response.topics(a.topics().size());
                for (int ti = 0; ti < a.topics().size(); ti++)
                {
                    final AskedTopic t = a.topics().get(ti);
                    final GroupCoordinator.Committed[] committed = read == null || read.asked() == null ? null : read.asked().get(ti);
                    final OffsetFetchResponseEncoder.OffsetFetchResponsePartition rp = rt.next().name(t.name())
                        .partitions(t.partitions().length);
                    for (int i = 0; i < t.partitions().length; i++)
                    {
                        final GroupCoordinator.Committed c = committed == null ? null : committed[i];
                        rp.next().partitionIndex(t.partitions()[i]).committedOffset(c == null ? -1 : c.offset())
                            .committedLeaderEpoch(c == null ? -1 : c.leaderEpoch()).metadata(c == null ? "" : c.metadata())
                            .errorCode(t.refused() ? Errors.TOPIC_AUTHORIZATION_FAILED : partitionError(c, error));
                    }
                }
            }
            response.errorCode(error);
            return outOffset + response.finish();
        }
        final OffsetFetchResponseEncoder.OffsetFetchResponseGroup rg = response.groups(asked.size());
        for (int gi = 0; gi < asked.size(); gi++)
        {
            final Asked a = asked.get(gi);
            final Read read = reads == null ? null : reads.get(gi);
            final short groupError = a.refused() ? Errors.GROUP_AUTHORIZATION_FAILED : read == null ? error : read.error();
            rg.next().groupId(a.groupId());
            if (a.topics() == null)
            {
                writeAll(rg, version, read == null || a.refused() ? Map.of() : visible(connection, read.all()));
            }
            else if (a.refused())
            {
                rg.topics(0); // Kafka 4.4: a group the principal may not DESCRIBE is its error alone, none of its topics
            }
            else
            {
                final OffsetFetchResponseEncoder.OffsetFetchResponseTopics rt = rg.topics(a.topics().size());
                for (int ti = 0; ti < a.topics().size(); ti++)
                {
                    final AskedTopic t = a.topics().get(ti);
                    final GroupCoordinator.Committed[] committed = read == null || read.asked() == null ? null : read.asked().get(ti);
                    rt.next();
                    if (version >= 10)
                    {
                        rt.topicId(t.idMsb(), t.idLsb());
                    }
                    else
                    {
                        rt.name(t.name());
                    }
                    final OffsetFetchResponseEncoder.OffsetFetchResponsePartitions rp = rt.partitions(t.partitions().length);
                    for (int i = 0; i < t.partitions().length; i++)
                    {
                        final GroupCoordinator.Committed c = committed == null ? null : committed[i];
                        rp.next().partitionIndex(t.partitions()[i]).committedOffset(c == null ? -1 : c.offset())
                            .committedLeaderEpoch(c == null ? -1 : c.leaderEpoch()).metadata(c == null ? "" : c.metadata())
                            .errorCode(t.name() == null ? Errors.UNKNOWN_TOPIC_ID
                                : t.refused() ? Errors.TOPIC_AUTHORIZATION_FAILED : partitionError(c, groupError));
                    }
                }
            }
            final String groupId = a.groupId();
            rg.errorCode(groupError != Errors.NONE ? groupError : groupId == null || groupId.isEmpty() ? Errors.INVALID_GROUP_ID : Errors.NONE);
        }
        return outOffset + response.finish();
    }

    /** Every committed offset of a group (v8+), topics by id from v10. */
    private void writeAll(final OffsetFetchResponseEncoder.OffsetFetchResponseGroup rg, final short version,
        final Map<String, Map<Integer, GroupCoordinator.Committed>> all)
    {
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
                    .errorCode(partitionError(c.getValue(), Errors.NONE));
            }
        }
    }

    /** UNSTABLE_OFFSET_COMMIT for a partition a transaction has an offset pending for (RequireStable), else {@code error}. */
    private static short partitionError(final GroupCoordinator.Committed c, final short error)
    {
        return c == GroupCoordinator.UNSTABLE ? Errors.UNSTABLE_OFFSET_COMMIT : error;
    }
}
