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
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * A deleted topic's offsets ({@link TopicDeletions}) against a commit to a topic of the same name created again before
 * the coordinators' agent took the deletion: the deletion's name and the commit reach the agent in that order (the
 * admin agent tells the name before it can create the topic again, and the commit is checked against the new topic),
 * here in one call on the agent, as one pass would take them — the tombstones go before the commit's record, so the
 * new commit stays, in memory and after a restart (Kafka's publisher waits for these tombstones before it publishes the
 * next change of topics, so no commit of the new topic comes before them there either).
 */
class TopicDeletionsTest
{
    private static final String GROUP = "survivors";
    private static final Group.TopicPartition TP = new Group.TopicPartition("orders", 0);

    @TempDir
    Path dir;

    @Test
    void aCommitToTheTopicCreatedAgainAfterTheDeletionIsKept() throws Exception
    {
        Broker broker = OffsetsTopicBroker.start(dir);
        try
        {
            final GroupCoordinator coordinator = broker.groups();
            final CoordinatorAgent agent = coordinator.agent();
            awaitDone(agent, coordinator, commit(agent, coordinator, 5)); // the old topic's offset
            assertEquals(5, committed(coordinator).offset());

            // the deletion told (as the admin agent does), and a commit of the new topic taken before any drain of a pass
            final CoordinatorLog.Write newer = agent.call(coordinator, (c, now) ->
            {
                c.topicDeleted(TP.topic());
                return commitNow(c, 7);
            }).get(20, TimeUnit.SECONDS);
            awaitDone(agent, coordinator, newer);
            await(() -> agent.call(coordinator, (c, now) -> c.committed(GROUP, TP.topic(), TP.partition()) != null
                && c.committed(GROUP, TP.topic(), TP.partition()).offset() == 7).get(20, TimeUnit.SECONDS), Duration.ofSeconds(20),
                "the new commit stored");
            assertEquals(7, committed(coordinator).offset(), "not deleted by the tombstones of the deleted topic");

            // and alone, a deletion deletes: the tombstone of the offset now held
            agent.call(coordinator, (c, now) ->
            {
                c.topicDeleted(TP.topic());
                return null;
            }).get(20, TimeUnit.SECONDS);
            await(() -> committed(coordinator) == null, Duration.ofSeconds(20), "the offset deleted");

            awaitDone(agent, coordinator, commit(agent, coordinator, 9)); // a topic of the name made a third time
            broker.close();
            broker = Broker.start(BrokerConfig.of(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0",
                BrokerConfig.LOG_DIR, dir.toString(), "offsets.topic.num.partitions", "1")));
            assertEquals(9, committed(broker.groups()).offset(), "the log replayed: tombstones and commits in their order");
        }
        finally
        {
            broker.close();
        }
    }

    @Test
    void aDeletedTopicWithoutOffsetsWritesNothing() throws Exception
    {
        final Broker broker = OffsetsTopicBroker.start(dir);
        try
        {
            final GroupCoordinator coordinator = broker.groups();
            final CoordinatorAgent agent = coordinator.agent();
            awaitDone(agent, coordinator, commit(agent, coordinator, 3));
            final long end = broker.topics().topic(GroupCoordinator.OFFSETS_TOPIC).partitions[0].log.logEndOffset();
            agent.call(coordinator, (c, now) ->
            {
                c.topicDeleted("never-committed");
                return null;
            }).get(20, TimeUnit.SECONDS);
            // a second call runs after the first's pass, whose drain took the name
            agent.call(coordinator, (c, now) -> null).get(20, TimeUnit.SECONDS);
            assertEquals(end, broker.topics().topic(GroupCoordinator.OFFSETS_TOPIC).partitions[0].log.logEndOffset(),
                "no batch for a topic no group committed to");
            assertEquals(3, committed(coordinator).offset());
            assertNull(agent.call(coordinator, (c, now) -> c.committed(GROUP, "never-committed", 0)).get(20, TimeUnit.SECONDS));
        }
        finally
        {
            broker.close();
        }
    }

    private static CoordinatorLog.Write commit(final CoordinatorAgent agent, final GroupCoordinator coordinator, final long offset)
        throws Exception
    {
        return agent.call(coordinator, (c, now) -> commitNow(c, offset)).get(20, TimeUnit.SECONDS);
    }

    /** A simple consumer's commit (generation -1, no member), as the Admin's alterConsumerGroupOffsets sends it. */
    private static CoordinatorLog.Write commitNow(final GroupCoordinator c, final long offset)
    {
        final OffsetCommits.Result result = c.commitOffsets(GROUP, -1, "", null, (short)8,
            Map.of(TP, new OffsetCommits.Asked(offset, -1, "")));
        assertEquals(Errors.NONE, result.groupError());
        return result.write();
    }

    private static GroupCoordinator.Committed committed(final GroupCoordinator coordinator) throws Exception
    {
        return coordinator.agent().call(coordinator, (c, now) -> c.committed(GROUP, TP.topic(), TP.partition())).get(20, TimeUnit.SECONDS);
    }

    private static void awaitDone(final CoordinatorAgent agent, final GroupCoordinator coordinator, final CoordinatorLog.Write w)
    {
        TxnOffsetsInFlightTest.awaitDone(agent, coordinator, w);
    }
}
