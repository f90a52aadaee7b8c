package io.ferrite.broker.group;

import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.Errors;
import io.ferrite.broker.api.PartitionLookup;
import io.ferrite.broker.coordinator.AwaitingWrites;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.OffsetCommitRequestDecoder;
import io.ferrite.wire.message.OffsetCommitResponseEncoder;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * OffsetCommit: each partition's own checks (UNKNOWN_TOPIC_OR_PARTITION / UNKNOWN_TOPIC_ID,
 * OFFSET_METADATA_TOO_LARGE), then the coordinator's one step that checks the member and generation
 * and sends the valid offsets to their log thread as one batch, stored once appended (see
 * {@link OffsetCommits}). The answer goes out when the log thread answered the append: in flush
 * durability once appended, in fsync durability once the group fsync covers it ({@link AwaitingWrites}).
 */
final class OffsetCommitHandler extends GroupApiHandler<OffsetCommitRequestDecoder>
{
    private final TopicRegistry topics;

    OffsetCommitHandler(final GroupCoordinator coordinator, final TopicRegistry topics, final Runnable waker)
    {
        super(coordinator, waker, new OffsetCommitRequestDecoder());
        this.topics = topics;
    }

    @Override
    protected int handle(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final Answer answer = new Answer(version);
        final Map<Group.TopicPartition, OffsetCommits.Asked> valid = new LinkedHashMap<>();
        final OffsetCommitRequestDecoder.OffsetCommitRequestTopic t = request.topics();
        while (t.hasNext())
        {
            t.next();
            // a topic answered and not made yet is in Kafka's metadata: read before the published topic (left once published)
            final String creating = version >= 10 ? topics.creatingName(t.topicIdMostSignificantBits(), t.topicIdLeastSignificantBits())
                : t.name();
            final int answered = PartitionLookup.answered(topics, creating);
            final Topic topic = version >= 10 ? topics.topic(t.topicIdMostSignificantBits(), t.topicIdLeastSignificantBits()) :
                topics.topic(t.name());
            final String name = topic != null ? topic.name : creating;
            final TopicErrors ta = version >= 10 ? new TopicErrors(null, t.topicIdMostSignificantBits(), t.topicIdLeastSignificantBits()) :
                new TopicErrors(t.name(), 0, 0);
            answer.topics.add(ta);
            // Kafka: READ on the topic (by id: one found), before it looks the partition up
            final boolean authorized = version >= 10 ? topic == null ? creating == null || Access.topic(connection, AclCodes.READ, creating)
                : Access.topic(connection, AclCodes.READ, topic)
                : Access.topic(connection, AclCodes.READ, t.name());
            final OffsetCommitRequestDecoder.OffsetCommitRequestPartition p = t.partitions();
            while (p.hasNext())
            {
                p.next();
                final String metadata = p.committedMetadata();
                short error = Errors.NONE;
                if (!authorized)
                {
                    error = Errors.TOPIC_AUTHORIZATION_FAILED;
                }
                else if (!PartitionLookup.inMetadata(topic, answered, p.partitionIndex())) // one still being made is accepted, as Kafka does
                {
                    error = PartitionLookup.notFound(topic, version >= 10 && creating == null); // an id being made is known
                }
                else if (metadata != null && metadata.length() > coordinator.offsetMetadataMaxBytes())
                {
                    error = Errors.OFFSET_METADATA_TOO_LARGE;
                }
                else
                {
                    valid.put(new Group.TopicPartition(name, p.partitionIndex()), new OffsetCommits.Asked(p.committedOffset(),
                        version >= 6 ? p.committedLeaderEpoch() : -1, metadata == null ? "" : metadata));
                }
                ta.add(p.partitionIndex(), error, true); // a failed group check overrides every partition's own error
            }
        }
        final String groupId = request.groupId();
        final int generationId = request.generationIdOrMemberEpoch();
        final String memberId = request.memberId();
        final String groupInstanceId = version >= 7 ? request.groupInstanceId() : null;
        return submitFor(AclCodes.READ, groupId, connection, out, outOffset, (c, nowMs) ->
            {
                final OffsetCommits.Result result = c.commitOffsets(groupId, generationId, memberId, groupInstanceId, version, valid);
                final boolean written = result.groupError() == Errors.NONE && result.write() != null;
                return new AwaitingWrites<>(result, written ? List.of(result.write()) : List.of(), nowMs);
            }, (o, at, committing) -> committing.value().groupError() != Errors.NONE ?
                answer.write(o, at, committing.value().groupError(), true) : answer.write(o, at, committing.firstOutcome(Errors.NONE), false),
            (o, at, error) -> answer.write(o, at, error, true));
    }

    /** The response's topics and partitions with each partition's own error, written now or later. */
    private static final class Answer
    {
        final short version;
        final List<TopicErrors> topics = new ArrayList<>();
        private final OffsetCommitResponseEncoder response = new OffsetCommitResponseEncoder();

        Answer(final short version)
        {
            this.version = version;
        }

        /**
         * Writes the response: a partition that failed its own checks keeps its error; the others get
         * {@code error}, or with {@code everyPartition} (a failed member or generation check) every
         * partition does.
         */
        int write(final MutableDirectBuffer out, final int outOffset, final short error, final boolean everyPartition)
        {
            response.wrap(out, outOffset, version).throttleTimeMs(0);
            final OffsetCommitResponseEncoder.OffsetCommitResponseTopic rt = response.topics(topics.size());
            for (final TopicErrors ta : topics)
            {
                rt.next();
                if (version >= 10)
                {
                    rt.topicId(ta.idMsb, ta.idLsb);
                }
                else
                {
                    rt.name(ta.name);
                }
                final OffsetCommitResponseEncoder.OffsetCommitResponsePartition rp = rt.partitions(ta.count);
                for (int i = 0; i < ta.count; i++)
                {
                    rp.next().partitionIndex(ta.partition(i)).errorCode(ta.answer(i, error, everyPartition));
                }
            }
            return outOffset + response.finish();
        }
    }
}
