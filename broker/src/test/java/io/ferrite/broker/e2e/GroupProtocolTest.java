package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static io.ferrite.broker.e2e.RawGroups.JOIN_V;
import static io.ferrite.broker.e2e.RawGroups.SYNC_V;
import static io.ferrite.broker.e2e.RawGroups.assertError;
import static io.ferrite.broker.e2e.RawGroups.assignment;
import static io.ferrite.broker.e2e.RawGroups.awaitCoordinator;
import static io.ferrite.broker.e2e.RawGroups.commitError;
import static io.ferrite.broker.e2e.RawGroups.commitRequest;
import static io.ferrite.broker.e2e.RawGroups.describe;
import static io.ferrite.broker.e2e.RawGroups.heartbeat;
import static io.ferrite.broker.e2e.RawGroups.join;
import static io.ferrite.broker.e2e.RawGroups.joinAlone;
import static io.ferrite.broker.e2e.RawGroups.joinRequest;
import static io.ferrite.broker.e2e.RawGroups.subscription;
import static io.ferrite.broker.e2e.RawGroups.sync;
import static io.ferrite.broker.e2e.RawGroups.syncRequest;
import static io.ferrite.testing.Await.await;
import static io.ferrite.testing.Await.awaitValue;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The classic group protocol on the wire, request by request (kafka-clients' message classes over a
 * socket), where the clients' own behaviour would hide it: FindCoordinator single and batched, the
 * group's states (Empty, PreparingRebalance, CompletingRebalance, Stable, Dead) as DescribeGroups and
 * ListGroups show them, group.initial.rebalance.delay.ms gathering the first members into one generation,
 * the leader's assignment reaching the followers, batch LeaveGroup, expiry after session.timeout.ms,
 * removal of a member that does not rejoin within the rebalance timeout, static members replacing their
 * member id without a rebalance, and OffsetFetch for several groups at once.
 */
class GroupProtocolTest
{
    @TempDir
    Path dir;

    private static int port(final RunningBroker broker)
    {
        return broker.broker.address().getPort();
    }

    /** Polls DescribeGroups until the state matches (30 s at most: some states come after a rebalance) and returns the description. */
    private static DescribeGroupsResponseData.DescribedGroup awaitState(final RawClient raw, final String group,
        final Predicate<String> state) throws Exception
    {
        return awaitValue(() -> describe(raw, RawGroups.DESCRIBE_V, group), d -> state.test(d.groupState()), Duration.ofSeconds(30),
            "group " + group + " in the state wanted");
    }

    private static boolean listed(final ListGroupsResponseData response, final String group)
    {
        return response.groups().stream().anyMatch(g -> g.groupId().equals(group));
    }

    /**
     * FindCoordinator v0-v3 (one key) and v4-v6 (a batch of keys): every group's coordinator is node 1 at
     * this broker's address, each key answered in the batch.
     */
    @Test
    void findCoordinatorAnswersEveryGroupWithThisBroker() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); RawClient raw = new RawClient(port(broker)))
        {
            awaitCoordinator(raw, "any");
            for (short v = 0; v <= 3; v++)
            {
                final FindCoordinatorResponseData r = RawGroups.findCoordinator(raw, v, List.of("group-" + v));
                assertError(Errors.NONE, r.errorCode(), "v" + v);
                assertEquals(1, r.nodeId(), "v" + v);
                assertEquals("127.0.0.1", r.host(), "v" + v);
                assertEquals(port(broker), r.port(), "v" + v);
            }
            for (short v = 4; v <= 6; v++)
            {
                final List<String> keys = List.of("alpha", "beta", "a-much-longer-group-name-" + v);
                final FindCoordinatorResponseData r = RawGroups.findCoordinator(raw, v, keys);
                assertEquals(keys.size(), r.coordinators().size(), "v" + v + " answers every key");
                for (int i = 0; i < keys.size(); i++)
                {
                    final FindCoordinatorResponseData.Coordinator c = r.coordinators().get(i);
                    assertEquals(keys.get(i), c.key(), "v" + v + " in the order asked");
                    assertError(Errors.NONE, c.errorCode(), "v" + v + " " + c.key());
                    assertEquals(1, c.nodeId());
                    assertEquals("127.0.0.1", c.host());
                    assertEquals(port(broker), c.port());
                }
            }
        }
    }

    /**
     * Two dynamic members: MEMBER_ID_REQUIRED on the first JoinGroup, then both joins wait out
     * group.initial.rebalance.delay.ms (PreparingRebalance) and come back in one generation with one leader,
     * who alone gets the members' subscriptions; CompletingRebalance until the leader's SyncGroup hands each
     * member its assignment; Stable with protocol and assignments in DescribeGroups and ListGroups; a batch
     * LeaveGroup (with a stranger in it, UNKNOWN_MEMBER_ID for it alone) empties the group; DeleteGroups
     * makes it Dead (DescribeGroups v5: state Dead, no error; v6: GROUP_ID_NOT_FOUND).
     */
    @Test
    void aGroupGoesThroughItsStatesAndTheLeadersAssignmentReachesEveryMember() throws Exception
    {
        final String group = "states";
        // 5 s: the describe below must come while the joins wait, and b's join within the delay after a's, on a loaded machine too
        try (RunningBroker broker = new RunningBroker(dir, Map.of("group.initial.rebalance.delay.ms", "5000"));
            Admin admin = broker.admin();
            RawClient control = new RawClient(port(broker));
            RawClient ra = new RawClient(port(broker));
            RawClient rb = new RawClient(port(broker)))
        {
            Members.createTopic(admin, "rows", 4);
            awaitCoordinator(control, group);
            DescribeGroupsResponseData.DescribedGroup d = describe(control, (short)5, group);
            assertError(Errors.NONE, d.errorCode(), "v5 describes an unknown group without error");
            assertEquals("Dead", d.groupState());

            final JoinGroupResponseData a0 = join(ra, JOIN_V, joinRequest(group, "", null, 30_000, 30_000, "rows"));
            assertError(Errors.MEMBER_ID_REQUIRED, a0.errorCode(), "first join of a");
            final JoinGroupResponseData b0 = join(rb, JOIN_V, joinRequest(group, "", null, 30_000, 30_000, "rows"));
            assertError(Errors.MEMBER_ID_REQUIRED, b0.errorCode(), "first join of b");
            assertFalse(a0.memberId().isEmpty(), "a given a member id");
            assertNotEquals(a0.memberId(), b0.memberId());

            final ExecutorService pool = Executors.newFixedThreadPool(2);
            try
            {
                final Future<JoinGroupResponseData> fa = pool.submit(() -> join(ra, JOIN_V, joinRequest(group, a0.memberId(), null, 30_000, 30_000, "rows")));
                final Future<JoinGroupResponseData> fb = pool.submit(() -> join(rb, JOIN_V, joinRequest(group, b0.memberId(), null, 30_000, 30_000, "rows")));
                d = awaitState(control, group, s -> !s.equals("Empty") && !s.equals("Dead"));
                assertEquals("PreparingRebalance", d.groupState(), "the joins wait out the initial delay");
                assertFalse(fa.isDone(), "a's JoinGroup is held during the initial delay");

                final JoinGroupResponseData ja = fa.get(20, TimeUnit.SECONDS);
                final JoinGroupResponseData jb = fb.get(20, TimeUnit.SECONDS);
                assertError(Errors.NONE, ja.errorCode(), "a joined");
                assertError(Errors.NONE, jb.errorCode(), "b joined");
                assertEquals(1, ja.generationId(), "both in the first generation");
                assertEquals(1, jb.generationId(), "both in the first generation");
                assertEquals(ja.leader(), jb.leader(), "one leader");
                assertEquals("range", ja.protocolName());
                assertEquals("consumer", ja.protocolType());
                assertEquals("range", jb.protocolName());
                final boolean aLeads = ja.leader().equals(a0.memberId());
                assertTrue(aLeads || ja.leader().equals(b0.memberId()), "the leader is a member");
                final JoinGroupResponseData leader = aLeads ? ja : jb;
                final JoinGroupResponseData follower = aLeads ? jb : ja;
                final RawClient leaderClient = aLeads ? ra : rb;
                final RawClient followerClient = aLeads ? rb : ra;
                assertEquals(2, leader.members().size(), "the leader gets every member");
                for (final JoinGroupResponseData.JoinGroupResponseMember m : leader.members())
                {
                    assertArrayEquals(subscription("rows"), m.metadata(), "the subscription of " + m.memberId());
                    assertNull(m.groupInstanceId());
                }
                assertTrue(follower.members().isEmpty(), "a follower gets no members");
                assertFalse(leader.skipAssignment());

                d = describe(control, (short)5, group);
                assertEquals("CompletingRebalance", d.groupState(), "waiting for the leader's assignment");
                assertEquals(2, d.members().size());

                final byte[] leaderAssignment = assignment(List.of(new TopicPartition("rows", 0), new TopicPartition("rows", 1)));
                final byte[] followerAssignment = assignment(List.of(new TopicPartition("rows", 2), new TopicPartition("rows", 3)));
                final Future<SyncGroupResponseData> followerSync = pool.submit(() -> sync(followerClient, SYNC_V,
                    syncRequest(group, follower.memberId(), null, 1, Map.of())));
                final SyncGroupResponseData leaderSync = sync(leaderClient, SYNC_V, syncRequest(group, leader.memberId(), null, 1,
                    Map.of(leader.memberId(), leaderAssignment, follower.memberId(), followerAssignment)));
                assertError(Errors.NONE, leaderSync.errorCode(), "leader's SyncGroup");
                assertArrayEquals(leaderAssignment, leaderSync.assignment());
                assertEquals("range", leaderSync.protocolName());
                assertEquals("consumer", leaderSync.protocolType());
                final SyncGroupResponseData fs = followerSync.get(20, TimeUnit.SECONDS);
                assertError(Errors.NONE, fs.errorCode(), "follower's SyncGroup");
                assertArrayEquals(followerAssignment, fs.assignment(), "the follower gets what the leader assigned it");

                d = describe(control, (short)5, group);
                assertEquals("Stable", d.groupState());
                assertEquals("consumer", d.protocolType());
                assertEquals("range", d.protocolData());
                final Map<String, DescribeGroupsResponseData.DescribedGroupMember> members = new HashMap<>();
                d.members().forEach(m -> members.put(m.memberId(), m));
                assertEquals(2, members.size());
                assertArrayEquals(leaderAssignment, members.get(leader.memberId()).memberAssignment());
                assertArrayEquals(followerAssignment, members.get(follower.memberId()).memberAssignment());
                for (final DescribeGroupsResponseData.DescribedGroupMember m : d.members())
                {
                    assertArrayEquals(subscription("rows"), m.memberMetadata());
                    assertEquals("raw-test", m.clientId());
                    assertFalse(m.clientHost().isEmpty(), "client host");
                }
                assertError(Errors.NONE, heartbeat(ra, group, a0.memberId(), null, 1), "a heartbeats");
                assertError(Errors.NONE, heartbeat(rb, group, b0.memberId(), null, 1), "b heartbeats");

                final ListGroupsResponseData all = RawGroups.listGroups(control, (short)5, List.of());
                final ListGroupsResponseData.ListedGroup listed = all.groups().stream().filter(g -> g.groupId().equals(group))
                    .findFirst().orElseThrow(() -> new AssertionError("not listed: " + all));
                assertEquals("consumer", listed.protocolType());
                assertEquals("Stable", listed.groupState());
                assertEquals("classic", listed.groupType());
                assertTrue(listed(RawGroups.listGroups(control, (short)4, List.of("Stable")), group), "listed as Stable");
                assertFalse(listed(RawGroups.listGroups(control, (short)4, List.of("Empty")), group), "not listed as Empty");

                // one LeaveGroup for both members and a stranger
                final LeaveGroupResponseData left = RawGroups.leave(control, RawGroups.LEAVE_V, new LeaveGroupRequestData().setGroupId(group)
                    .setMembers(List.of(new LeaveGroupRequestData.MemberIdentity().setMemberId(a0.memberId()),
                        new LeaveGroupRequestData.MemberIdentity().setMemberId(b0.memberId()),
                        new LeaveGroupRequestData.MemberIdentity().setMemberId("stranger"))));
                assertError(Errors.NONE, left.errorCode(), "batch LeaveGroup");
                assertEquals(3, left.members().size());
                for (final LeaveGroupResponseData.MemberResponse m : left.members())
                {
                    assertError(m.memberId().equals("stranger") ? Errors.UNKNOWN_MEMBER_ID : Errors.NONE, m.errorCode(), m.memberId());
                }
                d = describe(control, (short)5, group);
                assertEquals("Empty", d.groupState(), "everyone left");
                assertTrue(d.members().isEmpty());
                assertError(Errors.UNKNOWN_MEMBER_ID, heartbeat(ra, group, a0.memberId(), null, 1), "a is gone");

                assertError(Errors.NONE, RawGroups.deleteGroups(control, List.of(group)).results().find(group).errorCode(), "DeleteGroups");
                d = describe(control, (short)5, group);
                assertError(Errors.NONE, d.errorCode(), "v5");
                assertEquals("Dead", d.groupState());
                d = describe(control, (short)6, group);
                assertError(Errors.GROUP_ID_NOT_FOUND, d.errorCode(), "v6 (KIP-1043)");
                assertEquals("Dead", d.groupState());
                assertFalse(listed(RawGroups.listGroups(control, (short)5, List.of()), group), "deleted groups are not listed");
            }
            finally
            {
                pool.shutdownNow();
            }
        }
    }

    /**
     * A member that stops heartbeating is removed once its session.timeout.ms (3 s here) has passed: the
     * group goes from Stable to Empty and the member's next Heartbeat gets UNKNOWN_MEMBER_ID. A member with
     * the same timeout that keeps heartbeating (every 250 ms) stays for at least twice that long. The session
     * is 3 s rather than Kafka's 1 s minimum so that a loaded machine's stall (a join, sync and describe before
     * the silent member's session ends; a late heartbeat) is not taken for an expiry. The time is the
     * coordinators' ({@link SteppedClock}), stepped 250 ms after each heartbeat of the member that stays
     * (before issue 17's build work the test slept 250 ms there and waited out the 6 s in real time).
     */
    @Test
    void aMemberThatStopsHeartbeatingIsRemovedAfterItsSessionTimeout() throws Exception
    {
        final int session = 3_000;
        final int pace = 250;
        final SteppedClock clock = new SteppedClock();
        try (RunningBroker broker = new RunningBroker(dir, Map.of("group.initial.rebalance.delay.ms", "0",
                "group.min.session.timeout.ms", "1000"), clock);
            Admin admin = broker.admin();
            RawClient silent = new RawClient(port(broker));
            RawClient beating = new RawClient(port(broker)))
        {
            Members.createTopic(admin, "pulse", 1);
            awaitCoordinator(silent, "silent");
            awaitCoordinator(beating, "beating");
            final List<TopicPartition> p0 = List.of(new TopicPartition("pulse", 0));
            final RawGroups.Joined quiet = joinAlone(silent, "silent", null, session, "pulse", p0);
            // at once, before the other group's join: on a loaded machine that took longer than a 1 s
            // session and the silent member had rightly gone by the time it was described
            assertEquals("Stable", describe(silent, (short)5, "silent").groupState(), "just joined");
            final RawGroups.Joined alive = joinAlone(beating, "beating", null, session, "pulse", p0);

            // heartbeats until the silent member is gone and twice the session has passed, whichever is later
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            long stepped = 0;
            DescribeGroupsResponseData.DescribedGroup d = describe(silent, (short)5, "silent");
            while (!d.groupState().equals("Empty") || stepped < 2L * session)
            {
                assertTrue(System.nanoTime() < deadline, "the silent member removed within 60 s: " + d.groupState());
                assertError(Errors.NONE, heartbeat(beating, "beating", alive.memberId(), null, alive.generation()),
                    "a member that heartbeats stays");
                clock.step(Duration.ofMillis(pace)); // the heartbeat's pace on the coordinators' clock
                stepped += pace;
                d = describe(silent, (short)5, "silent");
            }
            assertTrue(d.members().isEmpty(), "the silent member was removed");
            assertError(Errors.UNKNOWN_MEMBER_ID, heartbeat(silent, "silent", quiet.memberId(), null, quiet.generation()),
                "the expired member's heartbeat");
            final DescribeGroupsResponseData.DescribedGroup stillThere = describe(beating, (short)5, "beating");
            assertEquals("Stable", stillThere.groupState());
            assertEquals(alive.memberId(), stillThere.members().get(0).memberId());
        }
    }

    /**
     * Members a and b are Stable in generation g. A third joins: PreparingRebalance; a's Heartbeat says
     * REBALANCE_IN_PROGRESS, a may still commit offsets with generation g, and a rejoins; b does nothing.
     * When the rebalance timeout (2 s, well inside b's 30 s session) runs out, the join completes
     * without b: generation g+1 with a and the newcomer only, and b's Heartbeat gets UNKNOWN_MEMBER_ID.
     */
    @Test
    void aMemberThatDoesNotRejoinIsDroppedWhenTheRebalanceTimesOut() throws Exception
    {
        final String group = "laggards";
        final int session = 30_000;
        final int rebalance = 2_000;
        try (RunningBroker broker = new RunningBroker(dir, Map.of("group.initial.rebalance.delay.ms", "0"));
            Admin admin = broker.admin();
            RawClient ra = new RawClient(port(broker));
            RawClient rb = new RawClient(port(broker));
            RawClient rc = new RawClient(port(broker)))
        {
            Members.createTopic(admin, "lag", 2);
            awaitCoordinator(ra, group);
            final ExecutorService pool = Executors.newFixedThreadPool(2);
            try
            {
                // a alone, then b joins and a rejoins: both Stable in one generation
                final RawGroups.Joined a1 = joinAlone(ra, group, null, session, "lag", List.of());
                final JoinGroupResponseData b0 = join(rb, JOIN_V, joinRequest(group, "", null, session, rebalance, "lag"));
                assertError(Errors.MEMBER_ID_REQUIRED, b0.errorCode(), "b's first join");
                final Future<JoinGroupResponseData> fb = pool.submit(() -> join(rb, JOIN_V, joinRequest(group, b0.memberId(), null, session,
                    rebalance, "lag")));
                awaitHeartbeatError(ra, group, a1.memberId(), a1.generation(), Errors.REBALANCE_IN_PROGRESS);
                final JoinGroupResponseData a2 = join(ra, JOIN_V, joinRequest(group, a1.memberId(), null, session, rebalance, "lag"));
                final JoinGroupResponseData b2 = fb.get(20, TimeUnit.SECONDS);
                assertError(Errors.NONE, a2.errorCode(), "a rejoined");
                assertError(Errors.NONE, b2.errorCode(), "b joined");
                final int g = a2.generationId();
                assertEquals(a1.generation() + 1, g, "a new generation for b");
                assertEquals(g, b2.generationId());
                final RawClient leaderClient = a2.leader().equals(a2.memberId()) ? ra : rb;
                final Future<SyncGroupResponseData> followerSync = pool.submit(() -> a2.leader().equals(a2.memberId())
                    ? sync(rb, SYNC_V, syncRequest(group, b2.memberId(), null, g, Map.of()))
                    : sync(ra, SYNC_V, syncRequest(group, a2.memberId(), null, g, Map.of())));
                assertError(Errors.NONE, sync(leaderClient, SYNC_V, syncRequest(group, a2.leader(), null, g, Map.of(
                    a2.memberId(), assignment(List.of(new TopicPartition("lag", 0))),
                    b2.memberId(), assignment(List.of(new TopicPartition("lag", 1)))))).errorCode(), "leader's sync");
                assertError(Errors.NONE, followerSync.get(20, TimeUnit.SECONDS).errorCode(), "follower's sync");
                assertEquals("Stable", describe(ra, (short)5, group).groupState());

                // c joins; a rejoins, b stays silent
                final JoinGroupResponseData c0 = join(rc, JOIN_V, joinRequest(group, "", null, session, rebalance, "lag"));
                assertError(Errors.MEMBER_ID_REQUIRED, c0.errorCode(), "c's first join");
                final long start = System.nanoTime();
                final Future<JoinGroupResponseData> fc = pool.submit(() -> join(rc, JOIN_V, joinRequest(group, c0.memberId(), null, session,
                    rebalance, "lag")));
                awaitHeartbeatError(ra, group, a2.memberId(), g, Errors.REBALANCE_IN_PROGRESS);
                assertEquals("PreparingRebalance", describe(ra, (short)5, group).groupState());
                assertError(Errors.NONE, commitError(ra, RawGroups.COMMIT_V, commitRequest(group, a2.memberId(), null, g, "lag", 0, 1, "")),
                    "a member of generation g may commit while the group prepares the next one");
                final JoinGroupResponseData a3 = join(ra, JOIN_V, joinRequest(group, a2.memberId(), null, session, rebalance, "lag"));
                final JoinGroupResponseData c3 = fc.get(20, TimeUnit.SECONDS);
                final long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertError(Errors.NONE, a3.errorCode(), "a rejoined");
                assertError(Errors.NONE, c3.errorCode(), "c joined");
                assertEquals(g + 1, a3.generationId());
                assertEquals(g + 1, c3.generationId());
                final JoinGroupResponseData leader = a3.leader().equals(a3.memberId()) ? a3 : c3;
                assertEquals(List.of(a3.memberId(), c3.memberId()).stream().sorted().toList(),
                    leader.members().stream().map(JoinGroupResponseData.JoinGroupResponseMember::memberId).sorted().toList(),
                    "b was left out of the new generation");
                assertTrue(waitedMs < session - 5_000, "b was dropped by the rebalance timeout, not its session timeout: " + waitedMs + " ms");
                assertError(Errors.UNKNOWN_MEMBER_ID, heartbeat(rb, group, b2.memberId(), null, g), "b is no longer a member");
            }
            finally
            {
                pool.shutdownNow();
            }
        }
    }

    private static void awaitHeartbeatError(final RawClient raw, final String group, final String memberId, final int generation,
        final Errors expected) throws Exception
    {
        await(() ->
        {
            final short error = heartbeat(raw, group, memberId, null, generation);
            if (error == expected.code())
            {
                return true;
            }
            assertError(Errors.NONE, error, "heartbeat before " + expected);
            return false;
        }, Duration.ofSeconds(30), "a heartbeat answered " + expected);
    }

    /**
     * A static member (group.instance.id) needs no MEMBER_ID_REQUIRED round. When it joins again with an
     * empty member id (a restart) while the group is Stable, the coordinator gives it a new member id in
     * the same generation, without a rebalance (v9: as leader it is told to skip the assignment), and
     * SyncGroup returns the assignment it had. The old member id is fenced: Heartbeat, SyncGroup,
     * OffsetCommit and JoinGroup with it and the instance id get FENCED_INSTANCE_ID; without the
     * instance id, UNKNOWN_MEMBER_ID.
     */
    @Test
    void aRestartedStaticMemberGetsItsAssignmentBackAndItsOldIdIsFenced() throws Exception
    {
        final String group = "statics";
        try (RunningBroker broker = new RunningBroker(dir, Map.of("group.initial.rebalance.delay.ms", "0"));
            Admin admin = broker.admin();
            RawClient raw = new RawClient(port(broker)))
        {
            Members.createTopic(admin, "fixed", 3);
            awaitCoordinator(raw, group);
            final List<TopicPartition> mine = List.of(new TopicPartition("fixed", 0), new TopicPartition("fixed", 2));
            final RawGroups.Joined first = joinAlone(raw, group, "instance-1", 30_000, "fixed", mine);
            assertArrayEquals(assignment(mine), first.assignment());

            final JoinGroupResponseData again = join(raw, JOIN_V, joinRequest(group, "", "instance-1", 30_000, 30_000, "fixed"));
            assertError(Errors.NONE, again.errorCode(), "a static member rejoins at once");
            assertNotEquals(first.memberId(), again.memberId(), "with a new member id");
            assertEquals(first.generation(), again.generationId(), "no new generation");
            assertEquals(again.memberId(), again.leader(), "it still leads");
            assertTrue(again.skipAssignment(), "v9: the leader need not assign again");
            assertEquals("Stable", describe(raw, (short)5, group).groupState(), "no rebalance");
            final SyncGroupResponseData synced = sync(raw, SYNC_V, syncRequest(group, again.memberId(), "instance-1", again.generationId(),
                Map.of()));
            assertError(Errors.NONE, synced.errorCode(), "sync after the static rejoin");
            assertArrayEquals(assignment(mine), synced.assignment(), "the assignment it had");

            final String old = first.memberId();
            final int gen = first.generation();
            assertError(Errors.FENCED_INSTANCE_ID, heartbeat(raw, group, old, "instance-1", gen), "heartbeat with the old id");
            assertError(Errors.UNKNOWN_MEMBER_ID, heartbeat(raw, group, old, null, gen), "the old id without instance id");
            assertError(Errors.FENCED_INSTANCE_ID, sync(raw, SYNC_V, syncRequest(group, old, "instance-1", gen, Map.of())).errorCode(),
                "sync with the old id");
            assertError(Errors.FENCED_INSTANCE_ID, commitError(raw, RawGroups.COMMIT_V, commitRequest(group, old, "instance-1", gen,
                "fixed", 0, 1, "")), "commit with the old id");
            assertError(Errors.FENCED_INSTANCE_ID, join(raw, JOIN_V, joinRequest(group, old, "instance-1", 30_000, 30_000, "fixed"))
                .errorCode(), "join with the old id");
            assertError(Errors.NONE, heartbeat(raw, group, again.memberId(), "instance-1", gen), "the new id heartbeats");

            final DescribeGroupsResponseData.DescribedGroup d = describe(raw, (short)5, group);
            assertEquals("Stable", d.groupState());
            assertEquals(1, d.members().size());
            assertEquals(again.memberId(), d.members().get(0).memberId());
            assertEquals("instance-1", d.members().get(0).groupInstanceId());
            assertArrayEquals(assignment(mine), d.members().get(0).memberAssignment());
        }
    }

    /**
     * OffsetFetch v8 answers several groups in one request: named partitions (-1 and empty metadata where
     * nothing was committed), all partitions (topics null), and a group that does not exist (its partitions
     * at -1, no error); OffsetFetch v7 answers one group the old way.
     */
    @Test
    void offsetFetchAnswersSeveralGroupsInOneRequest() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
            RawClient raw = new RawClient(port(broker)))
        {
            Members.createTopic(admin, "books", 2);
            awaitCoordinator(raw, "g1");
            awaitCoordinator(raw, "g2");
            assertError(Errors.NONE, commitError(raw, RawGroups.COMMIT_V, commitRequest("g1", "", null, -1, "books", 0, 5, "m1")), "g1");
            assertError(Errors.NONE, commitError(raw, RawGroups.COMMIT_V, commitRequest("g2", "", null, -1, "books", 1, 7, "m2")), "g2");

            final OffsetFetchRequestData request = new OffsetFetchRequestData().setGroups(List.of(
                new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("g1").setTopics(List.of(
                    new OffsetFetchRequestData.OffsetFetchRequestTopics().setName("books").setPartitionIndexes(List.of(0, 1)))),
                new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("g2").setTopics(null),
                new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("g3").setTopics(List.of(
                    new OffsetFetchRequestData.OffsetFetchRequestTopics().setName("books").setPartitionIndexes(List.of(0))))));
            final OffsetFetchResponseData response = RawGroups.fetchOffsets(raw, (short)8, request);
            assertEquals(3, response.groups().size());
            final Map<String, OffsetFetchResponseData.OffsetFetchResponseGroup> groups = new HashMap<>();
            response.groups().forEach(g -> groups.put(g.groupId(), g));

            final OffsetFetchResponseData.OffsetFetchResponseGroup g1 = groups.get("g1");
            assertError(Errors.NONE, g1.errorCode(), "g1");
            assertEquals(Map.of(0, 5L, 1, -1L), offsets(g1));
            assertEquals(Optional.of("m1"), g1.topics().get(0).partitions().stream().filter(p -> p.partitionIndex() == 0)
                .map(OffsetFetchResponseData.OffsetFetchResponsePartitions::metadata).findFirst());
            final OffsetFetchResponseData.OffsetFetchResponseGroup g2 = groups.get("g2");
            assertError(Errors.NONE, g2.errorCode(), "g2");
            assertEquals(Map.of(1, 7L), offsets(g2), "all committed partitions of g2");
            assertEquals("m2", g2.topics().get(0).partitions().get(0).metadata());
            final OffsetFetchResponseData.OffsetFetchResponseGroup g3 = groups.get("g3");
            assertError(Errors.NONE, g3.errorCode(), "a group that does not exist");
            assertEquals(Map.of(0, -1L), offsets(g3));

            final OffsetFetchResponseData old = RawGroups.fetchOffsets(raw, (short)7, new OffsetFetchRequestData().setGroupId("g1")
                .setTopics(List.of(new OffsetFetchRequestData.OffsetFetchRequestTopic().setName("books").setPartitionIndexes(List.of(0)))));
            assertError(Errors.NONE, old.errorCode(), "v7");
            assertEquals(5L, old.topics().get(0).partitions().get(0).committedOffset());
            assertEquals("m1", old.topics().get(0).partitions().get(0).metadata());
        }
    }

    private static Map<Integer, Long> offsets(final OffsetFetchResponseData.OffsetFetchResponseGroup group)
    {
        final Map<Integer, Long> map = new HashMap<>();
        for (final OffsetFetchResponseData.OffsetFetchResponseTopics t : group.topics())
        {
            assertEquals("books", t.name());
            for (final OffsetFetchResponseData.OffsetFetchResponsePartitions p : t.partitions())
            {
                assertError(Errors.NONE, p.errorCode(), "partition " + p.partitionIndex());
                map.put(p.partitionIndex(), p.committedOffset());
            }
        }
        return map;
    }
}
