package io.ferrite.broker.group;

import io.ferrite.broker.Broker;
import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.CoordinatorAgent;
import io.ferrite.broker.coordinator.CoordinatorLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * A TxnOffsetCommit's batch on its way to the log, and what runs on the coordinators' agent meanwhile.
 * A RequireStable OffsetFetch sees a TxnOffsetCommit's offsets while their batch is still on its way
 * to the log, as Kafka 4.4 runs that fetch as a write operation behind the writes already sent (the
 * KIP-447 hand-over: a new owner must not read the old committed offset while the old owner's
 * transactional commit is being written). The batch's send and the fetch are one call on the
 * coordinators' agent, so the write's answer (taken by the agent's drain, in a later duty cycle)
 * cannot come between them. (That an answer, OK or not, ends the count: TxnOffsetRulesTest.)
 * A DeleteGroups sent while another transaction's batch is on its way drops, once answered, only the
 * pending offsets it wrote tombstones for: the other batch, before the tombstones in the log, has
 * none, and a replay (which drops a pending offset at its key's tombstone only) keeps it pending too.
 */
class TxnOffsetsInFlightTest
{
    private static final String GROUP = "packers";
    private static final String TOPIC = "orders";

    @TempDir
    Path dir;

    private static TxnOffsetCommits.Asked asked(final long offset)
    {
        return asked(7, 0, offset);
    }

    private static TxnOffsetCommits.Asked asked(final long producerId, final int partition, final long offset)
    {
        return new TxnOffsetCommits.Asked("t" + producerId, GROUP, producerId, (short)0, -1, "", null, (short)3,
            Map.of(new Group.TopicPartition(TOPIC, partition), new OffsetCommits.Asked(offset, -1, "")));
    }

    static void awaitDone(final CoordinatorAgent agent, final GroupCoordinator coordinator, final CoordinatorLog.Write w)
    {
        await(() -> agent.call(coordinator, (c, now) -> w.done()).get(20, TimeUnit.SECONDS), Duration.ofSeconds(20), "the write answered");
        assertEquals(Errors.NONE, w.error());
    }

    @Test
    void aDeleteGroupsDropsOnlyThePendingOffsetsItTombstoned() throws Exception
    {
        final Broker broker = OffsetsTopicBroker.start(dir);
        try
        {
            final GroupCoordinator coordinator = broker.groups();
            final CoordinatorAgent agent = coordinator.agent();
            // producer 7's offset of partition 0: written, pending; the group is made (Empty)
            awaitDone(agent, coordinator, agent.call(coordinator, (c, now) -> c.writeTxnOffsets(asked(7, 0, 5))).get(20, TimeUnit.SECONDS));
            // producer 8's offset of partition 1 sent, then the group deleted before that batch is answered
            final Object[] sent = agent.call(coordinator, (c, now) ->
                new Object[] {c.writeTxnOffsets(asked(8, 1, 9)), c.deleteGroups(List.of(GROUP))}).get(20, TimeUnit.SECONDS);
            final GroupDeletions.Deleted deleted = (GroupDeletions.Deleted)sent[1];
            assertEquals(Errors.NONE, deleted.errors()[0], "an Empty group");
            awaitDone(agent, coordinator, (CoordinatorLog.Write)sent[0]);
            awaitDone(agent, coordinator, deleted.writes().get(deleted.write()[0]));
            assertNull(agent.call(coordinator, (c, now) -> c.committed(GROUP, TOPIC, 0, true)).get(20, TimeUnit.SECONDS),
                "partition 0's pending offset went with its tombstone");
            assertSame(GroupCoordinator.UNSTABLE, agent.call(coordinator, (c, now) -> c.committed(GROUP, TOPIC, 1, true)).get(20, TimeUnit.SECONDS),
                "partition 1's, written before the tombstones and without one, is still pending");
        }
        finally
        {
            broker.close();
        }
    }

    @Test
    void aTransactionalBatchOnItsWayIsUnstable() throws Exception
    {
        final Broker broker = OffsetsTopicBroker.start(dir);
        try
        {
            final GroupCoordinator coordinator = broker.groups();
            final CoordinatorAgent agent = coordinator.agent();
            final Object[] sent = agent.call(coordinator, (c, now) ->
            {
                final CoordinatorLog.Write w = c.writeTxnOffsets(asked(9));
                return new Object[] {w, w.done(), c.committed(GROUP, TOPIC, 0, true)};
            }).get(20, TimeUnit.SECONDS);
            assertEquals(false, sent[1], "the batch is on its way");
            assertSame(GroupCoordinator.UNSTABLE, sent[2], "RequireStable sees the batch on its way");
            awaitDone(agent, coordinator, (CoordinatorLog.Write)sent[0]);
            assertSame(GroupCoordinator.UNSTABLE, agent.call(coordinator, (c, now) -> c.committed(GROUP, TOPIC, 0, true)).get(20, TimeUnit.SECONDS),
                "written: pending until the transaction's marker");
            assertNull(agent.call(coordinator, (c, now) -> c.committed(GROUP, TOPIC, 0, false)).get(20, TimeUnit.SECONDS),
                "not committed");
        }
        finally
        {
            broker.close();
        }
    }
}
