package io.ferrite.broker.group;

import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.Errors;
import io.ferrite.broker.api.PartitionLookup;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.broker.txn.TxnCoordinator;
import io.ferrite.wire.message.TxnOffsetCommitRequestDecoder;
import io.ferrite.wire.message.TxnOffsetCommitResponseEncoder;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * TxnOffsetCommit (v0-6; v5 is transaction version 2's, which adds the group's partition to the
 * transaction itself; v6 names topics by id): with an authorizer, as Kafka 4.4's KafkaApis, WRITE on the transactional
 * id and then READ on the group (each refusal answered for every partition), then READ on each topic (refused:
 * TOPIC_AUTHORIZATION_FAILED, whether the topic exists or not); each partition's own checks as Kafka's KafkaApis makes
 * them (UNKNOWN_TOPIC_OR_PARTITION, v6 UNKNOWN_TOPIC_ID: never sent to the coordinator, and a request
 * left with none is answered at once), then the coordinators' agent verifies the transaction, checks
 * the group and writes the offsets as the producer's transactional batch ({@link TxnOffsetCommits});
 * OFFSET_METADATA_TOO_LARGE is a partition's own, unless the group or the transaction fails the
 * whole request. Answered once the batch's log thread answered (in fsync durability once fsynced).
 * v0-1 get COORDINATOR_NOT_AVAILABLE for COORDINATOR_LOAD_IN_PROGRESS, as Kafka answers them.
 */
final class TxnOffsetCommitHandler extends GroupApiHandler<TxnOffsetCommitRequestDecoder>
{
    private final TopicRegistry topics;
    private final TxnCoordinator transactions;
    /** In a cluster: the transactional id's coordinator on another node verifies. */
    private final RemoteTxnCheck remote;
    private final TxnOffsetCommitResponseEncoder response = new TxnOffsetCommitResponseEncoder();

    TxnOffsetCommitHandler(final GroupCoordinator coordinator, final TxnCoordinator transactions, final RemoteTxnCheck remote,
        final TopicRegistry topics, final Runnable waker)
    {
        super(coordinator, waker, new TxnOffsetCommitRequestDecoder());
        this.remote = remote;
        this.topics = topics;
        this.transactions = transactions;
    }

    @Override
    protected int handle(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final List<TopicErrors> answer = new ArrayList<>();
        final Map<Group.TopicPartition, OffsetCommits.Asked> valid = new LinkedHashMap<>();
        // Kafka: WRITE on the transactional id, then READ on the group, each refusing every partition; then READ on each topic
        final short refused = !Access.transactionalId(connection, AclCodes.WRITE, request.transactionalId()) ?
            Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED : !Access.group(connection, AclCodes.READ, request.groupId()) ?
            Errors.GROUP_AUTHORIZATION_FAILED : Errors.NONE;
        final TxnOffsetCommitRequestDecoder.TxnOffsetCommitRequestTopic t = request.topics();
        while (t.hasNext())
        {
            t.next();
            final boolean byId = version >= 6;
            final String creating = byId ? topics.creatingName(t.topicIdMostSignificantBits(), t.topicIdLeastSignificantBits()) : t.name();
            final int answered = PartitionLookup.answered(topics, creating); // before the published topic, as OffsetCommit's
            final Topic topic = byId ? topics.topic(t.topicIdMostSignificantBits(), t.topicIdLeastSignificantBits()) : topics.topic(t.name());
            final String name = topic != null ? topic.name : creating;
            final TopicErrors ta = byId ? new TopicErrors(null, t.topicIdMostSignificantBits(), t.topicIdLeastSignificantBits()) :
                new TopicErrors(t.name(), 0, 0);
            answer.add(ta);
            final TxnOffsetCommitRequestDecoder.TxnOffsetCommitRequestPartition p = t.partitions();
            while (p.hasNext())
            {
                p.next();
                final String metadata = p.committedMetadata();
                short error = Errors.NONE;
                if (refused != Errors.NONE)
                {
                    error = refused;
                }
                else if (name != null && !(topic != null ? Access.topic(connection, AclCodes.READ, topic) :
                    Access.topic(connection, AclCodes.READ, name))) // before its existence, as Kafka: a refusal does not tell it
                {
                    error = Errors.TOPIC_AUTHORIZATION_FAILED;
                }
                else if (!PartitionLookup.inMetadata(topic, answered, p.partitionIndex())) // one still being made is accepted, as Kafka does
                {
                    error = byId && name == null ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION;
                }
                else if (metadata != null && metadata.length() > coordinator.offsetMetadataMaxBytes())
                {
                    error = Errors.OFFSET_METADATA_TOO_LARGE;
                }
                else
                {
                    valid.put(new Group.TopicPartition(name, p.partitionIndex()), new OffsetCommits.Asked(p.committedOffset(),
                        version >= 2 ? p.committedLeaderEpoch() : -1, metadata == null ? "" : metadata));
                }
                ta.add(p.partitionIndex(), error, error == Errors.NONE || error == Errors.OFFSET_METADATA_TOO_LARGE);
            }
        }
        if (refused != Errors.NONE)
        {
            return write(out, outOffset, version, answer, refused, true);
        }
        if (valid.isEmpty() && answer.stream().noneMatch(TopicErrors::anyToCoordinator))
        {
            return write(out, outOffset, version, answer, Errors.NONE, false); // KafkaApis answers without the coordinator
        }
        final TxnOffsetCommits.Asked asked = new TxnOffsetCommits.Asked(request.transactionalId(), request.groupId(),
            request.producerId(), request.producerEpoch(), version >= 3 ? request.generationIdOrMemberEpoch() : -1,
            version >= 3 && request.memberId() != null ? request.memberId() : "", version >= 3 ? request.groupInstanceId() : null,
            version, valid);
        final TxnCoordinator txns = transactions;
        return submitFor(AclCodes.READ, asked.groupId(), connection, out, outOffset,
            (c, nowMs) -> TxnOffsetCommits.start(c, txns, remote, asked, nowMs),
            (o, at, commit) -> write(o, at, version, answer, commit.error(), commit.everyPartition()),
            (o, at, error) -> write(o, at, version, answer, error, true));
    }

    /**
     * The response: a partition that failed KafkaApis' checks keeps its error; the others get
     * {@code error}, or their own (OFFSET_METADATA_TOO_LARGE) unless {@code everyPartition}.
     */
    private int write(final MutableDirectBuffer out, final int outOffset, final short version, final List<TopicErrors> answer,
        final short error, final boolean everyPartition)
    {
        final short e = version < 2 && error == Errors.COORDINATOR_LOAD_IN_PROGRESS ? Errors.COORDINATOR_NOT_AVAILABLE : error;
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        final TxnOffsetCommitResponseEncoder.TxnOffsetCommitResponseTopic rt = response.topics(answer.size());
        for (final TopicErrors ta : answer)
        {
            rt.next();
            if (version >= 6)
            {
                rt.topicId(ta.idMsb, ta.idLsb);
            }
            else
            {
                rt.name(ta.name);
            }
            final TxnOffsetCommitResponseEncoder.TxnOffsetCommitResponsePartition rp = rt.partitions(ta.count);
            for (int i = 0; i < ta.count; i++)
            {
                rp.next().partitionIndex(ta.partition(i)).errorCode(ta.answer(i, e, everyPartition));
            }
        }
        return outOffset + response.finish();
    }
}
