package io.ferrite.broker.e2e;

import io.ferrite.broker.group.GroupCoordinator;
import io.ferrite.log.PartitionLog;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetDeleteResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static io.ferrite.broker.e2e.RawGroups.COMMIT_V;
import static io.ferrite.broker.e2e.RawGroups.DESCRIBE_V;
import static io.ferrite.broker.e2e.RawGroups.JOIN_V;
import static io.ferrite.broker.e2e.RawGroups.SYNC_V;
import static io.ferrite.broker.e2e.RawGroups.assertError;
import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The group writes other than OffsetCommit (DeleteGroups, OffsetDelete, the leader's SyncGroup,
 * offset expiry) go to {@code __consumer_offsets} before memory changes: a failed write (the group's
 * log closed under the coordinator, a log taken offline) answers Kafka 4.4's mapped error
 * (NOT_COORDINATOR) and keeps the group as it was, also after a restart; in fsync durability the
 * answer waits for the fsync. {@code offsets.topic.num.partitions=1} puts every group on partition 0
 * unless a test says otherwise.
 */
class GroupWritesTest
{
    private static final String TOPIC = "ledger";
    private static final String GROUP = "auditors";

    @TempDir
    Path dir;

    private static Map<String, String> overrides(final String... more)
    {
        final Map<String, String> o = new HashMap<>(Map.of("group.initial.rebalance.delay.ms", "0", "offsets.topic.num.partitions", "1"));
        for (int i = 0; i < more.length; i += 2)
        {
            o.put(more[i], more[i + 1]);
        }
        return o;
    }

    private static PartitionLog offsetsLog(final RunningBroker broker, final int partition)
    {
        return broker.broker.topics().topic(GroupCoordinator.OFFSETS_TOPIC).partitions[partition].log;
    }

    /** A commit from outside the group (generation -1): the group exists, Empty, with this offset. */
    private static OffsetCommitRequestData commit(final String group, final long offset)
    {
        return RawGroups.commitRequest(group, "", null, -1, TOPIC, 0, offset, "");
    }

    private static long committed(final RunningBroker broker, final String group) throws Exception
    {
        try (Admin admin = broker.admin())
        {
            final OffsetAndMetadata o = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                .get(30, TimeUnit.SECONDS).get(new TopicPartition(TOPIC, 0));
            return o == null ? -1 : o.offset();
        }
    }

    private static boolean listed(final RunningBroker broker, final String group) throws Exception
    {
        try (Admin admin = broker.admin())
        {
            return admin.listConsumerGroups().all().get(30, TimeUnit.SECONDS).stream().map(ConsumerGroupListing::groupId)
                .anyMatch(group::equals);
        }
    }

    private RunningBroker brokerWithOffsets(final Map<String, String> overrides) throws Exception
    {
        return brokerWithOffsets(overrides, null);
    }

    /** With the coordinators on {@code clock} (null: the system clocks). */
    private RunningBroker brokerWithOffsets(final Map<String, String> overrides, final SteppedClock clock) throws Exception
    {
        final RunningBroker broker = new RunningBroker(dir, overrides, clock);
        try (Admin admin = broker.admin())
        {
            Members.createTopic(admin, TOPIC, 1);
        }
        return broker;
    }

    @Test
    void deleteGroupsWhoseWriteFailsAnswersNotCoordinatorAndKeepsTheGroupAndItsOffsets() throws Exception
    {
        try (RunningBroker broker = brokerWithOffsets(overrides()))
        {
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                assertError(Errors.NONE, RawGroups.commitError(raw, COMMIT_V, commit(GROUP, 5)), "commit");
                offsetsLog(broker, 0).close();
                final DeleteGroupsResponseData r = RawGroups.deleteGroups(raw, List.of(GROUP));
                assertError(Errors.NOT_COORDINATOR, r.results().find(GROUP).errorCode(), "DeleteGroups whose tombstones could not be written");
            }
            assertTrue(listed(broker, GROUP), "the group is still there");
            assertEquals(5, committed(broker, GROUP), "its offset too");
            broker.restart();
            assertTrue(listed(broker, GROUP), "after a restart the group is still there");
            assertEquals(5, committed(broker, GROUP), "and its offset");
        }
    }

    @Test
    void offsetDeleteWhoseWriteFailsAnswersNotCoordinatorAndKeepsTheOffset() throws Exception
    {
        try (RunningBroker broker = brokerWithOffsets(overrides()))
        {
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                assertError(Errors.NONE, RawGroups.commitError(raw, COMMIT_V, commit(GROUP, 5)), "commit");
                offsetsLog(broker, 0).close();
                final OffsetDeleteResponseData r = RawGroups.deleteOffsets(raw, GROUP, TOPIC, 0);
                assertError(Errors.NOT_COORDINATOR, r.errorCode(), "OffsetDelete whose tombstone could not be written");
                assertTrue(r.topics().isEmpty(), "Kafka answers a failed OffsetDelete with the top-level error only");
            }
            assertEquals(5, committed(broker, GROUP), "the offset is still committed");
            broker.restart();
            assertEquals(5, committed(broker, GROUP), "also after a restart");
        }
    }

    /**
     * The leader's SyncGroup writes the group's metadata: when that fails Kafka 4.4 answers the mapped
     * error to the members waiting in SyncGroup, resets their assignments and rebalances the group
     * (GroupMetadataManager: resetAndPropagateAssignmentWithError, then maybePrepareRebalanceOrCompleteJoin).
     */
    @Test
    void aLeadersSyncWhoseWriteFailsAnswersNotCoordinatorAndTheGroupRebalances() throws Exception
    {
        try (RunningBroker broker = brokerWithOffsets(overrides()))
        {
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                assertError(Errors.NONE, RawGroups.commitError(raw, COMMIT_V, commit("setup", 1)), "a commit that creates the offsets topic");
                JoinGroupResponseData joined = RawGroups.join(raw, JOIN_V, RawGroups.joinRequest(GROUP, "", null, 30_000, 30_000, TOPIC));
                assertError(Errors.MEMBER_ID_REQUIRED, joined.errorCode(), "first JoinGroup");
                joined = RawGroups.join(raw, JOIN_V, RawGroups.joinRequest(GROUP, joined.memberId(), null, 30_000, 30_000, TOPIC));
                assertError(Errors.NONE, joined.errorCode(), "JoinGroup");
                assertEquals(joined.memberId(), joined.leader(), "the only member leads");
                offsetsLog(broker, 0).close();
                final short synced = RawGroups.sync(raw, SYNC_V, RawGroups.syncRequest(GROUP, joined.memberId(), null,
                    joined.generationId(), Map.of(joined.memberId(), RawGroups.assignment(List.of(new TopicPartition(TOPIC, 0)))))).errorCode();
                assertError(Errors.NOT_COORDINATOR, synced, "the leader's SyncGroup whose group metadata could not be written");
                assertEquals("PreparingRebalance", RawGroups.describe(raw, DESCRIBE_V, GROUP).groupState(),
                    "the sync did not complete: the group rebalances");
                assertError(Errors.REBALANCE_IN_PROGRESS, RawGroups.heartbeat(raw, GROUP, joined.memberId(), null, joined.generationId()),
                    "the member's heartbeat");
            }
        }
    }

    /**
     * Expiry writes the tombstones before it forgets the offsets: with one group's log closed its
     * expired offsets stay (and expiry tries again later). The other group, on the other partition of
     * {@code __consumer_offsets}, expires in the same pass, which is how the test knows the pass ran.
     * The retention is not waited out: the coordinators' clock ({@link SteppedClock}) is stepped past it
     * once both commits are answered and kept's log is closed (before issue 17's build work the test
     * waited out 5 s of retention, inside which those three steps had to come).
     */
    @Test
    void expiredOffsetsWhoseTombstonesCannotBeWrittenStay() throws Exception
    {
        final String kept = groupOnPartition(0);
        final String expired = groupOnPartition(1);
        final long retentionMs = 60_000;
        final SteppedClock clock = new SteppedClock();
        final Map<String, String> overrides = overrides("offsets.topic.num.partitions", "2", "internal.offsets.retention.ms",
            Long.toString(retentionMs), "offsets.retention.check.interval.ms", "200");
        try (RunningBroker broker = brokerWithOffsets(overrides, clock))
        {
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                assertError(Errors.NONE, RawGroups.commitError(raw, COMMIT_V, commit(kept, 5)), "commit of " + kept);
                assertError(Errors.NONE, RawGroups.commitError(raw, COMMIT_V, commit(expired, 6)), "commit of " + expired);
            }
            offsetsLog(broker, 0).close();
            assertEquals(6, committed(broker, expired), "the offsets of " + expired + " kept within their retention");
            clock.step(Duration.ofMillis(retentionMs + 1)); // both groups' offsets are past their retention now
            await(() -> committed(broker, expired) == -1, Duration.ofSeconds(60),
                "the offsets of " + expired + " (committed after those of " + kept + ") expired");
            assertEquals(5, committed(broker, kept), "the offset of " + kept + ", whose tombstone could not be written");
            broker.overrides.put("internal.offsets.retention.ms", "600000");
            broker.restart();
            assertEquals(5, committed(broker, kept), "after a restart");
        }
    }

    /** A group id that {@code __consumer_offsets} with two partitions puts on {@code partition}. */
    private static String groupOnPartition(final int partition)
    {
        for (int i = 0; ; i++)
        {
            final String id = GROUP + "-" + i;
            if ((id.hashCode() & 0x7fffffff) % 2 == partition)
            {
                return id;
            }
        }
    }

    @Test
    void inFsyncDurabilityDeleteGroupsIsAnsweredOnlyAfterTheFsync() throws Exception
    {
        assertAnsweredOnlyAfterTheFsync(ApiKeys.DELETE_GROUPS, (short)2, new DeleteGroupsRequestData().setGroupsNames(List.of(GROUP)),
            body -> new DeleteGroupsResponseData(new ByteBufferAccessor(body), (short)2).results().find(GROUP).errorCode());
    }

    @Test
    void inFsyncDurabilityOffsetDeleteIsAnsweredOnlyAfterTheFsync() throws Exception
    {
        final OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection topics = new OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection();
        topics.add(new OffsetDeleteRequestData.OffsetDeleteRequestTopic().setName(TOPIC).setPartitions(List.of(
            new OffsetDeleteRequestData.OffsetDeleteRequestPartition().setPartitionIndex(0))));
        assertAnsweredOnlyAfterTheFsync(ApiKeys.OFFSET_DELETE, (short)0, new OffsetDeleteRequestData().setGroupId(GROUP).setTopics(topics),
            body ->
            {
                final OffsetDeleteResponseData r = new OffsetDeleteResponseData(new ByteBufferAccessor(body), (short)0);
                return r.errorCode() != Errors.NONE.code() ? r.errorCode() : r.topics().find(TOPIC).partitions().find(0).errorCode();
            });
    }

    /**
     * As OffsetCommitWriteTest's fsync test: the group's offset is committed, then while the test holds
     * the offsets log's flush back the request's tombstones are appended but it is not answered (seen
     * after a barrier: one network thread handles the request before a later ApiVersions on a second
     * connection); once the fsync may run the answer is NONE with the durable offset past the append.
     */
    private void assertAnsweredOnlyAfterTheFsync(final ApiKeys api, final short version, final ApiMessage request,
        final Function<ByteBuffer, Short> errorOf) throws Exception
    {
        try (RunningBroker broker = brokerWithOffsets(overrides("ferrite.log.durability", "fsync", "num.network.threads", "1")))
        {
            final int port = broker.broker.address().getPort();
            try (RawClient barrier = new RawClient(port); Socket client = new Socket("127.0.0.1", port))
            {
                client.setSoTimeout(20_000);
                assertError(Errors.NONE, RawGroups.commitError(barrier, COMMIT_V, commit(GROUP, 5)), "commit (creates the offsets topic)");
                final PartitionLog log = offsetsLog(broker, 0);
                assertTrue(log.config().fsyncDurability, "the offsets log is in fsync durability");
                final long appendOffset;
                synchronized (FlushLock.of(log)) // no fsync of this log completes while held
                {
                    appendOffset = log.logEndOffset();
                    client.getOutputStream().write(RawClient.frame(api, version, request, 7).array());
                    await(() -> log.logEndOffset() > appendOffset, Duration.ofSeconds(20), "the tombstones appended");
                    barrier.exchange(ApiKeys.API_VERSIONS, (short)3, new ApiVersionsRequestData()
                        .setClientSoftwareName("barrier").setClientSoftwareVersion("1"));
                    assertTrue(log.durableOffset() <= appendOffset, "the fsync is held back");
                    assertEquals(0, client.getInputStream().available(), api + " was answered before the fsync covered its tombstones");
                }
                assertError(Errors.NONE, errorOf.apply(readResponse(client, api, version, 7)), api + ", once the fsync may run");
                assertTrue(log.durableOffset() > appendOffset, "answered after the durable offset passed the append: "
                    + log.durableOffset() + " > " + appendOffset);
            }
            assertEquals(-1, committed(broker, GROUP), "the offset is deleted");
        }
    }

    private static ByteBuffer readResponse(final Socket socket, final ApiKeys api, final short version, final int correlationId)
        throws IOException
    {
        final DataInputStream in = new DataInputStream(socket.getInputStream());
        final byte[] bytes = new byte[in.readInt()];
        in.readFully(bytes);
        final ByteBuffer buffer = ByteBuffer.wrap(bytes);
        assertEquals(correlationId, ResponseHeader.parse(buffer, api.responseHeaderVersion(version)).correlationId());
        return buffer;
    }
}
