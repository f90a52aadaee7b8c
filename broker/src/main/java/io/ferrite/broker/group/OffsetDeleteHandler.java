package io.ferrite.broker.group;

import io.ferrite.broker.acl.Access;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.Errors;
import io.ferrite.broker.api.PartitionLookup;
import io.ferrite.broker.coordinator.AwaitingWrites;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.OffsetDeleteRequestDecoder;
import io.ferrite.wire.message.OffsetDeleteResponseEncoder;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** OffsetDelete: partitions of unknown topics are UNKNOWN_TOPIC_OR_PARTITION before the group is asked (as Kafka's broker does). */
final class OffsetDeleteHandler extends GroupApiHandler<OffsetDeleteRequestDecoder>
{
    private final TopicRegistry topics;

    OffsetDeleteHandler(final GroupCoordinator coordinator, final TopicRegistry topics, final Runnable waker)
    {
        super(coordinator, waker, new OffsetDeleteRequestDecoder());
        this.topics = topics;
    }

    @Override
    protected int handle(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final List<Asked> asked = new ArrayList<>(); // to answer in the request's shape
        final List<Group.TopicPartition> known = new ArrayList<>();
        final Map<Group.TopicPartition, Short> results = new LinkedHashMap<>();
        final OffsetDeleteRequestDecoder.OffsetDeleteRequestTopic t = request.topics();
        while (t.hasNext())
        {
            t.next();
            final int answered = PartitionLookup.answered(topics, t.name()); // before the published topic, as OffsetCommit's
            final Topic topic = topics.topic(t.name());
            final boolean readable = topic != null ? Access.topic(connection, AclCodes.READ, topic)
                : Access.topic(connection, AclCodes.READ, t.name());
            final List<Group.TopicPartition> askedHere = new ArrayList<>();
            asked.add(new Asked(t.name(), askedHere));
            final OffsetDeleteRequestDecoder.OffsetDeleteRequestPartition p = t.partitions();
            while (p.hasNext())
            {
                p.next();
                final Group.TopicPartition tp = new Group.TopicPartition(t.name(), p.partitionIndex());
                askedHere.add(tp);
                if (!readable) // Kafka 4.4: READ on the topic, checked before its existence
                {
                    results.put(tp, Errors.TOPIC_AUTHORIZATION_FAILED);
                }
                else if (!PartitionLookup.inMetadata(topic, answered, p.partitionIndex())) // one still being made is accepted, as Kafka does
                {
                    results.put(tp, PartitionLookup.notFound(topic, false));
                }
                else
                {
                    known.add(tp);
                }
            }
        }
        final String groupId = request.groupId();
        return submitFor(AclCodes.DELETE, groupId, connection, out, outOffset, (c, now) ->
            {
                // results: the coordinator's error per partition, next to the unknown topics' (read once published)
                final GroupDeletions.OffsetsDeleted deleted = c.deleteOffsets(groupId, known, results);
                return new AwaitingWrites<>(deleted, deleted.write() == null ? List.of() : List.of(deleted.write()), now);
            }, (o, at, deleting) -> write(o, at, version, deleting.firstOutcome(deleting.value().error()), asked, results),
            (o, at, error) -> write(o, at, version, error, asked, results));
    }

    /** A topic of the request with its partitions. */
    private record Asked(String name, List<Group.TopicPartition> partitions)
    {
    }

    /** Kafka answers a failed OffsetDelete with the request's error and no topics. */
    private static int write(final MutableDirectBuffer out, final int outOffset, final short version, final short error,
        final List<Asked> asked, final Map<Group.TopicPartition, Short> results)
    {
        final OffsetDeleteResponseEncoder response = new OffsetDeleteResponseEncoder();
        response.wrap(out, outOffset, version).errorCode(error).throttleTimeMs(0);
        final List<Asked> answered = error == Errors.NONE ? asked : List.of();
        final OffsetDeleteResponseEncoder.OffsetDeleteResponseTopic rt = response.topics(answered.size());
        for (final Asked topic : answered)
        {
            final OffsetDeleteResponseEncoder.OffsetDeleteResponsePartition rp = rt.next().name(topic.name())
                .partitions(topic.partitions().size());
            for (final Group.TopicPartition tp : topic.partitions())
            {
                final Short own = results.get(tp);
                rp.next().partitionIndex(tp.partition()).errorCode(own == null ? Errors.NONE : own);
            }
        }
        return outOffset + response.finish();
    }
}
