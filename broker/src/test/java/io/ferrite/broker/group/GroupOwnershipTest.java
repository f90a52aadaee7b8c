package io.ferrite.broker.group;

import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.broker.Errors;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.coordinator.CoordinatorAgent;
import io.ferrite.broker.coordinator.CoordinatorCall;
import io.ferrite.broker.coordinator.CoordinatorClock;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.CachedNanoClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * In a cluster the group coordinator serves the groups of the {@code __consumer_offsets} partitions this node leads
 * ({@link GroupOwnership}), the agent stepped by an AgentInvoker (this test's thread is the agent's): a group of a
 * partition not led here is NOT_COORDINATOR (nothing made for it), COORDINATOR_LOAD_IN_PROGRESS once led until the agent
 * loaded it, then served; when the node stops leading it, NOT_COORDINATOR at once, and the agent's unload answers the
 * member waiting in a JoinGroup NOT_COORDINATOR and forgets the group. A single node's coordinator refuses nothing.
 */
class GroupOwnershipTest
{
    @TempDir
    Path dir;

    private LogManager logs;
    private TopicRegistry topics;
    private GroupCoordinator coordinator;
    private CoordinatorAgent agent;
    private AgentInvoker invoker;
    private final List<Throwable> escaped = new ArrayList<>();
    /** A group of partition 0 of the two, and one of partition 1. */
    private String group0;
    private String group1;

    @BeforeEach
    void open() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        topics = new TopicRegistry(logs, 1);
        topics.load();
        topics.create(GroupCoordinator.OFFSETS_TOPIC, 2, java.util.Map.of()); // as the image's follows/leads make it here
        final LogThread logThread = new LogThread(0, 2, 64, new LogThread.Completion()
        {
            @Override
            public void completed(final int networkThread)
            {
            }

            @Override
            public void highWatermarkAdvanced(final Partition partition)
            {
            }
        });
        final GroupCoordinator.Settings settings = new GroupCoordinator.Settings(10, 300_000, 0, 100, 7L * 24 * 3600 * 1000,
            600_000, 2, 1 << 20, 4096);
        final CachedEpochClock wall = new CachedEpochClock();
        wall.update(1_700_000_000_000L);
        coordinator = new GroupCoordinator(topics, new AdminAgent(topics), settings, new LogThread[] {logThread}, 1,
            new CoordinatorClock(wall, new CachedNanoClock()));
        for (int i = 0; group0 == null || group1 == null; i++)
        {
            final String id = "g" + i;
            if (CoordinatorTopic.partitionFor(id, 2) == 0)
            {
                group0 = group0 == null ? id : group0;
            }
            else
            {
                group1 = group1 == null ? id : group1;
            }
        }
    }

    private void start()
    {
        coordinator.load();
        agent = coordinator.agent();
        invoker = new AgentInvoker(escaped::add, null, agent);
        invoker.start();
    }

    @AfterEach
    void close() throws Exception
    {
        if (invoker != null)
        {
            invoker.close();
        }
        logs.close();
        assertEquals(List.of(), escaped, "errors that escaped the agent's duty cycle");
    }

    @Test
    void inAClusterOnlyTheGroupsOfThePartitionsLedHereAreServedLoadedFirstAndUnloadedWhenTheLeadershipGoes()
    {
        coordinator.followLeaders(groupId -> new PartitionOwnership.Located(Errors.NONE, 2, "127.0.0.1", 9092));
        start();
        final GroupOwnership ownership = coordinator.ownership();

        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> notHere = join(group0, "");
        assertTrue(agent.offer(notHere));
        invoker.invoke();
        assertTrue(notHere.refused(), "a group of a partition not led here is refused before its work");
        assertEquals(Errors.NOT_COORDINATOR, notHere.refusedWith());
        assertNull(coordinator.describe(group0), "nothing made for it");

        ownership.led(0, 5);
        assertEquals(Errors.COORDINATOR_LOAD_IN_PROGRESS, ownership.error(group0), "led, not loaded yet");
        assertEquals(Errors.NONE, HeartbeatHandler.refusedAs(ownership.error(group0)), "a heartbeat meanwhile: NONE, as Kafka 4.4");
        assertEquals(Errors.NOT_COORDINATOR, HeartbeatHandler.refusedAs(ownership.error(group1)));
        assertEquals(Errors.NOT_COORDINATOR, ownership.error(group1), "partition 1 is led elsewhere");
        invoker.invoke(); // the load
        assertEquals(Errors.NONE, ownership.error(group0));

        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> first = join(group0, "");
        assertTrue(agent.offer(first));
        invoker.invoke();
        assertFalse(first.refused());
        assertEquals(Errors.NONE, first.result().error, "the first member joins");
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> second = join(group0, "");
        assertTrue(agent.offer(second));
        invoker.invoke();
        assertFalse(second.answered(), "the second member waits for the first to rejoin");

        ownership.resigned(0);
        assertEquals(Errors.NOT_COORDINATOR, ownership.error(group0), "at once, before the agent unloads");
        invoker.invoke(); // the unload
        assertTrue(second.answered(), "the waiting JoinGroup answered by the unload");
        assertEquals(Errors.NOT_COORDINATOR, second.result().error);
        assertNull(coordinator.describe(group0), "the group unloaded");

        ownership.led(0, 7);
        invoker.invoke();
        assertEquals(Errors.NONE, ownership.error(group0), "led again: loaded again");
    }

    @Test
    void aSingleNodeCoordinatesEveryGroup()
    {
        start();
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> join = join(group1, "");
        assertTrue(agent.offer(join));
        invoker.invoke();
        assertFalse(join.refused());
        assertEquals(Errors.NONE, join.result().error);
        assertEquals(Errors.NONE, coordinator.ownership().error(group0));
    }

    /** Review of coord, H1: a load or an unload is never handed through the bounded request queue, so a full one loses neither. */
    @Test
    void aResignationMeetingAFullRequestQueueStillUnloadsBeforeTheNextLoad()
    {
        final GroupOwnership ownership = ledWithAMember();
        assertEquals(1, coordinator.describe(group0).members().size());

        fillQueue();
        ownership.resigned(0);
        drain();
        ownership.led(0, 7); // led again later: a fresh load from the log is due
        drain();
        assertEquals(Errors.NONE, ownership.error(group0));
        // the log holds no member (members are never written as such, and this log thread never ran): a load finds none
        assertNull(coordinator.describe(group0), "the group of the previous leadership unloaded");
    }

    @Test
    void aLeadMeetingAFullRequestQueueIsLoadedAllTheSame()
    {
        coordinator.followLeaders(groupId -> new PartitionOwnership.Located(Errors.NONE, 2, "127.0.0.1", 9092));
        start();
        final GroupOwnership ownership = coordinator.ownership();
        fillQueue();
        ownership.led(0, 5);
        drain();
        assertEquals(Errors.NONE, ownership.error(group0), "loaded once the agent ran a pass");
    }

    @Test
    void aResignationAndALeadBetweenTwoPassesUnloadThenLoadWhileANewEpochAloneKeepsMemory()
    {
        final GroupOwnership ownership = ledWithAMember();

        ownership.led(0, 6); // a new epoch, no resignation: what is in memory is the log's
        assertEquals(Errors.NONE, ownership.error(group0));
        invoker.invoke();
        assertEquals(1, coordinator.describe(group0).members().size(), "kept");

        ownership.resigned(0);
        ownership.led(0, 8); // another node may have led it in between: memory is stale
        assertEquals(Errors.COORDINATOR_LOAD_IN_PROGRESS, ownership.error(group0));
        invoker.invoke();
        assertEquals(Errors.NONE, ownership.error(group0));
        assertNull(coordinator.describe(group0), "unloaded before the load (the log holds no member)");
    }

    /** Review of coord, L4: a load that throws leaves its groups NOT_COORDINATOR, not loading forever. */
    @Test
    void aLoadThatThrowsLeavesItsGroupsNotCoordinatedHereUntilTheLeadershipChanges() throws Exception
    {
        coordinator.followLeaders(groupId -> new PartitionOwnership.Located(Errors.NONE, 2, "127.0.0.1", 9092));
        start();
        final GroupOwnership ownership = coordinator.ownership();
        topics.topic(GroupCoordinator.OFFSETS_TOPIC).partitions[0].log.close(); // its replay throws LogClosedException
        ownership.led(0, 5);
        ownership.led(1, 5);
        invoker.invoke();
        invoker.invoke();
        assertEquals(Errors.NOT_COORDINATOR, ownership.error(group0));
        assertEquals(Errors.NONE, ownership.error(group1), "the other partition loads");
        ownership.resigned(0);
        invoker.invoke();
        assertEquals(Errors.NOT_COORDINATOR, ownership.error(group0));
    }

    /** Review of coord, L1: a null or empty group id is the work's to refuse (INVALID_GROUP_ID), as on a single node. */
    @Test
    void aNullOrEmptyGroupIdIsAnsweredByTheWorkInACluster()
    {
        coordinator.followLeaders(groupId -> new PartitionOwnership.Located(Errors.NONE, 2, "127.0.0.1", 9092));
        start();
        for (final String id : new String[] {null, ""})
        {
            final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> join = join(id, "");
            assertTrue(agent.offer(join));
            invoker.invoke();
            assertFalse(join.refused(), "id " + id);
            assertEquals(Errors.INVALID_GROUP_ID, join.result().error, "id " + id);
        }
    }

    /**
     * Review of coord, M3: DescribeGroups, DeleteGroups and a multi-group OffsetFetch answer a group not coordinated here
     * NOT_COORDINATOR per group (the Admin retries it at its coordinator), not GROUP_ID_NOT_FOUND or no offsets.
     */
    @Test
    void theMultiGroupApisAnswerAGroupNotCoordinatedHereNotCoordinatorPerGroup() throws Exception
    {
        coordinator.followLeaders(groupId -> new PartitionOwnership.Located(Errors.NONE, 2, "127.0.0.1", 9092));
        start();
        coordinator.ownership().led(0, 5);
        invoker.invoke();
        final List<String> both = List.of(group0, group1);

        final var described = agent.call(coordinator, (c, now) -> DescribeGroupsHandler.describe(c, both));
        invoker.invoke();
        assertEquals(Errors.NONE, described.get().errors()[0]);
        assertEquals(Errors.NOT_COORDINATOR, described.get().errors()[1]);

        final var read = agent.call(coordinator, (c, now) -> OffsetFetchHandler.read(c, List.of(new OffsetFetchHandler.Asked(group0,
            null), new OffsetFetchHandler.Asked(group1, null)), false));
        invoker.invoke();
        assertEquals(Errors.NONE, read.get().get(0).error());
        assertEquals(Errors.NOT_COORDINATOR, read.get().get(1).error());

        final var deleted = agent.call(coordinator, (c, now) -> c.deleteGroups(both));
        invoker.invoke();
        assertEquals(Errors.GROUP_ID_NOT_FOUND, deleted.get().errors()[0], "coordinated here, and no such group");
        assertEquals(Errors.NOT_COORDINATOR, deleted.get().errors()[1]);
    }

    /** In a cluster, partition 0 led at epoch 5 and loaded, a member joined to {@code group0}. */
    private GroupOwnership ledWithAMember()
    {
        coordinator.followLeaders(groupId -> new PartitionOwnership.Located(Errors.NONE, 2, "127.0.0.1", 9092));
        start();
        final GroupOwnership ownership = coordinator.ownership();
        ownership.led(0, 5);
        invoker.invoke();
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> first = join(group0, "");
        assertTrue(agent.offer(first));
        invoker.invoke();
        assertEquals(Errors.NONE, first.result().error);
        return ownership;
    }

    private void fillQueue()
    {
        int n = 0;
        while (agent.offer(new CoordinatorCall<GroupCoordinator, Object>(coordinator, (c, now) -> null, (out, at, r) -> at,
            (out, at, e) -> at, () -> { })))
        {
            n++;
        }
        assertTrue(n > 0);
    }

    private void drain()
    {
        for (int i = 0; i < 10_000 && agent.queued() > 0; i++)
        {
            invoker.invoke();
        }
        invoker.invoke();
        assertEquals(0, agent.queued());
    }

    private CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> join(final String groupId, final String memberId)
    {
        final AtomicInteger woken = new AtomicInteger();
        return new CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter>(coordinator, (c, now) -> c.join(groupId, memberId,
            null, "client", "/127.0.0.1", 10_000, 60_000, "consumer", List.of(new Member.Protocol("range", new byte[] {1})), false,
            false), (out, at, result) -> at, (out, at, error) -> at, woken::incrementAndGet)
            .gated(() -> coordinator.ownership().error(groupId));
    }
}
