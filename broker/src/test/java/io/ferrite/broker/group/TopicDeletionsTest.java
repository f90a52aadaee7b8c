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
import static org.junit.jupiter.api.Assertions.assertTrue;

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
    /** The deleted topic's partition and another topic's, of the tests with a commit on its way at a deletion. */
    private static final Group.TopicPartition DOOMED = new Group.TopicPartition("doomed", 2);
    private static final Group.TopicPartition KEPT = new Group.TopicPartition("kept", 0);

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
                c.topicDeleted(TP.topic(), 1);
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
                c.topicDeleted(TP.topic(), 1);
                return null;
            }).get(20, TimeUnit.SECONDS);
            await(() -> committed(coordinator) == null, Duration.ofSeconds(20), "the offset deleted");

            awaitDone(agent, coordinator, commit(agent, coordinator, 9)); // a topic of the name made a third time
            broker = restarted(broker);
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
                c.topicDeleted("never-committed", 1);
                return null;
            }).get(20, TimeUnit.SECONDS);
            // a commit after the drain: any tombstone batch of the drain is appended before its record (one partition,
            // writes in order), so once it is answered the log's end says whether one was written
            awaitDone(agent, coordinator, commit(agent, coordinator, 4));
            assertEquals(end + 1, broker.topics().topic(GroupCoordinator.OFFSETS_TOPIC).partitions[0].log.logEndOffset(),
                "only the commit's record after the deletion: no batch for a topic no group committed to");
            assertEquals(4, committed(coordinator).offset());
            assertNull(agent.call(coordinator, (c, now) -> c.committed(GROUP, "never-committed", 0)).get(20, TimeUnit.SECONDS));
        }
        finally
        {
            broker.close();
        }
    }

    /**
     * The review's probe (M1): a group's first commit of a partition still on its way when the deletion is drained.
     * Kafka applies a commit when it makes its records, so its deletion covers it; here the drain tombstones every
     * partition of the topic for a group with a write on its way, so the commit goes when answered, and after a restart.
     * A transaction's offset on its way is dropped the same way (no longer pending).
     */
    @Test
    void aCommitOnItsWayWhenTheDeletionIsDrainedIsDeletedToo() throws Exception
    {
        Broker broker = OffsetsTopicBroker.start(dir);
        try
        {
            final GroupCoordinator coordinator = broker.groups();
            final CoordinatorAgent agent = coordinator.agent();
            final CoordinatorLog.Write[] writes = agent.call(coordinator, (c, now) ->
            {
                // both unanswered when the deletion is told: nothing of "doomed" in memory yet
                final CoordinatorLog.Write first = c.commitOffsets("g1", -1, "", null, (short)8,
                    Map.of(DOOMED, new OffsetCommits.Asked(5, -1, ""))).write();
                final CoordinatorLog.Write txn = c.writeTxnOffsets(new TxnOffsetCommits.Asked("t7", "g3", 7, (short)0, -1, "", null,
                    (short)3, Map.of(DOOMED, new OffsetCommits.Asked(6, -1, ""))));
                c.topicDeleted(DOOMED.topic(), 3);
                // another group's commit: it drains the deletion, in this same step
                final CoordinatorLog.Write other = c.commitOffsets("g2", -1, "", null, (short)8,
                    Map.of(KEPT, new OffsetCommits.Asked(1, -1, ""))).write();
                return new CoordinatorLog.Write[] {first, txn, other};
            }).get(20, TimeUnit.SECONDS);
            for (final CoordinatorLog.Write w : writes)
            {
                awaitDone(agent, coordinator, w);
            }
            // the tombstones' batches were sent before g2's commit, so they are answered once it is
            assertNull(agent.call(coordinator, (c, now) -> c.committed("g1", DOOMED.topic(), DOOMED.partition())).get(20, TimeUnit.SECONDS),
                "the commit on its way at the deletion is deleted");
            assertNull(agent.call(coordinator, (c, now) -> c.committed("g3", DOOMED.topic(), DOOMED.partition(), true)).get(20, TimeUnit.SECONDS),
                "the transaction's offset on its way is no longer pending");
            assertEquals(1, agent.call(coordinator, (c, now) -> c.committed("g2", KEPT.topic(), KEPT.partition()).offset())
                .get(20, TimeUnit.SECONDS));

            broker = restarted(broker);
            final GroupCoordinator again = broker.groups();
            assertNull(again.agent().call(again, (c, now) -> c.committed("g1", DOOMED.topic(), DOOMED.partition())).get(20, TimeUnit.SECONDS),
                "the log has the tombstone after the commit");
            assertNull(again.agent().call(again, (c, now) -> c.committed("g3", DOOMED.topic(), DOOMED.partition(), true)).get(20, TimeUnit.SECONDS));
        }
        finally
        {
            broker.close();
        }
    }

    /**
     * A topic whose files failed (published with its partitions offline, none made) deleted by DeleteTopics while an
     * OffsetCommit of one of its partitions is on its way (offline review L1): OffsetCommit accepts such a partition, as
     * Kafka's does, so the deletion must tombstone every partition the topic was answered with for a group with a write
     * on its way — not the partitions made, none here — or the commit outlives the topic and a topic of that name made
     * later inherits it. The commit is sent in one call on the coordinators' agent that also waits for the DeleteTopics
     * and then drains it (another group's commit), so the commit's answer comes after the drain on every run.
     */
    @Test
    void aCommitOnItsWayToATopicWhoseFilesFailedIsDeletedWithTheTopic() throws Exception
    {
        java.nio.file.Files.writeString(dir.resolve("doomed-1"), "a file where the partition directory would go");
        Broker broker = OffsetsTopicBroker.start(dir);
        try
        {
            final GroupCoordinator coordinator = broker.groups();
            final CoordinatorAgent agent = coordinator.agent();
            try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(Map.of(
                "bootstrap.servers", "127.0.0.1:" + broker.address().getPort())))
            {
                admin.createTopics(java.util.List.of(new org.apache.kafka.clients.admin.NewTopic("doomed", 3, (short)1),
                    new org.apache.kafka.clients.admin.NewTopic("kept", 1, (short)1))).all().get(30, TimeUnit.SECONDS);
                final Broker running = broker;
                await(() -> running.topics().topic("kept") != null, Duration.ofSeconds(30), "kept made (doomed tried first)");
                assertTrue(broker.topics().topic("doomed").hasOfflinePartitions(), "doomed published offline");
                final CoordinatorLog.Write[] writes = agent.call(coordinator, (c, now) ->
                {
                    final CoordinatorLog.Write first = c.commitOffsets("g1", -1, "", null, (short)8,
                        Map.of(DOOMED, new OffsetCommits.Asked(5, -1, ""))).write();
                    try
                    {
                        admin.deleteTopics(java.util.List.of("doomed")).all().get(30, TimeUnit.SECONDS);
                    }
                    catch (final Exception ex)
                    {
                        throw new IllegalStateException(ex);
                    }
                    final CoordinatorLog.Write other = c.commitOffsets("g2", -1, "", null, (short)8,
                        Map.of(KEPT, new OffsetCommits.Asked(1, -1, ""))).write(); // drains the deletion
                    return new CoordinatorLog.Write[] {first, other};
                }).get(60, TimeUnit.SECONDS);
                for (final CoordinatorLog.Write w : writes)
                {
                    awaitDone(agent, coordinator, w);
                }
            }
            assertNull(agent.call(coordinator, (c, now) -> c.committed("g1", DOOMED.topic(), DOOMED.partition())).get(20, TimeUnit.SECONDS),
                "the commit on its way to the offline topic's partition 2 is deleted with the topic");
            assertEquals(1, agent.call(coordinator, (c, now) -> c.committed("g2", KEPT.topic(), KEPT.partition()).offset())
                .get(20, TimeUnit.SECONDS));
            broker = restarted(broker);
            final GroupCoordinator again = broker.groups();
            assertNull(again.agent().call(again, (c, now) -> c.committed("g1", DOOMED.topic(), DOOMED.partition())).get(20, TimeUnit.SECONDS),
                "the log has the tombstone after the commit");
        }
        finally
        {
            broker.close();
        }
    }

    /** {@code broker} closed and started again on the same directory. */
    private Broker restarted(final Broker broker) throws Exception
    {
        broker.close();
        return Broker.start(BrokerConfig.of(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0",
            BrokerConfig.LOG_DIR, dir.toString(), "offsets.topic.num.partitions", "1")));
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
