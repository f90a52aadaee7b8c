package io.ferrite.broker.e2e;

import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.ferrite.broker.e2e.RawGroups.COMMIT_V;
import static io.ferrite.broker.e2e.RawGroups.assertError;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * DeleteGroups while a commit of the group (from outside it, generation -1) is on its way to the log
 * thread, not yet in memory: the deletion tombstones that commit's partition too, as Kafka 4.4's
 * deleteAllOffsets sees uncommitted writes, so after a restart the group has no offset. Before the fix
 * the commit, appended before the group's tombstone (which keeps offsets, as Kafka's replay), came back.
 * The log thread is held, the requests ordered by barriers on one network thread: no sleeps.
 */
class DeleteGroupsInFlightCommitTest
{
    @TempDir
    Path dir;

    private static Map<String, Long> all(final RawClient raw) throws Exception
    {
        final OffsetFetchResponseData r = RawGroups.fetchOffsets(raw, (short)7, new OffsetFetchRequestData().setGroupId("g").setTopics(null));
        final Map<String, Long> m = new TreeMap<>();
        r.topics().forEach(t -> t.partitions().forEach(p -> { if (p.committedOffset() >= 0) m.put(t.name() + "-" + p.partitionIndex(), p.committedOffset()); }));
        return m;
    }

    @Test
    void aCommitOnItsWayIsDeletedWithTheGroup() throws Exception
    {
        final Map<String, String> o = GroupLogThreadWritesTest.overrides();
        try (RunningBroker broker = new RunningBroker(dir, o))
        {
            broker.broker.admin().createTopic("a", 1, Map.of()).get(20, TimeUnit.SECONDS);
            broker.broker.admin().createTopic("b", 1, Map.of()).get(20, TimeUnit.SECONDS);
            try (RawClient c1 = new RawClient(broker.broker.address().getPort()); RawClient c2 = new RawClient(broker.broker.address().getPort());
                RawClient c3 = new RawClient(broker.broker.address().getPort()))
            {
                assertError(Errors.NONE, RawGroups.commitError(c1, COMMIT_V, RawGroups.commitRequest("g", "", null, -1, "a", 0, 5, "")), "first");
                final CountDownLatch release = GroupLogThreadWritesTest.holdLogThread(broker);
                final int commitId;
                final int deleteId;
                try
                {
                    commitId = c1.send(ApiKeys.OFFSET_COMMIT, COMMIT_V, RawGroups.commitRequest("g", "", null, -1, "b", 0, 7, ""));
                    GroupLogThreadWritesTest.barrier(c3);
                    deleteId = c2.send(ApiKeys.DELETE_GROUPS, (short)2, new DeleteGroupsRequestData().setGroupsNames(java.util.List.of("g")));
                    GroupLogThreadWritesTest.barrier(c3);
                }
                finally
                {
                    release.countDown();
                }
                final OffsetCommitResponseData cr = new OffsetCommitResponseData(new ByteBufferAccessor(c1.receive(ApiKeys.OFFSET_COMMIT, COMMIT_V, commitId)), COMMIT_V);
                assertError(Errors.NONE, cr.topics().get(0).partitions().get(0).errorCode(), "in-flight commit");
                final DeleteGroupsResponseData dr = new DeleteGroupsResponseData(new ByteBufferAccessor(c2.receive(ApiKeys.DELETE_GROUPS, (short)2, deleteId)), (short)2);
                assertError(Errors.NONE, dr.results().iterator().next().errorCode(), "DeleteGroups");
                assertEquals(Map.of(), all(c3), "live, after the deletion");
            }
        }
        try (RunningBroker broker = new RunningBroker(dir, o); RawClient c = new RawClient(broker.broker.address().getPort()))
        {
            assertEquals(Map.of(), all(c), "after a restart: the deleted group's offsets");
        }
    }
}
