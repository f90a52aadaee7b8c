package io.ferrite.broker.e2e;

import io.ferrite.broker.group.GroupCoordinator;
import io.ferrite.broker.topic.Partition;
import io.ferrite.log.PartitionLog;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.ferrite.broker.e2e.RawGroups.COMMIT_V;
import static io.ferrite.broker.e2e.RawGroups.JOIN_V;
import static io.ferrite.broker.e2e.RawGroups.LEAVE_V;
import static io.ferrite.broker.e2e.RawGroups.SYNC_V;
import static io.ferrite.broker.e2e.RawGroups.assertError;
import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The group coordinator writes {@code __consumer_offsets} through the log thread that owns the
 * partition, like any produce, and changes memory only once that log thread answered. The log thread
 * is held still by a task the test runs on it ({@code Broker.executeOnOwner}) until a latch opens;
 * "not done yet" is observed after a barrier, never after a sleep: the broker has one network thread,
 * which handles the group request before an ApiVersions sent on another connection after it, so once
 * that ApiVersions is answered whatever the request did at once is done (and an answer would be readable).
 */
class GroupLogThreadWritesTest
{
    private static final String TOPIC = "parcels";
    private static final String GROUP = "sorters";
    private static final short FETCH_V = 7;

    @TempDir
    Path dir;

    static Map<String, String> overrides(final String... more)
    {
        final Map<String, String> o = new HashMap<>(Map.of("group.initial.rebalance.delay.ms", "0", "offsets.topic.num.partitions", "1",
            "num.network.threads", "1"));
        for (int i = 0; i < more.length; i += 2)
        {
            o.put(more[i], more[i + 1]);
        }
        return o;
    }

    static Partition offsetsPartition(final RunningBroker broker)
    {
        return broker.broker.topics().topic(GroupCoordinator.OFFSETS_TOPIC).partitions[0];
    }

    /** A task on the offsets partition's log thread that holds it until {@code release} opens; returns once it runs. */
    static CountDownLatch holdLogThread(final RunningBroker broker) throws InterruptedException
    {
        final CountDownLatch running = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        broker.broker.executeOnOwner(offsetsPartition(broker).owner, () ->
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
        });
        assertTrue(running.await(20, TimeUnit.SECONDS), "the log thread runs the test's task");
        return release;
    }

    static void barrier(final RawClient barrier) throws IOException
    {
        barrier.exchange(ApiKeys.API_VERSIONS, (short)3, new ApiVersionsRequestData().setClientSoftwareName("barrier")
            .setClientSoftwareVersion("1"));
    }

    private static short commitAnswer(final RawClient raw, final int id) throws IOException
    {
        final OffsetCommitResponseData response = new OffsetCommitResponseData(new ByteBufferAccessor(raw.receive(ApiKeys.OFFSET_COMMIT,
            COMMIT_V, id)), COMMIT_V);
        return response.topics().get(0).partitions().get(0).errorCode();
    }

    /** The committed offset of the topic's partition 0 as OffsetFetch answers it (-1: none). */
    private static long fetchCommitted(final RawClient raw) throws IOException
    {
        final OffsetFetchResponseData response = RawGroups.fetchOffsets(raw, FETCH_V, new OffsetFetchRequestData().setGroupId(GROUP)
            .setTopics(List.of(new OffsetFetchRequestData.OffsetFetchRequestTopic().setName(TOPIC).setPartitionIndexes(List.of(0)))));
        assertError(Errors.NONE, response.errorCode(), "OffsetFetch");
        return response.topics().get(0).partitions().get(0).committedOffset();
    }

    /** A broker with the topic and its group's first commit (which creates the offsets topic) answered. */
    private static RunningBroker brokerWithCommit(final Path dir, final RawClient[] clients, final Map<String, String> overrides)
        throws Exception
    {
        final RunningBroker broker = new RunningBroker(dir, overrides);
        try
        {
            broker.broker.admin().createTopic(TOPIC, 1, Map.of()).get(20, java.util.concurrent.TimeUnit.SECONDS);
            for (int i = 0; i < clients.length; i++)
            {
                clients[i] = new RawClient(broker.broker.address().getPort());
            }
            assertError(Errors.NONE, RawGroups.commitError(clients[0], COMMIT_V, commit(5)), "first commit (creates the offsets topic)");
            return broker;
        }
        catch (final Exception | AssertionError ex)
        {
            for (final RawClient c : clients)
            {
                if (c != null)
                {
                    c.close();
                }
            }
            broker.close();
            throw ex;
        }
    }

    /**
     * The commit's batch is appended by the offsets partition's log thread: while that thread is held,
     * the commit is neither appended nor answered, and OffsetFetch still returns the old offset; once
     * the thread runs, the commit is appended, answered NONE and stored.
     */
    @Test
    void aCommitIsAppendedByTheLogThreadOfItsPartition() throws Exception
    {
        final RawClient[] clients = new RawClient[2];
        try (RunningBroker broker = brokerWithCommit(dir, clients, overrides()); RawClient committer = clients[0]; RawClient other = clients[1])
        {
            final PartitionLog log = offsetsPartition(broker).log;
            final long end = log.logEndOffset();
            final CountDownLatch release = holdLogThread(broker);
            final int id;
            try
            {
                id = committer.send(ApiKeys.OFFSET_COMMIT, COMMIT_V, commit(10));
                barrier(other);
                assertEquals(end, log.logEndOffset(), "appended while its partition's log thread was held");
                assertFalse(committer.answered(), "the commit was answered while its partition's log thread was held");
                assertEquals(5, fetchCommitted(other), "OffsetFetch while the commit waits for its log thread");
            }
            finally
            {
                release.countDown();
            }
            assertError(Errors.NONE, commitAnswer(committer, id), "the commit, once the log thread runs");
            assertTrue(log.logEndOffset() > end, "appended");
            assertEquals(10, fetchCommitted(other), "OffsetFetch once the commit is answered");
        }
    }

    /**
     * fsync durability: a commit appended but not yet covered by an fsync is not what OffsetFetch
     * returns (Kafka 4.4 returns committed offsets only, and here committed means durable).
     */
    @Test
    void inFsyncDurabilityOffsetFetchReturnsOnlyWhatAnFsyncCovers() throws Exception
    {
        final RawClient[] clients = new RawClient[2];
        try (RunningBroker broker = brokerWithCommit(dir, clients, overrides("ferrite.log.durability", "fsync"));
             RawClient committer = clients[0]; RawClient other = clients[1])
        {
            final PartitionLog log = offsetsPartition(broker).log;
            final long end = log.logEndOffset();
            final int id;
            synchronized (FlushLock.of(log)) // no fsync of this log completes while held
            {
                id = committer.send(ApiKeys.OFFSET_COMMIT, COMMIT_V, commit(10));
                await(() -> log.logEndOffset() > end, Duration.ofSeconds(20), "the commit appended");
                assertTrue(log.durableOffset() <= end, "the fsync is held back");
                assertEquals(5, fetchCommitted(other), "OffsetFetch while the commit waits for its fsync");
                assertFalse(committer.answered(), "the commit was answered before an fsync covered it");
            }
            assertError(Errors.NONE, commitAnswer(committer, id), "the commit, once the fsync may run");
            assertEquals(10, fetchCommitted(other), "OffsetFetch once the fsync covers the commit");
        }
    }

    /**
     * A commit checked against its generation and then, while its batch waits for the log thread, a
     * rebalance: the member leaves and a new member joins and leads the next generation. The commit
     * was valid when checked, so it is stored (answered NONE) — and before the rebalance's own write
     * (the leader's SyncGroup writes the group's metadata behind it), so the new member gets its
     * assignment only once the old member's commit is stored, and its OffsetFetch then returns it.
     * A commit of the old generation checked after the leave is refused at once.
     */
    @Test
    void aCommitCheckedBeforeARebalanceIsStoredBeforeTheNewGenerationIsAssigned() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, overrides()))
        {
            broker.broker.admin().createTopic(TOPIC, 1, Map.of()).get(20, java.util.concurrent.TimeUnit.SECONDS);
            final int port = broker.broker.address().getPort();
            final List<TopicPartition> partitions = List.of(new TopicPartition(TOPIC, 0));
            try (RawClient first = new RawClient(port); RawClient second = new RawClient(port); RawClient other = new RawClient(port))
            {
                final RawGroups.Joined old = RawGroups.joinAlone(first, GROUP, null, 30_000, TOPIC, partitions);
                assertError(Errors.NONE, RawGroups.commitError(first, COMMIT_V, RawGroups.commitRequest(GROUP, old.memberId(), null,
                    old.generation(), TOPIC, 0, 5, "")), "first commit (creates the offsets topic)");
                final CountDownLatch release = holdLogThread(broker);
                final int commit;
                final int sync;
                final int generation;
                try
                {
                    commit = first.send(ApiKeys.OFFSET_COMMIT, COMMIT_V, RawGroups.commitRequest(GROUP, old.memberId(), null,
                        old.generation(), TOPIC, 0, 7, ""));
                    barrier(other);
                    assertFalse(first.answered(), "the commit was answered while its partition's log thread was held");
                    assertError(Errors.NONE, RawGroups.leave(other, LEAVE_V, new LeaveGroupRequestData().setGroupId(GROUP).setMembers(List.of(
                        new LeaveGroupRequestData.MemberIdentity().setMemberId(old.memberId())))).errorCode(), "the old member leaves");
                    assertError(Errors.UNKNOWN_MEMBER_ID, RawGroups.commitError(other, COMMIT_V, RawGroups.commitRequest(GROUP,
                        old.memberId(), null, old.generation(), TOPIC, 0, 8, "")), "a commit of the old member checked after it left");
                    JoinGroupResponseData joined = RawGroups.join(second, JOIN_V, RawGroups.joinRequest(GROUP, "", null, 30_000, 30_000,
                        TOPIC));
                    joined = RawGroups.join(second, JOIN_V, RawGroups.joinRequest(GROUP, joined.memberId(), null, 30_000, 30_000, TOPIC));
                    assertError(Errors.NONE, joined.errorCode(), "the new member's JoinGroup");
                    generation = joined.generationId();
                    assertTrue(generation > old.generation(), "a new generation: " + generation + " after " + old.generation());
                    sync = second.send(ApiKeys.SYNC_GROUP, SYNC_V, RawGroups.syncRequest(GROUP, joined.memberId(), null, generation,
                        Map.of(joined.memberId(), RawGroups.assignment(partitions))));
                    barrier(other);
                    assertFalse(second.answered(), "the new generation was assigned before the old generation's commit was stored");
                    assertEquals(5, fetchCommitted(other), "OffsetFetch while the commit waits for its log thread");
                }
                finally
                {
                    release.countDown();
                }
                assertError(Errors.NONE, commitAnswer(first, commit), "the commit checked before the rebalance");
                final SyncGroupResponseData synced = new SyncGroupResponseData(new ByteBufferAccessor(second.receive(ApiKeys.SYNC_GROUP,
                    SYNC_V, sync)), SYNC_V);
                assertError(Errors.NONE, synced.errorCode(), "the new leader's SyncGroup");
                assertEquals(7, fetchCommitted(second), "what the new member's OffsetFetch returns once assigned");
            }
            broker.restart();
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                assertEquals(7, fetchCommitted(raw), "after a restart");
            }
        }
    }

    /** A commit from outside the group (generation -1, as assign() and Admin send it). */
    private static org.apache.kafka.common.message.OffsetCommitRequestData commit(final long offset)
    {
        return RawGroups.commitRequest(GROUP, "", null, -1, TOPIC, 0, offset, "");
    }
}
