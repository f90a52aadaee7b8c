package io.ferrite.client;

import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@link Consumer}'s group membership (subscribe, the classic protocol, the "range" assignor) and auto-commit,
 * against a broker over sockets (run by {@link FerriteInteropTest} and {@link KafkaInteropTest}: Ferrite and Apache
 * Kafka 4.4). Every consumer here runs on the test's thread, stepped in turn (the kafka-clients one with short polls),
 * so the cases need no second thread. Each record is identified by its partition and offset: "exactly once" means every
 * record produced was handed out, and none twice, across all the members of the case.
 */
interface GroupMembershipInteropContract
{
    long DEADLINE_NS = TimeUnit.SECONDS.toNanos(60);
    /**
     * The Ferrite members' session timeout, longer than {@link #DEADLINE_NS}: a member that goes without LeaveGroup, or
     * is replaced by a new member id, holds the group up past any case's deadline.
     */
    int SESSION_TIMEOUT_MS = 120_000;

    String bootstrap();

    void createTopic(String name, int partitions) throws Exception;

    /**
     * Two members share four partitions (two each, by member id); one closes, the other gets all four. The members'
     * session timeout is longer than the case's deadline: only the LeaveGroup of close hands a's partitions over in
     * time. Close tells the listener of each partition once.
     */
    @Test
    default void twoMembersShareTheTopicThenOneLeaves() throws Exception
    {
        final String topic = "members-two";
        createTopic(topic, 4);
        produce(topic, 4, 20);
        final Map<Long, Integer> seen = new HashMap<>();
        try (Member b = member(topic, "members-two-group"))
        {
            final int revokedBefore;
            final Member closed;
            try (Member a = member(topic, "members-two-group"))
            {
                runUntil(() -> a.owned.size() == 2 && b.owned.size() == 2 && a.read + b.read == 80, seen, a, b);
                assertRange(List.of(a, b), 4);
                revokedBefore = a.revokedCalls;
                closed = a;
            }
            assertEquals(revokedBefore + 2, closed.revokedCalls, "onRevoked once per partition on close");
            // a closed: its positions committed (auto-commit), it left; b is given all four partitions
            produce(topic, 4, 10);
            runUntil(() -> b.owned.size() == 4 && seen.size() == 120, seen, b);
            assertEquals(Set.of(0, 1, 2, 3), b.owned);
        }
        assertExactlyOnce(seen, 120);
    }

    /**
     * A Ferrite member and a kafka-clients member ({@code group.protocol=classic}, RangeAssignor) in one group: the
     * partitions split by member id as the range assignor splits them, whoever leads (the first to join leads).
     */
    @Test
    default void aKafkaClientsMemberAndThisOneShareAGroup() throws Exception
    {
        sharedWithKafkaClients("members-mixed-ferrite-first", true);
        sharedWithKafkaClients("members-mixed-kafka-first", false);
    }

    private void sharedWithKafkaClients(final String topic, final boolean ferriteFirst) throws Exception
    {
        createTopic(topic, 4);
        produce(topic, 4, 20);
        final String group = topic + "-group";
        final Map<Long, Integer> seen = new HashMap<>();
        final Set<Integer> kafkaOwned = new TreeSet<>();
        try (KafkaConsumer<byte[], byte[]> kafka = kafkaConsumer(group))
        {
            final Member ferrite;
            if (ferriteFirst)
            {
                ferrite = member(topic, group);
                runUntil(() -> ferrite.owned.size() == 4, seen, ferrite);
            }
            else
            {
                ferrite = null;
            }
            kafka.subscribe(List.of(topic), new ConsumerRebalanceListener()
            {
                @Override
                public void onPartitionsRevoked(final Collection<TopicPartition> partitions)
                {
                    partitions.forEach(tp -> kafkaOwned.remove(tp.partition()));
                }

                @Override
                public void onPartitionsAssigned(final Collection<TopicPartition> partitions)
                {
                    partitions.forEach(tp -> kafkaOwned.add(tp.partition()));
                }
            });
            final Member member = ferrite != null ? ferrite : joinAfterKafka(kafka, kafkaOwned, topic, group, seen);
            try (Member m = member)
            {
                final long deadline = System.nanoTime() + DEADLINE_NS;
                int expected = 80;
                while (!(member.owned.size() == 2 && kafkaOwned.size() == 2 && seen.size() == 120))
                {
                    final int e = expected;
                    assertTrue(System.nanoTime() - deadline < 0, () -> "shared in time: ferrite " + member.owned +
                        ", kafka-clients " + kafkaOwned + ", " + seen.size() + " of " + e + " records read");
                    member.step(seen);
                    pollKafka(kafka, seen);
                    if (expected == 80 && member.owned.size() == 2 && kafkaOwned.size() == 2 && seen.size() == 80)
                    {
                        produce(topic, 4, 10); // read after the split: each from where the other left it
                        expected = 120;
                    }
                }
                assertEquals(ferriteFirst, member.consumer.groupOffsets().membership.ledLastJoin,
                    "the first to join leads: " + (ferriteFirst ? "Ferrite" : "kafka-clients"));
                final String kafkaId = kafka.groupMetadata().memberId();
                final boolean ferriteSortsFirst = member.memberId().compareTo(kafkaId) < 0;
                assertEquals(ferriteSortsFirst ? Set.of(0, 1) : Set.of(2, 3), member.owned, "range: by member id");
                assertEquals(ferriteSortsFirst ? Set.of(2, 3) : Set.of(0, 1), kafkaOwned, "range: by member id");
            }
        }
        assertExactlyOnce(seen, 120);
    }

    private Member joinAfterKafka(final KafkaConsumer<byte[], byte[]> kafka, final Set<Integer> kafkaOwned,
        final String topic, final String group, final Map<Long, Integer> seen)
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (kafkaOwned.size() != 4)
        {
            assertTrue(System.nanoTime() - deadline < 0, "kafka-clients joined alone in time");
            pollKafka(kafka, seen);
        }
        return member(topic, group);
    }

    /**
     * Two members hold six partitions; a third joins: the coordinator answers the two members' heartbeats
     * REBALANCE_IN_PROGRESS, they revoke (their positions committed) and join again within the test's deadline, which
     * is shorter than the rebalance timeout (a member that ignored it would be waited for, then dropped, only after
     * it). Each ends with two partitions; every record is read once.
     */
    @Test
    default void aThirdMemberJoiningRebalancesTheOthers() throws Exception
    {
        final String topic = "members-three";
        createTopic(topic, 6);
        produce(topic, 6, 10);
        final Map<Long, Integer> seen = new HashMap<>();
        try (Member a = member(topic, "members-three-group"); Member b = member(topic, "members-three-group"))
        {
            runUntil(() -> a.owned.size() == 3 && b.owned.size() == 3 && seen.size() == 60, seen, a, b);
            final int rebalancesBefore = a.assignedCalls + b.assignedCalls;
            try (Member c = member(topic, "members-three-group"))
            {
                runUntil(() -> a.owned.size() == 2 && b.owned.size() == 2 && c.owned.size() == 2 &&
                    a.assignedCalls + b.assignedCalls > rebalancesBefore, seen, a, b, c);
                assertRange(List.of(a, b, c), 6);
                // after the rebalance: a partition that moved, read again from an offset not committed, would hand out
                // its first ten records again before these
                produce(topic, 6, 10);
                runUntil(() -> seen.size() == 120, seen, a, b, c);
            }
        }
        assertExactlyOnce(seen, 120);
    }

    /**
     * A Heartbeat answered ILLEGAL_GENERATION (the member's generation made stale) while the group is stable: the member
     * loses its partitions and joins again with the same member id (kafka-clients 4.4), so the group is stable again
     * well within the session timeout (longer than the deadline: with a new id the group would wait for the old one).
     */
    @Test
    default void illegalGenerationJoinsAgainWithTheSameMemberId() throws Exception
    {
        final String topic = "members-generation";
        createTopic(topic, 4);
        produce(topic, 4, 5);
        final Map<Long, Integer> seen = new HashMap<>();
        try (Member a = member(topic, "members-generation-group"); Member b = member(topic, "members-generation-group"))
        {
            runUntil(() -> a.owned.size() == 2 && b.owned.size() == 2 && seen.size() == 20, seen, a, b);
            final String idBefore = a.memberId();
            final java.lang.reflect.Field generation = GroupMembership.class.getDeclaredField("generation");
            generation.setAccessible(true);
            final GroupMembership membership = a.consumer.groupOffsets().membership;
            generation.setInt(membership, generation.getInt(membership) - 1);
            runUntil(() -> a.lostCalls > 0, seen, a, b);
            runUntil(() -> a.owned.size() == 2 && b.owned.size() == 2 &&
                a.consumer.groupOffsets().membership.state == GroupMembership.State.STABLE &&
                b.consumer.groupOffsets().membership.state == GroupMembership.State.STABLE, seen, a, b);
            assertEquals(idBefore, a.memberId(), "the member id kept after ILLEGAL_GENERATION");
            assertRange(List.of(a, b), 4);
        }
    }

    /**
     * A subscribe while the member's JoinGroup is in flight: once that join completes the member joins again for the
     * new subscription, and gets the new topic's partitions too.
     */
    @Test
    default void subscribeDuringAJoinJoinsAgainForTheNewTopics() throws Exception
    {
        final String first = "members-resubscribe-a";
        final String second = "members-resubscribe-b";
        createTopic(first, 2);
        createTopic(second, 2);
        final Map<Long, Integer> seen = new HashMap<>();
        try (Member a = member(first, "members-resubscribe-group"))
        {
            final GroupMembership membership = a.consumer.groupOffsets().membership;
            // the join with the member id given (the first is answered MEMBER_ID_REQUIRED), answered only after this step
            runUntil(() -> membership.state == GroupMembership.State.JOINING && !membership.memberId().isEmpty(), seen, a);
            a.subscribe(List.of(first, second));
            runUntil(() -> a.held.equals(Set.of(first + "-0", first + "-1", second + "-0", second + "-1")), seen, a);
        }
    }

    /**
     * Auto-commit: the positions are committed on the interval (seen by another consumer of the group while this one
     * still reads), and on close; the next consumer of the group starts where the last stopped.
     */
    @Test
    default void autoCommitResumesTheNextConsumerWhereTheLastStopped() throws Exception
    {
        final String topic = "members-auto";
        final String group = "members-auto-group";
        createTopic(topic, 1);
        produce(topic, 1, 50);
        final Map<Long, Integer> seen = new HashMap<>();
        try (Member first = new Member(bootstrap(), topic, group, 200))
        {
            first.limit = 30;
            runUntil(() -> first.read == 30, seen, first);
            runUntil(() -> kafkaCommitted(group, topic) == 30, seen, first); // the interval's commit
            first.limit = 40;
            runUntil(() -> first.read == 40, seen, first);
        }
        assertEquals(40, kafkaCommitted(group, topic), "committed on close");
        try (Member next = member(topic, group))
        {
            runUntil(() -> seen.size() == 50, seen, next);
            assertEquals(10, next.read, "the next consumer started at 40");
        }
        assertExactlyOnce(seen, 50);
    }

    /**
     * The order of a revocation with auto-commit, as kafka-clients 4.4's {@code onJoinPrepare}: the positions are
     * committed first, then the listener is told, so a listener that reads the group's committed offsets in
     * {@code onPartitionsRevoked} / {@code onRevoked} sees the positions it read up to. The interval commit waits a
     * minute, so only the revocation's commit can have put them there. A second member joining makes the first revoke.
     * The kafka-clients consumer is the reference (it shows the order against the same broker); the Ferrite member must
     * see the same offsets.
     */
    @Test
    default void autoCommitComesBeforeTheListenerIsToldOfTheRevocation() throws Exception
    {
        final String topic = "members-revoke-order";
        createTopic(topic, 2);
        produce(topic, 2, 10);
        final Map<Long, Integer> seen = new HashMap<>();
        // what each partition's first revocation saw (putIfAbsent): a close later revokes what the member still owns,
        // and would overwrite the rebalance's observation with one made after the close's own commit
        final Map<Integer, Long> kafkaSaw = new TreeMap<>();
        final String kafkaGroup = topic + "-kafka";
        try (KafkaConsumer<byte[], byte[]> kafka = kafkaConsumer(kafkaGroup, 60_000))
        {
            kafka.subscribe(List.of(topic), new ConsumerRebalanceListener()
            {
                @Override
                public void onPartitionsRevoked(final Collection<TopicPartition> partitions)
                {
                    partitions.forEach(tp -> kafkaSaw.putIfAbsent(tp.partition(), kafkaCommitted(kafkaGroup, topic, tp.partition())));
                }

                @Override
                public void onPartitionsAssigned(final Collection<TopicPartition> partitions)
                {
                }
            });
            final long deadline = System.nanoTime() + DEADLINE_NS;
            while (seen.size() < 20)
            {
                assertTrue(System.nanoTime() - deadline < 0, () -> "kafka-clients read 20 in time: " + seen.size());
                pollKafka(kafka, seen);
            }
            try (Member other = member(topic, kafkaGroup))
            {
                while (kafkaSaw.size() < 2)
                {
                    assertTrue(System.nanoTime() - deadline < 0, "kafka-clients revoked in time");
                    pollKafka(kafka, seen);
                    other.step(seen);
                }
            }
        }
        assertEquals(Map.of(0, 10L, 1, 10L), kafkaSaw, "kafka-clients: committed before onPartitionsRevoked");

        final String group = topic + "-ferrite";
        final Map<Integer, Long> ferriteSaw = new TreeMap<>();
        try (Member a = member(topic, group))
        {
            a.onRevoked = partition -> ferriteSaw.putIfAbsent(partition, kafkaCommitted(group, topic, partition));
            runUntil(() -> a.owned.size() == 2 && a.read == 20, seen, a);
            try (Member b = member(topic, group))
            {
                runUntil(() -> ferriteSaw.size() == 2, seen, a, b);
                // the rebalance finished before b closes: b's JoinGroup is held by the coordinator until a joins again,
                // and b's LeaveGroup, behind it on the same connection, would be answered only after close's
                // request.timeout.ms (30 s, on Ferrite and on Kafka alike)
                runUntil(() -> a.owned.size() == 1 && b.owned.size() == 1, seen, a, b);
            }
        }
        assertEquals(Map.of(0, 10L, 1, 10L), ferriteSaw, "Ferrite: committed before onRevoked, as kafka-clients");
    }

    /**
     * Static membership: a second consumer joining with the same {@code group.instance.id} takes the first one's place,
     * and the coordinator answers the first one's next heartbeat FENCED_INSTANCE_ID. What a kafka-clients 4.4 consumer
     * does then is the reference, found by running it here (kafka-clients against the broker under test): its
     * {@code poll} throws {@code FencedInstanceIdException}, then either its next poll tells {@code onPartitionsLost}
     * (not revoked) and joins again with the same instance id, fencing the second in turn, or (seen against Kafka 4.4,
     * timing-dependent) every later poll throws again; it is never silent. The Ferrite member
     * must do the same: throw once, then join again (never stay out of the group silently); it tells {@code onLost}
     * when the Heartbeat's answer comes, before the throw.
     */
    @Test
    default void aSecondMemberWithTheSameInstanceIdFencesTheFirst() throws Exception
    {
        final String topic = "members-static";
        createTopic(topic, 2);
        produce(topic, 2, 5);
        final Map<Long, Integer> seen = new HashMap<>();
        final String kafkaGroup = topic + "-kafka";
        final int[] kafkaAssigned = new int[2];
        final int[] kafkaLost = new int[2];
        final int[] kafkaRevoked = new int[2];
        final int[] kafkaFenced = new int[2];
        try (KafkaConsumer<byte[], byte[]> ka = kafkaConsumer(kafkaGroup, 200, "static-k");
            KafkaConsumer<byte[], byte[]> kb = kafkaConsumer(kafkaGroup, 200, "static-k"))
        {
            ka.subscribe(List.of(topic), counting(kafkaAssigned, kafkaRevoked, kafkaLost, 0));
            final long deadline = System.nanoTime() + DEADLINE_NS;
            while (kafkaAssigned[0] < 2)
            {
                assertTrue(System.nanoTime() - deadline < 0, "kafka-clients a joined in time");
                pollKafka(ka, seen);
            }
            kb.subscribe(List.of(topic), counting(kafkaAssigned, kafkaRevoked, kafkaLost, 1));
            while (kafkaFenced[0] == 0)
            {
                assertTrue(System.nanoTime() - deadline < 0, "kafka-clients a fenced in time");
                kafkaFenced[1] += pollFenced(kb, seen);
                kafkaFenced[0] += pollFenced(ka, seen);
            }
            assertEquals(0, kafkaLost[0] + kafkaRevoked[0], "kafka-clients: the listener is told at the next poll");
            final int assignedWhenFenced = kafkaAssigned[0];
            // the experiment: does a join again (and fence b), or stay out of the group? Both were seen against Kafka
            // 4.4: a joined again (fencing b), or a threw again at every poll (2 543 times in a minute). Never silent.
            while ((kafkaAssigned[0] == assignedWhenFenced || kafkaFenced[1] == 0) && kafkaFenced[0] < 10)
            {
                assertTrue(System.nanoTime() - deadline < 0, () -> "kafka-clients a joined again or threw again in time: a " +
                    "assigned " + kafkaAssigned[0] + " fenced " + kafkaFenced[0] + ", b fenced " + kafkaFenced[1]);
                kafkaFenced[0] += pollFenced(ka, seen);
                kafkaFenced[1] += pollFenced(kb, seen);
            }
            if (kafkaFenced[0] < 10)
            {
                assertEquals(1, kafkaFenced[0], "kafka-clients: a threw once, then joined again");
                assertEquals(2, kafkaLost[0], "kafka-clients: a's partitions lost before it joined again");
            }
            assertEquals(0, kafkaRevoked[0], "kafka-clients: lost, not revoked");
        }

        final String group = topic + "-group";
        try (Member a = new Member(bootstrap(), topic, group, 60_000, "static-1"))
        {
            runUntil(() -> a.owned.size() == 2, seen, a);
            try (Member b = new Member(bootstrap(), topic, group, 60_000, "static-1"))
            {
                final long deadline = System.nanoTime() + DEADLINE_NS;
                FencedInstanceIdException fenced = null;
                while (fenced == null)
                {
                    assertTrue(System.nanoTime() - deadline < 0, "the first member fenced in time");
                    b.stepFenced(seen);
                    fenced = a.stepFenced(seen);
                }
                assertEquals(82, fenced.errorCode(), "FENCED_INSTANCE_ID");
                assertEquals(Set.of(), a.owned, "the fenced member's partitions are gone");
                assertEquals(2, a.lostCalls, "lost, not revoked");
                assertEquals(0, a.revokedCalls, "lost, not revoked");
                final int assignedWhenFenced = a.assignedCalls;
                while (a.assignedCalls == assignedWhenFenced || b.fenced == 0)
                {
                    assertTrue(System.nanoTime() - deadline < 0, () -> "a joined again and fenced b in time, as " +
                        "kafka-clients: a " + a.consumer.groupOffsets().membership.state + " assigned " + a.assignedCalls +
                        ", b fenced " + b.fenced);
                    a.stepFenced(seen);
                    b.stepFenced(seen);
                }
                assertEquals(1, a.fenced, "a threw once");
                assertEquals(2, a.lostCalls, "lost once, before it joined again");
            }
        }
    }

    /**
     * A commit of a fenced static member, sent before its next Heartbeat (a minute away), fails with
     * FENCED_INSTANCE_ID. As kafka-clients 4.4's OffsetCommit handler, only the commit fails: the member stays in its
     * generation until the next Heartbeat's answer ends it (the case above).
     */
    @Test
    default void aCommitOfAFencedStaticMemberFailsWithFencedInstanceId() throws Exception
    {
        final String topic = "members-static-commit";
        final String group = topic + "-group";
        createTopic(topic, 2);
        produce(topic, 2, 5);
        final Map<Long, Integer> seen = new HashMap<>();
        try (Member a = new Member(bootstrap(), topic, group, 60_000, "static-c", 60_000))
        {
            runUntil(() -> a.owned.size() == 2 && a.read == 10, seen, a);
            try (Member b = new Member(bootstrap(), topic, group, 60_000, "static-c", 100))
            {
                runUntil(() -> b.owned.size() == 2, seen, b);
                final GroupMembership membership = a.consumer.groupOffsets().membership;
                assertEquals(0, membership.heartbeatsSent(), "a sent no Heartbeat: only the commit can tell it");
                final OffsetCommitException e = assertThrows(OffsetCommitException.class, () -> a.consumer.commitSync(30_000));
                assertEquals(82, e.errorCode(), "FENCED_INSTANCE_ID");
                assertEquals(GroupMembership.State.STABLE, membership.state, "only the commit failed");
                assertEquals(Set.of(0, 1), a.owned, "only the commit failed");
            }
        }
    }

    /**
     * A static member sends no LeaveGroup on close (KIP-345): its partitions stay its own until
     * {@code session.timeout.ms}, and a consumer started again with its instance id gets them back without the other
     * member being revoked (no rebalance). With a LeaveGroup the group would rebalance at once: the other member would
     * be revoked and take all the partitions.
     */
    @Test
    default void aStaticMemberRestartedGetsItsPartitionsBackWithoutARebalance() throws Exception
    {
        final String topic = "members-static-restart";
        final String group = topic + "-group";
        createTopic(topic, 4);
        produce(topic, 4, 5);
        final Map<Long, Integer> seen = new HashMap<>();
        try (Member b = new Member(bootstrap(), topic, group, 60_000, "static-b"))
        {
            final Set<Integer> aHad;
            try (Member a = new Member(bootstrap(), topic, group, 60_000, "static-a"))
            {
                runUntil(() -> a.owned.size() == 2 && b.owned.size() == 2 && a.read + b.read == 20, seen, a, b);
                aHad = Set.copyOf(a.owned);
            }
            final int bRevoked = b.revokedCalls;
            final Set<Integer> bHad = Set.copyOf(b.owned);
            try (Member again = new Member(bootstrap(), topic, group, 60_000, "static-a"))
            {
                produce(topic, 4, 5);
                runUntil(() -> again.owned.size() == 2 && seen.size() == 40, seen, again, b);
                assertEquals(aHad, again.owned, "the restarted static member has its partitions back");
                assertEquals(bHad, b.owned, "the other member kept its own");
                assertEquals(bRevoked, b.revokedCalls, "no rebalance: the other member was not revoked");
            }
        }
        assertExactlyOnce(seen, 40);
    }

    /**
     * {@link #close} while the revocation's auto-commit is out (the listener not told yet) still tells the listener
     * of each partition, as kafka-clients' close always revokes what it holds.
     */
    @Test
    default void closeDuringTheRevocationCommitTellsTheListener() throws Exception
    {
        final String topic = "members-close-revoking";
        final String group = topic + "-group";
        createTopic(topic, 2);
        produce(topic, 2, 10);
        final Map<Long, Integer> seen = new HashMap<>();
        try (Member b = member(topic, group))
        {
            final Member a = member(topic, group);
            try
            {
                runUntil(() -> a.owned.size() == 2 && a.read == 20, seen, a);
                final GroupMembership membership = a.consumer.groupOffsets().membership;
                final long deadline = System.nanoTime() + DEADLINE_NS;
                while (membership.state != GroupMembership.State.PREPARING)
                {
                    assertTrue(System.nanoTime() - deadline < 0, "a revoking in time");
                    b.step(seen);
                    a.step(seen);
                }
                assertEquals(0, a.revokedCalls, "the auto-commit comes before the listener");
            }
            finally
            {
                a.close();
            }
            assertEquals(2, a.revokedCalls, "close told the listener of the revocation");
        }
    }

    private static ConsumerRebalanceListener counting(final int[] assigned, final int[] revoked, final int[] lost,
        final int i)
    {
        return new ConsumerRebalanceListener()
        {
            @Override
            public void onPartitionsRevoked(final Collection<TopicPartition> partitions)
            {
                revoked[i] += partitions.size();
            }

            @Override
            public void onPartitionsAssigned(final Collection<TopicPartition> partitions)
            {
                assigned[i] += partitions.size();
            }

            @Override
            public void onPartitionsLost(final Collection<TopicPartition> partitions)
            {
                lost[i] += partitions.size();
            }
        };
    }

    /** One kafka-clients poll: 1 if it threw {@code FencedInstanceIdException}, else 0. */
    private int pollFenced(final KafkaConsumer<byte[], byte[]> kafka, final Map<Long, Integer> seen)
    {
        try
        {
            pollKafka(kafka, seen);
            return 0;
        }
        catch (final org.apache.kafka.common.errors.FencedInstanceIdException e)
        {
            return 1;
        }
    }

    /**
     * A member whose interval auto-commit waits a minute, longer than any case: what a rebalance moves is saved only by
     * the commit before the revocation and the one on close, so a case fails if either is missing.
     */
    private Member member(final String topic, final String group)
    {
        return new Member(bootstrap(), topic, group, 60_000);
    }

    /** One Ferrite member: the partitions its listener holds, the records it read (up to {@link #limit}). */
    final class Member implements AutoCloseable
    {
        final Consumer consumer;
        final Set<Integer> owned = new TreeSet<>();
        /** "topic-partition" of each partition held. */
        final Set<String> held = new TreeSet<>();
        int read;
        int limit;
        int assignedCalls;
        int revokedCalls;
        int lostCalls;
        int fenced;
        /** Called from the listener's onRevoked with the partition, after the member's own bookkeeping. */
        IntConsumer onRevoked = partition -> { };

        Member(final String bootstrap, final String topic, final String group, final long autoCommitIntervalMs)
        {
            this(bootstrap, topic, group, autoCommitIntervalMs, null);
        }

        Member(final String bootstrap, final String topic, final String group, final long autoCommitIntervalMs,
            final String instanceId)
        {
            this(bootstrap, topic, group, autoCommitIntervalMs, instanceId, 100);
        }

        Member(final String bootstrap, final String topic, final String group, final long autoCommitIntervalMs,
            final String instanceId, final long heartbeatIntervalMs)
        {
            this.limit = Integer.MAX_VALUE;
            consumer = new Consumer(new ConsumerConfig().bootstrapServers(bootstrap).fetchMaxWaitMs(50).groupId(group)
                .groupInstanceId(instanceId).autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).heartbeatIntervalMs(heartbeatIntervalMs)
                .sessionTimeoutMs(SESSION_TIMEOUT_MS).maxPollIntervalMs(120_000).autoCommitIntervalMs(autoCommitIntervalMs));
            subscribe(List.of(topic));
        }

        void subscribe(final List<String> topics)
        {
            consumer.subscribe(topics, listener);
        }

        private final RebalanceListener listener = new RebalanceListener()
        {
            @Override
            public void onRevoked(final String t, final int partition)
            {
                owned.remove(partition);
                held.remove(t + "-" + partition);
                revokedCalls++;
                onRevoked.accept(partition);
            }

            @Override
            public void onLost(final String t, final int partition)
            {
                owned.remove(partition);
                held.remove(t + "-" + partition);
                lostCalls++;
            }

            @Override
            public void onAssigned(final String t, final int partition)
            {
                owned.add(partition);
                held.add(t + "-" + partition);
                assignedCalls++;
            }
        };

        String memberId()
        {
            return consumer.groupOffsets().membership.memberId();
        }

        /** One step; a {@link FencedInstanceIdException} is counted in {@link #fenced} and returned. */
        FencedInstanceIdException stepFenced(final Map<Long, Integer> seen)
        {
            try
            {
                step(seen);
                return null;
            }
            catch (final FencedInstanceIdException e)
            {
                fenced++;
                return e;
            }
        }

        void step(final Map<Long, Integer> seen)
        {
            consumer.doWork();
            read += consumer.poll((t, p, r) -> seen.merge(key(p, r.offset()), 1, Integer::sum), Math.max(limit - read, 0));
        }

        @Override
        public void close()
        {
            consumer.close();
        }
    }

    private static long key(final int partition, final long offset)
    {
        return ((long)partition << 32) | offset;
    }

    private static void runUntil(final BooleanSupplier done, final Map<Long, Integer> seen, final Member... members)
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (!done.getAsBoolean())
        {
            final StringBuilder state = new StringBuilder();
            for (final Member m : members)
            {
                state.append(m.owned).append(' ').append(m.read).append("; ");
            }
            assertTrue(System.nanoTime() - deadline < 0, () -> "in time: " + state + seen.size() + " distinct records");
            for (final Member m : members)
            {
                m.step(seen);
            }
        }
    }

    /** The range assignment of {@code partitions} over the members sorted by member id. */
    private static void assertRange(final List<Member> members, final int partitions)
    {
        final List<Member> sorted = new ArrayList<>(members);
        sorted.sort((x, y) -> x.memberId().compareTo(y.memberId()));
        final int each = partitions / sorted.size();
        for (int i = 0; i < sorted.size(); i++)
        {
            final Set<Integer> expected = new TreeSet<>();
            for (int p = i * each; p < (i + 1) * each; p++)
            {
                expected.add(p);
            }
            assertEquals(expected, sorted.get(i).owned, "member " + i + " by id");
        }
    }

    private static void assertExactlyOnce(final Map<Long, Integer> seen, final int produced)
    {
        assertEquals(produced, seen.size(), "every record read");
        seen.forEach((k, n) -> assertEquals(1, n, () -> "partition " + (k >> 32) + " offset " + (k & 0xFFFFFFFFL) +
            " read " + n + " times"));
    }

    private void pollKafka(final KafkaConsumer<byte[], byte[]> kafka, final Map<Long, Integer> seen)
    {
        for (final ConsumerRecord<byte[], byte[]> r : kafka.poll(Duration.ofMillis(20)))
        {
            seen.merge(key(r.partition(), r.offset()), 1, Integer::sum);
        }
    }

    private KafkaConsumer<byte[], byte[]> kafkaConsumer(final String group)
    {
        return kafkaConsumer(group, 200);
    }

    private KafkaConsumer<byte[], byte[]> kafkaConsumer(final String group, final int autoCommitIntervalMs)
    {
        return kafkaConsumer(group, autoCommitIntervalMs, null);
    }

    private KafkaConsumer<byte[], byte[]> kafkaConsumer(final String group, final int autoCommitIntervalMs,
        final String instanceId)
    {
        final Map<String, Object> config = new HashMap<>(Map.of("bootstrap.servers", bootstrap(), "group.id", group,
            "group.protocol", "classic", "partition.assignment.strategy",
            "org.apache.kafka.clients.consumer.RangeAssignor", "enable.auto.commit", true, "auto.commit.interval.ms",
            autoCommitIntervalMs,
            "auto.offset.reset", "earliest", "heartbeat.interval.ms", 100, "session.timeout.ms", 10_000));
        config.put("key.deserializer", ByteArrayDeserializer.class);
        config.put("value.deserializer", ByteArrayDeserializer.class);
        if (instanceId != null)
        {
            config.put("group.instance.id", instanceId);
        }
        return new KafkaConsumer<>(config);
    }

    /** The group's committed offset of partition 0 as kafka-clients reads it (-1 for none). */
    private long kafkaCommitted(final String group, final String topic)
    {
        return kafkaCommitted(group, topic, 0);
    }

    /** The group's committed offset of a partition as kafka-clients reads it (-1 for none). */
    private long kafkaCommitted(final String group, final String topic, final int partition)
    {
        try (KafkaConsumer<byte[], byte[]> kafka = new KafkaConsumer<>(Map.of("bootstrap.servers", bootstrap(),
            "group.id", group, "enable.auto.commit", false, "key.deserializer", ByteArrayDeserializer.class,
            "value.deserializer", ByteArrayDeserializer.class)))
        {
            final TopicPartition tp = new TopicPartition(topic, partition);
            final OffsetAndMetadata om = kafka.committed(Set.of(tp), Duration.ofSeconds(30)).get(tp);
            return om == null ? -1 : om.offset();
        }
    }

    /** {@code perPartition} records to each of the topic's partitions with kafka-clients. */
    private void produce(final String topic, final int partitions, final int perPartition)
    {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrap(),
            "key.serializer", ByteArraySerializer.class, "value.serializer", ByteArraySerializer.class)))
        {
            for (int p = 0; p < partitions; p++)
            {
                for (int i = 0; i < perPartition; i++)
                {
                    producer.send(new ProducerRecord<>(topic, p, null, new byte[] {(byte)i}));
                }
            }
            producer.flush();
        }
    }
}
