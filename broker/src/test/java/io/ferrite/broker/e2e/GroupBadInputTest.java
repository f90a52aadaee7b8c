package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidSessionTimeoutException;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.ferrite.broker.e2e.RawGroups.COMMIT_V;
import static io.ferrite.broker.e2e.RawGroups.JOIN_V;
import static io.ferrite.broker.e2e.RawGroups.LEAVE_V;
import static io.ferrite.broker.e2e.RawGroups.SYNC_V;
import static io.ferrite.broker.e2e.RawGroups.assertError;
import static io.ferrite.broker.e2e.RawGroups.awaitCoordinator;
import static io.ferrite.broker.e2e.RawGroups.commit;
import static io.ferrite.broker.e2e.RawGroups.commitError;
import static io.ferrite.broker.e2e.RawGroups.commitRequest;
import static io.ferrite.broker.e2e.RawGroups.describe;
import static io.ferrite.broker.e2e.RawGroups.heartbeat;
import static io.ferrite.broker.e2e.RawGroups.join;
import static io.ferrite.broker.e2e.RawGroups.joinAlone;
import static io.ferrite.broker.e2e.RawGroups.joinRequest;
import static io.ferrite.broker.e2e.RawGroups.sync;
import static io.ferrite.broker.e2e.RawGroups.syncRequest;
import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Group requests that are wrong in every way a client can get them wrong, each answered with Kafka 4.4's
 * error code (checked against kafka-clients' Errors table, the request schemas in its jar and Kafka's
 * group coordinator), on a connection that stays open, while a member of the group is not disturbed;
 * afterwards the broker still serves an ordinary consumer group. Broker: group.min.session.timeout.ms=2000,
 * group.max.session.timeout.ms=60000.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GroupBadInputTest
{
    private static final int SESSION = 30_000;
    private static final String TOPIC = "known";
    private static final List<TopicPartition> P0 = List.of(new TopicPartition(TOPIC, 0));

    @TempDir
    static Path dir;

    private RunningBroker broker;

    @BeforeAll
    void start() throws Exception
    {
        broker = new RunningBroker(dir, Map.of("group.initial.rebalance.delay.ms", "0", "group.min.session.timeout.ms", "2000",
            "group.max.session.timeout.ms", "60000"));
        try (Admin admin = broker.admin())
        {
            Members.createTopic(admin, TOPIC, 2);
            Members.createTopic(admin, "other", 1);
        }
    }

    @AfterAll
    void stop() throws Exception
    {
        broker.close();
    }

    private RawClient connect(final String group) throws Exception
    {
        final RawClient raw = new RawClient(broker.broker.address().getPort());
        awaitCoordinator(raw, group);
        return raw;
    }

    /** The member is still there, Stable, in its generation. */
    private static void assertUndisturbed(final RawClient raw, final String group, final RawGroups.Joined member) throws Exception
    {
        assertError(Errors.NONE, heartbeat(raw, group, member.memberId(), member.instanceId(), member.generation()), "member heartbeats");
        final DescribeGroupsResponseData.DescribedGroup d = describe(raw, (short)5, group);
        assertEquals("Stable", d.groupState(), "group " + group + " undisturbed");
        assertEquals(1, d.members().size());
        assertEquals(member.memberId(), d.members().get(0).memberId());
    }

    @Test
    @Order(1)
    void joinGroupErrors() throws Exception
    {
        final String group = "join-errors";
        try (RawClient raw = connect(group))
        {
            final RawGroups.Joined owner = joinAlone(raw, group, null, SESSION, TOPIC, P0);

            assertError(Errors.INVALID_GROUP_ID, join(raw, JOIN_V, joinRequest("", "", null, SESSION, SESSION, TOPIC)).errorCode(),
                "empty group id");
            for (final int session : new int[] {0, -1, 1_999, 60_001, Integer.MAX_VALUE})
            {
                assertError(Errors.INVALID_SESSION_TIMEOUT, join(raw, JOIN_V, joinRequest("timeouts", "", null, session, SESSION, TOPIC))
                    .errorCode(), "session timeout " + session);
            }
            assertError(Errors.INVALID_SESSION_TIMEOUT, join(raw, JOIN_V, joinRequest(group, owner.memberId(), null, 60_001, SESSION, TOPIC))
                .errorCode(), "a known member with an oversized session timeout");

            // the first join of a dynamic member: MEMBER_ID_REQUIRED from v4 on, a direct join before
            for (short v = 4; v <= JOIN_V; v++)
            {
                final JoinGroupResponseData r = join(raw, v, joinRequest("fresh-" + v, "", null, SESSION, SESSION, TOPIC));
                assertError(Errors.MEMBER_ID_REQUIRED, r.errorCode(), "JoinGroup v" + v + " without a member id");
                assertFalse(r.memberId().isEmpty(), "v" + v + ": the member id to use");
            }
            final JoinGroupResponseData v3 = join(raw, (short)3, joinRequest("old-client", "", null, SESSION, SESSION, TOPIC));
            assertError(Errors.NONE, v3.errorCode(), "JoinGroup v3 joins at once");
            assertFalse(v3.memberId().isEmpty());
            assertEquals(v3.memberId(), v3.leader());
            assertEquals(1, v3.generationId());

            // INCONSISTENT_GROUP_PROTOCOL
            final JoinGroupRequestData noType = joinRequest("brand-new", "", null, SESSION, SESSION, TOPIC).setProtocolType("");
            assertError(Errors.INCONSISTENT_GROUP_PROTOCOL, join(raw, JOIN_V, noType).errorCode(), "first member with empty protocol type");
            final JoinGroupRequestData noProtocols = joinRequest("brand-new", "", null, SESSION, SESSION, TOPIC)
                .setProtocols(new JoinGroupRequestData.JoinGroupRequestProtocolCollection());
            assertError(Errors.INCONSISTENT_GROUP_PROTOCOL, join(raw, JOIN_V, noProtocols).errorCode(), "first member with no protocols");
            final JoinGroupRequestData otherType = joinRequest(group, "", null, SESSION, SESSION, TOPIC).setProtocolType("connect");
            assertError(Errors.INCONSISTENT_GROUP_PROTOCOL, join(raw, JOIN_V, otherType).errorCode(), "protocol type other than the group's");
            final JoinGroupRequestData otherProtocol = joinRequest(group, "", null, SESSION, SESSION, TOPIC)
                .setProtocols(RawGroups.protocols(Map.of("roundrobin", RawGroups.subscription(TOPIC))));
            assertError(Errors.INCONSISTENT_GROUP_PROTOCOL, join(raw, JOIN_V, otherProtocol).errorCode(), "no protocol in common");

            // UNKNOWN_MEMBER_ID
            assertError(Errors.UNKNOWN_MEMBER_ID, join(raw, JOIN_V, joinRequest(group, "no-such-member", null, SESSION, SESSION, TOPIC))
                .errorCode(), "unknown member id");
            assertError(Errors.UNKNOWN_MEMBER_ID, join(raw, JOIN_V, joinRequest("nobody-home", "no-such-member", null, SESSION, SESSION,
                TOPIC)).errorCode(), "member id in a group that does not exist");

            assertUndisturbed(raw, group, owner);
        }
    }

    @Test
    @Order(2)
    void syncGroupErrors() throws Exception
    {
        final String group = "sync-errors";
        try (RawClient raw = connect(group))
        {
            final RawGroups.Joined owner = joinAlone(raw, group, null, SESSION, TOPIC, P0);
            final int gen = owner.generation();

            assertError(Errors.INVALID_GROUP_ID, sync(raw, SYNC_V, syncRequest("", owner.memberId(), null, gen, Map.of())).errorCode(),
                "empty group id");
            assertError(Errors.UNKNOWN_MEMBER_ID, sync(raw, SYNC_V, syncRequest("nobody-home", "no-such-member", null, 1, Map.of()))
                .errorCode(), "group that does not exist");
            assertError(Errors.UNKNOWN_MEMBER_ID, sync(raw, SYNC_V, syncRequest(group, "no-such-member", null, gen, Map.of())).errorCode(),
                "unknown member id");
            assertError(Errors.ILLEGAL_GENERATION, sync(raw, SYNC_V, syncRequest(group, owner.memberId(), null, gen + 1, Map.of()))
                .errorCode(), "a generation from the future");
            assertError(Errors.ILLEGAL_GENERATION, sync(raw, SYNC_V, syncRequest(group, owner.memberId(), null, gen - 1, Map.of()))
                .errorCode(), "a stale generation");
            assertError(Errors.INCONSISTENT_GROUP_PROTOCOL, sync(raw, SYNC_V, syncRequest(group, owner.memberId(), null, gen, Map.of())
                .setProtocolType("connect")).errorCode(), "v5 protocol type other than the group's");
            assertError(Errors.INCONSISTENT_GROUP_PROTOCOL, sync(raw, SYNC_V, syncRequest(group, owner.memberId(), null, gen, Map.of())
                .setProtocolName("roundrobin")).errorCode(), "v5 protocol name other than the group's");

            final SyncGroupResponseData ok = sync(raw, SYNC_V, syncRequest(group, owner.memberId(), null, gen, Map.of()));
            assertError(Errors.NONE, ok.errorCode(), "a right SyncGroup of a Stable group");
            assertEquals(List.of(P0.get(0)), org.apache.kafka.clients.consumer.internals.ConsumerProtocol.deserializeAssignment(
                java.nio.ByteBuffer.wrap(ok.assignment())).partitions(), "returns the member's assignment");
            assertUndisturbed(raw, group, owner);
        }
    }

    @Test
    @Order(3)
    void heartbeatErrors() throws Exception
    {
        final String group = "heartbeat-errors";
        try (RawClient raw = connect(group))
        {
            final RawGroups.Joined owner = joinAlone(raw, group, null, SESSION, TOPIC, P0);
            final int gen = owner.generation();
            assertError(Errors.INVALID_GROUP_ID, heartbeat(raw, "", owner.memberId(), null, gen), "empty group id");
            assertError(Errors.UNKNOWN_MEMBER_ID, heartbeat(raw, "nobody-home", "no-such-member", null, 1), "group that does not exist");
            assertError(Errors.UNKNOWN_MEMBER_ID, heartbeat(raw, group, "no-such-member", null, gen), "unknown member id");
            assertError(Errors.UNKNOWN_MEMBER_ID, heartbeat(raw, group, "", null, gen), "empty member id");
            assertError(Errors.ILLEGAL_GENERATION, heartbeat(raw, group, owner.memberId(), null, gen + 1), "a generation from the future");
            assertError(Errors.ILLEGAL_GENERATION, heartbeat(raw, group, owner.memberId(), null, gen - 1), "a stale generation");
            assertError(Errors.UNKNOWN_MEMBER_ID, heartbeat(raw, group, owner.memberId(), "not-static", gen),
                "an instance id the group does not know");
            assertUndisturbed(raw, group, owner);
        }
    }

    @Test
    @Order(4)
    void offsetCommitErrors() throws Exception
    {
        final String group = "commit-errors";
        try (RawClient raw = connect(group))
        {
            final RawGroups.Joined owner = joinAlone(raw, group, null, SESSION, TOPIC, P0);
            final int gen = owner.generation();

            // topics and partitions are checked before the group
            assertError(Errors.UNKNOWN_TOPIC_OR_PARTITION, commitError(raw, COMMIT_V, commitRequest("simple", "", null, -1, "no-such-topic",
                0, 1, "")), "unknown topic");
            assertError(Errors.UNKNOWN_TOPIC_OR_PARTITION, commitError(raw, COMMIT_V, commitRequest("simple", "", null, -1, TOPIC, 99, 1,
                "")), "unknown partition");
            final OffsetCommitRequestData mixed = commitRequest("simple", "", null, -1, TOPIC, 0, 3, "fine");
            mixed.topics().get(0).partitions().add(new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(7)
                .setCommittedOffset(3));
            final OffsetCommitResponseData mixedResponse = commit(raw, COMMIT_V, mixed);
            final Map<Integer, Short> byPartition = new HashMap<>();
            mixedResponse.topics().get(0).partitions().forEach(p -> byPartition.put(p.partitionIndex(), p.errorCode()));
            assertError(Errors.NONE, byPartition.get(0), "the existing partition of a mixed commit");
            assertError(Errors.UNKNOWN_TOPIC_OR_PARTITION, byPartition.get(7), "the missing partition of a mixed commit");

            // members and generations
            assertError(Errors.NONE, commitError(raw, COMMIT_V, commitRequest(group, owner.memberId(), null, gen, TOPIC, 0, 1, "m")),
                "the member's commit");
            assertError(Errors.UNKNOWN_MEMBER_ID, commitError(raw, COMMIT_V, commitRequest(group, "no-such-member", null, gen, TOPIC, 0, 1,
                "")), "unknown member id");
            assertError(Errors.ILLEGAL_GENERATION, commitError(raw, COMMIT_V, commitRequest(group, owner.memberId(), null, gen + 1, TOPIC,
                0, 1, "")), "a generation from the future");
            assertError(Errors.ILLEGAL_GENERATION, commitError(raw, COMMIT_V, commitRequest(group, owner.memberId(), null, gen - 1, TOPIC,
                0, 1, "")), "a stale generation");
            assertError(Errors.UNKNOWN_MEMBER_ID, commitError(raw, COMMIT_V, commitRequest(group, "", null, -1, TOPIC, 0, 1, "")),
                "a commit without member and generation while the group has members");
            // a group that does not exist, with a generation: v8 says ILLEGAL_GENERATION, v9+ GROUP_ID_NOT_FOUND
            assertError(Errors.ILLEGAL_GENERATION, commitError(raw, (short)8, commitRequest("nobody-home", "no-such-member", null, 3, TOPIC,
                0, 1, "")), "v8, no such group");
            assertError(Errors.GROUP_ID_NOT_FOUND, commitError(raw, (short)9, commitRequest("nobody-home", "no-such-member", null, 3, TOPIC,
                0, 1, "")), "v9, no such group");
            // offset.metadata.max.bytes (4096 by default)
            assertError(Errors.OFFSET_METADATA_TOO_LARGE, commitError(raw, COMMIT_V, commitRequest("simple", "", null, -1, TOPIC, 1, 1,
                "x".repeat(4097))), "metadata over offset.metadata.max.bytes");
            // Kafka 4.4 accepts the empty group id in OffsetCommit (GroupCoordinatorService rejects only a null
            // group id there, "for backwards compatibility"); INVALID_GROUP_ID is for JoinGroup, SyncGroup,
            // Heartbeat, LeaveGroup and OffsetDelete. Unsure whether Ferrite should copy this; Kafka does.
            assertError(Errors.NONE, commitError(raw, COMMIT_V, commitRequest("", "", null, -1, TOPIC, 1, 1, "")),
                "simple commit for the empty group id, as Kafka accepts it");

            assertUndisturbed(raw, group, owner);
        }
    }

    @Test
    @Order(5)
    void leaveGroupErrors() throws Exception
    {
        final String group = "leave-errors";
        try (RawClient raw = connect(group))
        {
            final RawGroups.Joined owner = joinAlone(raw, group, null, SESSION, TOPIC, P0);
            final LeaveGroupRequestData.MemberIdentity ghost = new LeaveGroupRequestData.MemberIdentity().setMemberId("no-such-member");

            assertError(Errors.INVALID_GROUP_ID, RawGroups.leave(raw, LEAVE_V, new LeaveGroupRequestData().setGroupId("")
                .setMembers(List.of(ghost))).errorCode(), "empty group id");
            // a group that does not exist: v3+ answer UNKNOWN_MEMBER_ID per member (GroupCoordinatorService turns the
            // coordinator's UnknownMemberIdException into member errors), v0-2 as the response's error
            final LeaveGroupResponseData noGroup = RawGroups.leave(raw, LEAVE_V, new LeaveGroupRequestData().setGroupId("nobody-home")
                .setMembers(List.of(ghost)));
            assertError(Errors.NONE, noGroup.errorCode(), "v5, group that does not exist");
            assertEquals(1, noGroup.members().size());
            assertError(Errors.UNKNOWN_MEMBER_ID, noGroup.members().get(0).errorCode(), "v5, member of a group that does not exist");
            assertError(Errors.UNKNOWN_MEMBER_ID, RawGroups.leave(raw, (short)1, new LeaveGroupRequestData().setGroupId("nobody-home")
                .setMemberId("no-such-member")).errorCode(), "v1, group that does not exist");
            final LeaveGroupResponseData batch = RawGroups.leave(raw, LEAVE_V, new LeaveGroupRequestData().setGroupId(group)
                .setMembers(List.of(ghost, new LeaveGroupRequestData.MemberIdentity().setMemberId("").setGroupInstanceId("not-static"))));
            assertError(Errors.NONE, batch.errorCode(), "v3+: per-member errors");
            assertEquals(2, batch.members().size());
            for (final LeaveGroupResponseData.MemberResponse m : batch.members())
            {
                assertError(Errors.UNKNOWN_MEMBER_ID, m.errorCode(), "member " + m.memberId() + " / " + m.groupInstanceId());
            }
            assertError(Errors.UNKNOWN_MEMBER_ID, RawGroups.leave(raw, (short)1, new LeaveGroupRequestData().setGroupId(group)
                .setMemberId("no-such-member")).errorCode(), "v1: the member's error is the response's");
            assertUndisturbed(raw, group, owner);

            assertError(Errors.NONE, RawGroups.leave(raw, (short)1, new LeaveGroupRequestData().setGroupId(group)
                .setMemberId(owner.memberId())).errorCode(), "v1 leave of the member");
            assertEquals("Empty", describe(raw, (short)5, group).groupState());
        }
    }

    @Test
    @Order(6)
    void deleteGroupsOffsetDeleteAndDescribeErrors() throws Exception
    {
        final String group = "busy";
        try (RawClient raw = connect(group))
        {
            final RawGroups.Joined owner = joinAlone(raw, group, null, SESSION, TOPIC, P0);
            assertError(Errors.NONE, commitError(raw, COMMIT_V, commitRequest("idle-group", "", null, -1, TOPIC, 0, 4, "")), "simple commit");
            assertError(Errors.NONE, commitError(raw, COMMIT_V, commitRequest(group, owner.memberId(), null, owner.generation(), "other", 0,
                2, "")), "the member commits a topic it does not subscribe to");

            final DeleteGroupsResponseData deleted = RawGroups.deleteGroups(raw, List.of("nobody-home", group, "idle-group"));
            assertEquals(3, deleted.results().size());
            assertError(Errors.GROUP_ID_NOT_FOUND, deleted.results().find("nobody-home").errorCode(), "delete a group that does not exist");
            assertError(Errors.NON_EMPTY_GROUP, deleted.results().find(group).errorCode(), "delete a group with members");
            assertError(Errors.NONE, deleted.results().find("idle-group").errorCode(), "delete an empty group");
            assertEquals("Dead", describe(raw, (short)5, "idle-group").groupState());

            assertError(Errors.INVALID_GROUP_ID, RawGroups.deleteOffsets(raw, "", TOPIC, 0).errorCode(), "OffsetDelete, empty group id");
            assertError(Errors.GROUP_ID_NOT_FOUND, RawGroups.deleteOffsets(raw, "nobody-home", TOPIC, 0).errorCode(),
                "OffsetDelete, no such group");
            final OffsetDeleteResponseData subscribed = RawGroups.deleteOffsets(raw, group, TOPIC, 0);
            assertError(Errors.NONE, subscribed.errorCode(), "OffsetDelete of a Stable group");
            assertError(Errors.GROUP_SUBSCRIBED_TO_TOPIC, subscribed.topics().find(TOPIC).partitions().find(0).errorCode(),
                "the group's members subscribe to the topic");
            final OffsetDeleteResponseData notSubscribed = RawGroups.deleteOffsets(raw, group, "other", 0);
            assertError(Errors.NONE, notSubscribed.topics().find("other").partitions().find(0).errorCode(),
                "offsets of a topic the members do not subscribe to may be deleted");
            final OffsetDeleteResponseData unknownTopic = RawGroups.deleteOffsets(raw, group, "no-such-topic", 0);
            assertError(Errors.UNKNOWN_TOPIC_OR_PARTITION, unknownTopic.topics().find("no-such-topic").partitions().find(0).errorCode(),
                "OffsetDelete of an unknown topic");

            final DescribeGroupsResponseData.DescribedGroup v5 = describe(raw, (short)5, "nobody-home");
            assertError(Errors.NONE, v5.errorCode(), "DescribeGroups v5 of an unknown group");
            assertEquals("Dead", v5.groupState());
            final DescribeGroupsResponseData.DescribedGroup v6 = describe(raw, (short)6, "nobody-home");
            assertError(Errors.GROUP_ID_NOT_FOUND, v6.errorCode(), "DescribeGroups v6 of an unknown group");
            assertEquals("Dead", v6.groupState());

            assertUndisturbed(raw, group, owner);
        }
    }

    /** kafka-clients surfaces the coordinator's INVALID_SESSION_TIMEOUT from poll. */
    @Test
    @Order(7)
    void aConsumerWithAnOversizedSessionTimeoutIsRefused() throws Exception
    {
        final Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "too-patient");
        config.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        config.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 60_001);
        config.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, 70_000);
        try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(config))
        {
            consumer.subscribe(List.of(TOPIC));
            final Throwable[] thrown = new Throwable[1];
            await(() ->
            {
                try
                {
                    consumer.poll(Duration.ofMillis(200));
                }
                catch (final RuntimeException ex)
                {
                    thrown[0] = ex;
                }
                return thrown[0] != null;
            }, Duration.ofSeconds(30), "the poll to fail");
            assertInstanceOf(InvalidSessionTimeoutException.class, thrown[0], "over group.max.session.timeout.ms");
        }
    }

    /** After all that, an ordinary consumer group on the same broker reads, commits and reads its commit back. */
    @Test
    @Order(8)
    void theBrokerStillServesAConsumerGroup() throws Exception
    {
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
        {
            for (int i = 0; i < 20; i++)
            {
                producer.send(new ProducerRecord<>("other", 0, null, ("after-" + i).getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }
        final Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "after-all");
        config.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        final TopicPartition tp = new TopicPartition("other", 0);
        try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(config))
        {
            consumer.subscribe(List.of("other"));
            final List<ConsumerRecord<byte[], byte[]>> got = Polling.pollCount(consumer, 20);
            assertEquals(20, got.size(), "records read by the group");
            assertEquals(Set.of(tp), consumer.assignment());
            consumer.commitSync();
            final OffsetAndMetadata committed = consumer.committed(Set.of(tp)).get(tp);
            assertEquals(20, committed.offset());
        }
        try (RawClient raw = connect("after-all"))
        {
            assertEquals("Empty", describe(raw, (short)5, "after-all").groupState(), "the consumer left on close");
        }
        assertTrue(broker.broker.address().getPort() > 0);
    }
}
