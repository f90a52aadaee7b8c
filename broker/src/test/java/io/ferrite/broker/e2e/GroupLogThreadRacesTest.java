package io.ferrite.broker.e2e;

import io.ferrite.broker.coordinator.AwaitingWrites;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.ferrite.broker.e2e.GroupLogThreadWritesTest.barrier;
import static io.ferrite.broker.e2e.GroupLogThreadWritesTest.holdLogThread;
import static io.ferrite.broker.e2e.GroupLogThreadWritesTest.overrides;
import static io.ferrite.broker.e2e.RawGroups.COMMIT_V;
import static io.ferrite.broker.e2e.RawGroups.JOIN_V;
import static io.ferrite.broker.e2e.RawGroups.SYNC_V;
import static io.ferrite.broker.e2e.RawGroups.assertError;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Races between the coordinator's writes on their way through the offsets partition's log thread
 * (held still by a task, see {@link GroupLogThreadWritesTest}) and the group requests that come
 * meanwhile. Found in the review of the change that made the log thread the writer.
 */
class GroupLogThreadRacesTest
{
    private static final String TOPIC = "parcels";
    private static final String GROUP = "sorters";

    @TempDir
    Path dir;

    /**
     * The leader's SyncGroup of generation N is on its way to the log thread when a second member
     * joins: the rebalance fails the waiting SyncGroup (REBALANCE_IN_PROGRESS), both members join
     * generation N+1 and sync again. Generation N's write, answered later, is dropped (the group moved
     * on) — and generation N+1's leader SyncGroup must still write the group and answer both members,
     * as Kafka 4.4 does.
     */
    @Test
    void aSyncOfTheNextGenerationIsWrittenWhileTheLastGenerationsWriteIsOnItsWay() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, overrides()))
        {
            broker.broker.admin().createTopic(TOPIC, 1, Map.of()).get(20, TimeUnit.SECONDS);
            final int port = broker.broker.address().getPort();
            final List<TopicPartition> partitions = List.of(new TopicPartition(TOPIC, 0));
            try (RawClient first = new RawClient(port); RawClient second = new RawClient(port); RawClient other = new RawClient(port))
            {
                assertError(Errors.NONE, RawGroups.commitError(other, COMMIT_V, RawGroups.commitRequest("warm-up", "", null, -1, TOPIC, 0,
                    1, "")), "a commit of another group (creates the offsets topic)");
                JoinGroupResponseData one = RawGroups.join(first, JOIN_V, RawGroups.joinRequest(GROUP, "", null, 30_000, 30_000, TOPIC));
                assertError(Errors.MEMBER_ID_REQUIRED, one.errorCode(), "first JoinGroup of the first member");
                one = RawGroups.join(first, JOIN_V, RawGroups.joinRequest(GROUP, one.memberId(), null, 30_000, 30_000, TOPIC));
                assertError(Errors.NONE, one.errorCode(), "the first member's JoinGroup");
                final String firstId = one.memberId();
                final int generation = one.generationId();
                final CountDownLatch release = holdLogThread(broker);
                final int syncs;
                final int secondSync;
                try
                {
                    final int oldSync = first.send(ApiKeys.SYNC_GROUP, SYNC_V, RawGroups.syncRequest(GROUP, firstId, null, generation,
                        Map.of(firstId, RawGroups.assignment(partitions))));
                    barrier(other);
                    assertFalse(first.answered(), "generation " + generation + "'s SyncGroup answered while its write is held");
                    JoinGroupResponseData two = RawGroups.join(second, JOIN_V, RawGroups.joinRequest(GROUP, "", null, 30_000, 30_000,
                        TOPIC));
                    assertError(Errors.MEMBER_ID_REQUIRED, two.errorCode(), "first JoinGroup of the second member");
                    final String secondId = two.memberId();
                    final int secondJoin = second.send(ApiKeys.JOIN_GROUP, JOIN_V, RawGroups.joinRequest(GROUP, secondId, null, 30_000,
                        30_000, TOPIC));
                    assertError(Errors.REBALANCE_IN_PROGRESS, syncAnswer(first, oldSync, "generation " + generation).errorCode(),
                        "generation " + generation + "'s SyncGroup once the second member joins");
                    one = RawGroups.join(first, JOIN_V, RawGroups.joinRequest(GROUP, firstId, null, 30_000, 30_000, TOPIC));
                    assertError(Errors.NONE, one.errorCode(), "the first member's JoinGroup of the next generation");
                    two = new JoinGroupResponseData(new ByteBufferAccessor(second.receive(ApiKeys.JOIN_GROUP, JOIN_V, secondJoin)), JOIN_V);
                    assertError(Errors.NONE, two.errorCode(), "the second member's JoinGroup");
                    assertEquals(generation + 1, one.generationId(), "the next generation");
                    assertEquals(firstId, one.leader(), "the first member still leads");
                    syncs = first.send(ApiKeys.SYNC_GROUP, SYNC_V, RawGroups.syncRequest(GROUP, firstId, null, generation + 1,
                        Map.of(firstId, RawGroups.assignment(partitions), secondId, RawGroups.assignment(List.of()))));
                    secondSync = second.send(ApiKeys.SYNC_GROUP, SYNC_V, RawGroups.syncRequest(GROUP, secondId, null, generation + 1,
                        Map.of()));
                    barrier(other);
                }
                finally
                {
                    release.countDown();
                }
                final SyncGroupResponseData leader = syncAnswer(first, syncs, "generation " + (generation + 1) + " (leader)");
                assertError(Errors.NONE, leader.errorCode(), "the leader's SyncGroup of the next generation");
                assertArrayEquals(RawGroups.assignment(partitions), leader.assignment(), "the leader's assignment");
                assertError(Errors.NONE, syncAnswer(second, secondSync, "generation " + (generation + 1) + " (follower)").errorCode(),
                    "the second member's SyncGroup of the next generation");
            }
        }
    }

    /**
     * The offsets partition's log thread dies (a fault it cannot survive, thrown by a task on it)
     * while a commit waits in its queue: that commit is answered NOT_COORDINATOR (Kafka 4.4's answer
     * for a write that failed with KAFKA_STORAGE_ERROR), and so are the commit and the leader's
     * SyncGroup sent after its death (answered by the coordinator's side of the queues); none of them
     * changes what OffsetFetch returns.
     */
    @Test
    void writesToADeadLogThreadAreAnsweredNotCoordinator() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, overrides()))
        {
            broker.broker.admin().createTopic(TOPIC, 1, Map.of()).get(20, TimeUnit.SECONDS);
            final int port = broker.broker.address().getPort();
            try (RawClient committer = new RawClient(port); RawClient other = new RawClient(port))
            {
                assertError(Errors.NONE, RawGroups.commitError(other, COMMIT_V, outsideCommit(5)), "first commit (creates the offsets topic)");
                final CountDownLatch running = new CountDownLatch(1);
                final CountDownLatch release = new CountDownLatch(1);
                broker.broker.executeOnOwner(GroupLogThreadWritesTest.offsetsPartition(broker).owner, () ->
                {
                    running.countDown();
                    try
                    {
                        release.await(30, TimeUnit.SECONDS);
                    }
                    catch (final InterruptedException ex)
                    {
                        Thread.currentThread().interrupt();
                    }
                    throw new StackOverflowError("injected: a fault the log thread cannot survive");
                });
                assertTrue(running.await(20, TimeUnit.SECONDS), "the log thread runs the test's task");
                final int queued;
                try
                {
                    queued = committer.send(ApiKeys.OFFSET_COMMIT, COMMIT_V, outsideCommit(10));
                    barrier(other);
                    assertFalse(committer.answered(), "the commit was answered while its log thread was held");
                }
                finally
                {
                    release.countDown();
                }
                final OffsetCommitResponseData answer = new OffsetCommitResponseData(new ByteBufferAccessor(committer.receive(
                    ApiKeys.OFFSET_COMMIT, COMMIT_V, queued)), COMMIT_V);
                assertError(Errors.NOT_COORDINATOR, answer.topics().get(0).partitions().get(0).errorCode(),
                    "the commit queued to the log thread that died");
                assertError(Errors.NOT_COORDINATOR, RawGroups.commitError(committer, COMMIT_V, outsideCommit(15)),
                    "a commit sent after the log thread died");
                JoinGroupResponseData one = RawGroups.join(committer, JOIN_V, RawGroups.joinRequest("other-group", "", null, 30_000,
                    30_000, TOPIC));
                one = RawGroups.join(committer, JOIN_V, RawGroups.joinRequest("other-group", one.memberId(), null, 30_000, 30_000, TOPIC));
                assertError(Errors.NONE, one.errorCode(), "JoinGroup (writes nothing)");
                final int sync = committer.send(ApiKeys.SYNC_GROUP, SYNC_V, RawGroups.syncRequest("other-group", one.memberId(), null,
                    one.generationId(), Map.of(one.memberId(), RawGroups.assignment(List.of(new TopicPartition(TOPIC, 0))))));
                assertError(Errors.NOT_COORDINATOR, syncAnswer(committer, sync, "a group on the dead log thread").errorCode(),
                    "the leader's SyncGroup after the log thread died");
                assertEquals(5, committedOffset(other), "OffsetFetch after the refused commits");
            }
        }
    }

    /**
     * fsync durability, the offsets log's fsync held back: Kafka 4.4 schedules the leader's SyncGroup
     * as a write with offsets.commit.timeout.ms (5 s) as its timeout and answers a write that timed out
     * COORDINATOR_NOT_AVAILABLE (as an OffsetCommit here, {@code AwaitingWrites}); the SyncGroup must
     * not wait for the fsync for ever.
     */
    @Test
    void aLeadersSyncWaitingForAHeldFsyncIsAnsweredAfterTheWriteTimeout() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, overrides("ferrite.log.durability", "fsync")))
        {
            broker.broker.admin().createTopic(TOPIC, 1, Map.of()).get(20, TimeUnit.SECONDS);
            final int port = broker.broker.address().getPort();
            try (RawClient leader = new RawClient(port); RawClient other = new RawClient(port))
            {
                assertError(Errors.NONE, RawGroups.commitError(other, COMMIT_V, outsideCommit(5)), "first commit (creates the offsets topic)");
                JoinGroupResponseData one = RawGroups.join(leader, JOIN_V, RawGroups.joinRequest("other-group", "", null, 30_000,
                    30_000, TOPIC));
                one = RawGroups.join(leader, JOIN_V, RawGroups.joinRequest("other-group", one.memberId(), null, 30_000, 30_000, TOPIC));
                assertError(Errors.NONE, one.errorCode(), "JoinGroup");
                synchronized (FlushLock.of(GroupLogThreadWritesTest.offsetsPartition(broker).log)) // no fsync of the offsets log completes
                {
                    final int sync = leader.send(ApiKeys.SYNC_GROUP, SYNC_V, RawGroups.syncRequest("other-group", one.memberId(), null,
                        one.generationId(), Map.of(one.memberId(), RawGroups.assignment(List.of(new TopicPartition(TOPIC, 0))))));
                    assertError(Errors.COORDINATOR_NOT_AVAILABLE, syncAnswer(leader, sync, "a leader whose write waits for a held fsync")
                        .errorCode(), "the leader's SyncGroup whose write timed out");
                }
            }
        }
    }

    /**
     * Two commits of the same partition from two connections, both on their way to the held log
     * thread: appended, answered and applied in the order they were sent, so OffsetFetch returns
     * the later one, before and after a restart (the log's last record for the key).
     */
    @Test
    void twoCommitsOfOnePartitionOnTheirWayAreStoredInTheOrderSent() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, overrides()))
        {
            broker.broker.admin().createTopic(TOPIC, 1, Map.of()).get(20, TimeUnit.SECONDS);
            final int port = broker.broker.address().getPort();
            try (RawClient a = new RawClient(port); RawClient b = new RawClient(port); RawClient other = new RawClient(port))
            {
                assertError(Errors.NONE, RawGroups.commitError(other, COMMIT_V, outsideCommit(5)), "first commit (creates the offsets topic)");
                final CountDownLatch release = holdLogThread(broker);
                final int first;
                final int second;
                try
                {
                    first = a.send(ApiKeys.OFFSET_COMMIT, COMMIT_V, outsideCommit(7));
                    barrier(other);
                    second = b.send(ApiKeys.OFFSET_COMMIT, COMMIT_V, outsideCommit(8));
                    barrier(other);
                    assertEquals(5, committedOffset(other), "OffsetFetch while both commits wait for the log thread");
                }
                finally
                {
                    release.countDown();
                }
                assertError(Errors.NONE, new OffsetCommitResponseData(new ByteBufferAccessor(b.receive(ApiKeys.OFFSET_COMMIT, COMMIT_V,
                    second)), COMMIT_V).topics().get(0).partitions().get(0).errorCode(), "the second commit");
                assertError(Errors.NONE, new OffsetCommitResponseData(new ByteBufferAccessor(a.receive(ApiKeys.OFFSET_COMMIT, COMMIT_V,
                    first)), COMMIT_V).topics().get(0).partitions().get(0).errorCode(), "the first commit");
                assertEquals(8, committedOffset(other), "OffsetFetch once both are answered");
            }
            broker.restart();
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                assertEquals(8, committedOffset(raw), "after a restart");
            }
        }
    }

    private static OffsetCommitRequestData outsideCommit(final long offset)
    {
        return RawGroups.commitRequest(GROUP, "", null, -1, TOPIC, 0, offset, "");
    }

    private static long committedOffset(final RawClient raw) throws IOException
    {
        final OffsetFetchResponseData response = RawGroups.fetchOffsets(raw, (short)7, new OffsetFetchRequestData().setGroupId(GROUP)
            .setTopics(List.of(new OffsetFetchRequestData.OffsetFetchRequestTopic().setName(TOPIC).setPartitionIndexes(List.of(0)))));
        assertError(Errors.NONE, response.errorCode(), "OffsetFetch");
        return response.topics().get(0).partitions().get(0).committedOffset();
    }

    /** The SyncGroup's answer; a read that times out (RawClient: 20 s) is the failure it is, named. */
    private static SyncGroupResponseData syncAnswer(final RawClient raw, final int id, final String what) throws IOException
    {
        try
        {
            return new SyncGroupResponseData(new ByteBufferAccessor(raw.receive(ApiKeys.SYNC_GROUP, SYNC_V, id)), SYNC_V);
        }
        catch (final SocketTimeoutException ex)
        {
            return fail("the SyncGroup of " + what + " was not answered within 20 s");
        }
    }
}
