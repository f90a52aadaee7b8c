package io.ferrite.broker.e2e;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Utils;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.ferrite.testing.Await.awaitValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Group requests on the wire, built and parsed with kafka-clients' message classes over a {@link RawClient};
 * and a raw group member that joins and syncs as kafka-clients would but heartbeats only when told to.
 */
final class RawGroups
{
    static final short JOIN_V = 9;
    static final short SYNC_V = 5;
    static final short HEARTBEAT_V = 4;
    static final short LEAVE_V = 5;
    static final short COMMIT_V = 8;
    static final short DESCRIBE_V = 5;

    private RawGroups()
    {
    }

    static String errorName(final short code)
    {
        return Errors.forCode(code).name() + " (" + code + ")";
    }

    /** Compares error codes, reporting both by name. */
    static void assertError(final Errors expected, final short actual, final String what)
    {
        assertEquals(expected.name() + " (" + expected.code() + ")", errorName(actual), what);
    }

    static byte[] subscription(final String... topics)
    {
        return Utils.toArray(ConsumerProtocol.serializeSubscription(new ConsumerPartitionAssignor.Subscription(List.of(topics))));
    }

    static byte[] assignment(final List<TopicPartition> partitions)
    {
        return Utils.toArray(ConsumerProtocol.serializeAssignment(new ConsumerPartitionAssignor.Assignment(partitions)));
    }

    static JoinGroupRequestData.JoinGroupRequestProtocolCollection protocols(final Map<String, byte[]> byName)
    {
        final JoinGroupRequestData.JoinGroupRequestProtocolCollection protocols = new JoinGroupRequestData.JoinGroupRequestProtocolCollection();
        byName.forEach((name, metadata) -> protocols.add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName(name).setMetadata(metadata)));
        return protocols;
    }

    /** A JoinGroup as the consumer sends it: protocol type "consumer", one protocol "range" subscribing to the topic. */
    static JoinGroupRequestData joinRequest(final String group, final String memberId, final String instanceId, final int sessionMs,
        final int rebalanceMs, final String topic)
    {
        final JoinGroupRequestData.JoinGroupRequestProtocolCollection protocols = new JoinGroupRequestData.JoinGroupRequestProtocolCollection();
        protocols.add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range").setMetadata(subscription(topic)));
        return new JoinGroupRequestData().setGroupId(group).setMemberId(memberId).setGroupInstanceId(instanceId)
            .setSessionTimeoutMs(sessionMs).setRebalanceTimeoutMs(rebalanceMs).setProtocolType("consumer").setProtocols(protocols);
    }

    static JoinGroupResponseData join(final RawClient raw, final short version, final JoinGroupRequestData request) throws IOException
    {
        return new JoinGroupResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.JOIN_GROUP, version, request)), version);
    }

    static SyncGroupResponseData sync(final RawClient raw, final short version, final SyncGroupRequestData request) throws IOException
    {
        return new SyncGroupResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.SYNC_GROUP, version, request)), version);
    }

    static SyncGroupRequestData syncRequest(final String group, final String memberId, final String instanceId, final int generation,
        final Map<String, byte[]> assignments)
    {
        final List<SyncGroupRequestData.SyncGroupRequestAssignment> list = new ArrayList<>();
        assignments.forEach((member, bytes) -> list.add(new SyncGroupRequestData.SyncGroupRequestAssignment().setMemberId(member)
            .setAssignment(bytes)));
        return new SyncGroupRequestData().setGroupId(group).setMemberId(memberId).setGroupInstanceId(instanceId)
            .setGenerationId(generation).setProtocolType("consumer").setProtocolName("range").setAssignments(list);
    }

    static short heartbeat(final RawClient raw, final String group, final String memberId, final String instanceId, final int generation)
        throws IOException
    {
        final HeartbeatRequestData request = new HeartbeatRequestData().setGroupId(group).setMemberId(memberId)
            .setGroupInstanceId(instanceId).setGenerationId(generation);
        return new HeartbeatResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.HEARTBEAT, HEARTBEAT_V, request)), HEARTBEAT_V)
            .errorCode();
    }

    static LeaveGroupResponseData leave(final RawClient raw, final short version, final LeaveGroupRequestData request) throws IOException
    {
        return new LeaveGroupResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.LEAVE_GROUP, version, request)), version);
    }

    static OffsetCommitRequestData commitRequest(final String group, final String memberId, final String instanceId, final int generation,
        final String topic, final int partition, final long offset, final String metadata)
    {
        return new OffsetCommitRequestData().setGroupId(group).setMemberId(memberId).setGroupInstanceId(instanceId)
            .setGenerationIdOrMemberEpoch(generation).setTopics(new ArrayList<>(List.of(new OffsetCommitRequestData.OffsetCommitRequestTopic()
                .setName(topic).setPartitions(new ArrayList<>(List.of(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                    .setPartitionIndex(partition).setCommittedOffset(offset).setCommittedMetadata(metadata)))))));
    }

    static OffsetCommitResponseData commit(final RawClient raw, final short version, final OffsetCommitRequestData request)
        throws IOException
    {
        return new OffsetCommitResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.OFFSET_COMMIT, version, request)), version);
    }

    /** The error of the only partition of a one-partition commit. */
    static short commitError(final RawClient raw, final short version, final OffsetCommitRequestData request) throws IOException
    {
        final OffsetCommitResponseData response = commit(raw, version, request);
        assertEquals(1, response.topics().size(), "one topic answered: " + response);
        assertEquals(1, response.topics().get(0).partitions().size(), "one partition answered: " + response);
        return response.topics().get(0).partitions().get(0).errorCode();
    }

    static OffsetFetchResponseData fetchOffsets(final RawClient raw, final short version, final OffsetFetchRequestData request)
        throws IOException
    {
        return new OffsetFetchResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.OFFSET_FETCH, version, request)), version);
    }

    static DescribeGroupsResponseData.DescribedGroup describe(final RawClient raw, final short version, final String group)
        throws IOException
    {
        final DescribeGroupsResponseData response = new DescribeGroupsResponseData(new ByteBufferAccessor(raw.exchange(
            ApiKeys.DESCRIBE_GROUPS, version, new DescribeGroupsRequestData().setGroups(List.of(group)))), version);
        assertEquals(1, response.groups().size(), "one group described: " + response);
        return response.groups().get(0);
    }

    static ListGroupsResponseData listGroups(final RawClient raw, final short version, final List<String> states) throws IOException
    {
        final ListGroupsRequestData request = new ListGroupsRequestData().setStatesFilter(states);
        return new ListGroupsResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.LIST_GROUPS, version, request)), version);
    }

    static DeleteGroupsResponseData deleteGroups(final RawClient raw, final List<String> groups) throws IOException
    {
        final short version = 2;
        return new DeleteGroupsResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.DELETE_GROUPS, version,
            new DeleteGroupsRequestData().setGroupsNames(groups))), version);
    }

    static OffsetDeleteResponseData deleteOffsets(final RawClient raw, final String group, final String topic, final int partition)
        throws IOException
    {
        final OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection topics = new OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection();
        topics.add(new OffsetDeleteRequestData.OffsetDeleteRequestTopic().setName(topic).setPartitions(List.of(
            new OffsetDeleteRequestData.OffsetDeleteRequestPartition().setPartitionIndex(partition))));
        return new OffsetDeleteResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.OFFSET_DELETE, (short)0,
            new OffsetDeleteRequestData().setGroupId(group).setTopics(topics))), (short)0);
    }

    static FindCoordinatorResponseData findCoordinator(final RawClient raw, final short version, final List<String> keys)
        throws IOException
    {
        final FindCoordinatorRequestData request = new FindCoordinatorRequestData().setKeyType((byte)0);
        if (version < 4)
        {
            request.setKey(keys.get(0));
        }
        else
        {
            request.setCoordinatorKeys(keys);
        }
        return new FindCoordinatorResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.FIND_COORDINATOR, version, request)), version);
    }

    /**
     * Waits until the coordinator answers for the group: FindCoordinator without error (Kafka answers
     * COORDINATOR_NOT_AVAILABLE while it creates __consumer_offsets), then DescribeGroups without
     * COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR.
     */
    static void awaitCoordinator(final RawClient raw, final String group) throws Exception
    {
        awaitValue(() ->
        {
            short error = findCoordinator(raw, (short)4, List.of(group)).coordinators().get(0).errorCode();
            if (error == Errors.NONE.code())
            {
                error = describe(raw, DESCRIBE_V, group).errorCode();
            }
            if (error != Errors.NONE.code() && !Set.of(Errors.COORDINATOR_NOT_AVAILABLE.code(),
                Errors.COORDINATOR_LOAD_IN_PROGRESS.code(), Errors.NOT_COORDINATOR.code()).contains(error))
            {
                fail("coordinator for " + group + ": " + errorName(error));
            }
            return errorName(error);
        }, errorName(Errors.NONE.code())::equals, Duration.ofSeconds(30), "a coordinator for " + group);
    }

    /** A member that joined and synced over its own connection, with the generation and assignment it got. */
    record Joined(String memberId, String instanceId, int generation, String leader, byte[] assignment)
    {
    }

    /**
     * Joins a group that has no other member (MEMBER_ID_REQUIRED first for a dynamic member), syncs as
     * the leader giving itself {@code partitions}, and returns what it got.
     */
    static Joined joinAlone(final RawClient raw, final String group, final String instanceId, final int sessionMs, final String topic,
        final List<TopicPartition> partitions) throws IOException
    {
        JoinGroupResponseData joined = join(raw, JOIN_V, joinRequest(group, "", instanceId, sessionMs, sessionMs, topic));
        if (instanceId == null)
        {
            assertError(Errors.MEMBER_ID_REQUIRED, joined.errorCode(), "first JoinGroup (v4+) of a dynamic member");
            joined = join(raw, JOIN_V, joinRequest(group, joined.memberId(), null, sessionMs, sessionMs, topic));
        }
        assertError(Errors.NONE, joined.errorCode(), "JoinGroup");
        assertEquals(joined.memberId(), joined.leader(), "the only member leads");
        final byte[] mine = assignment(partitions);
        final SyncGroupResponseData synced = sync(raw, SYNC_V, syncRequest(group, joined.memberId(), instanceId, joined.generationId(),
            Map.of(joined.memberId(), mine)));
        assertError(Errors.NONE, synced.errorCode(), "SyncGroup");
        return new Joined(joined.memberId(), instanceId, joined.generationId(), joined.leader(), synced.assignment());
    }
}
