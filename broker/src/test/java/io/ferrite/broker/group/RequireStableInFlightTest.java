package io.ferrite.broker.group;

import io.ferrite.broker.Broker;
import io.ferrite.broker.Errors;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.coordinator.CoordinatorAgent;
import io.ferrite.broker.coordinator.CoordinatorLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * A RequireStable OffsetFetch sees a TxnOffsetCommit's offsets while their batch is still on its way
 * to the log, as Kafka 4.4 runs that fetch as a write operation behind the writes already sent (the
 * KIP-447 hand-over: a new owner must not read the old committed offset while the old owner's
 * transactional commit is being written). The batch's send and the fetch are one call on the
 * coordinators' agent, so the write's answer (taken by the agent's drain, in a later duty cycle)
 * cannot come between them. (That an answer, OK or not, ends the count: TxnOffsetRulesTest.)
 */
class RequireStableInFlightTest
{
    private static final String GROUP = "packers";
    private static final String TOPIC = "orders";

    @TempDir
    Path dir;

    private static TxnOffsetCommits.Asked asked(final long offset)
    {
        return new TxnOffsetCommits.Asked("t", GROUP, 7, (short)0, -1, "", null, (short)3,
            Map.of(new Group.TopicPartition(TOPIC, 0), new OffsetCommits.Asked(offset, -1, "")));
    }

    @Test
    void aTransactionalBatchOnItsWayIsUnstable() throws Exception
    {
        final Broker broker = Broker.start(BrokerConfig.of(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0",
            BrokerConfig.LOG_DIR, dir.toString(), "offsets.topic.num.partitions", "1")));
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
            final CoordinatorLog.Write w = (CoordinatorLog.Write)sent[0];
            await(() -> agent.call(coordinator, (c, now) -> w.done()).get(20, TimeUnit.SECONDS), Duration.ofSeconds(20), "the write answered");
            assertEquals(Errors.NONE, w.error());
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
