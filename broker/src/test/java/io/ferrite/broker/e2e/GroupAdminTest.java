package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.MemberToRemove;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupResult;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.errors.GroupSubscribedToTopicException;
import org.apache.kafka.common.errors.UnknownMemberIdException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static io.ferrite.broker.e2e.Members.assertDescribed;
import static io.ferrite.broker.e2e.Members.awaitBalanced;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Consumer groups through kafka-clients' Admin, answered as Kafka 4.4 answers: listGroups (with type and
 * state filters), describeConsumerGroups, listConsumerGroupOffsets (one group and several at once),
 * alterConsumerGroupOffsets, deleteConsumerGroupOffsets, deleteConsumerGroups, removeMembersFromConsumerGroup,
 * including the errors for groups that have members or do not exist.
 */
class GroupAdminTest
{
    @TempDir
    Path dir;

    private static <T> T get(final KafkaFuture<T> future) throws Exception
    {
        return future.get(20, TimeUnit.SECONDS);
    }

    private static Throwable cause(final KafkaFuture<?> future)
    {
        return assertThrows(ExecutionException.class, () -> future.get(20, TimeUnit.SECONDS)).getCause();
    }

    private static Map<String, GroupListing> listings(final Collection<GroupListing> listed)
    {
        return listed.stream().collect(Collectors.toMap(GroupListing::groupId, l -> l));
    }

    private static Map<String, Object> config()
    {
        return Map.of(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, RangeAssignor.class.getName());
    }

    /**
     * A group with two live members ("active", on topic ledger) and a group that only ever had offsets
     * committed through Admin ("idle", a simple group): how each is listed, described and has its offsets
     * listed, altered and deleted, and which operations are refused while members are present.
     */
    @Test
    void listDescribeAlterAndDeleteGroupsAndTheirOffsets() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("group.initial.rebalance.delay.ms", "0")); Admin admin = broker.admin())
        {
            final List<TopicPartition> ledger = Members.createTopic(admin, "ledger", 4);
            Members.createTopic(admin, "audit", 2);
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
            {
                for (int i = 0; i < 40; i++)
                {
                    producer.send(new ProducerRecord<>("ledger", i % 4, null, ("l" + i).getBytes(StandardCharsets.UTF_8)));
                    producer.send(new ProducerRecord<>("audit", i % 2, null, ("a" + i).getBytes(StandardCharsets.UTF_8)));
                }
            }
            final TopicPartition ledger0 = new TopicPartition("ledger", 0);
            final TopicPartition audit0 = new TopicPartition("audit", 0);

            // a simple group: offsets committed through Admin, no member ever
            get(admin.alterConsumerGroupOffsets("idle", Map.of(ledger0, new OffsetAndMetadata(7, "set-by-admin"),
                new TopicPartition("ledger", 1), new OffsetAndMetadata(3))).all());

            try (GroupMember a = new GroupMember(broker, "a", "active", "ledger", config());
                GroupMember b = new GroupMember(broker, "b", "active", "ledger", config()))
            {
                awaitBalanced("a and b", List.of(a, b), ledger, Duration.ofSeconds(25));
                a.call(c ->
                {
                    c.commitSync(Map.of(ledger0, new OffsetAndMetadata(5, "a-was-here"), audit0, new OffsetAndMetadata(2)));
                    return null;
                });

                // listGroups
                final Map<String, GroupListing> all = listings(get(admin.listGroups(ListGroupsOptions.forConsumerGroups()).all()));
                assertEquals(Set.of("active", "idle"), all.keySet(), "consumer groups listed: " + all);
                assertEquals(Optional.of(GroupState.STABLE), all.get("active").groupState());
                assertEquals(Optional.of(GroupType.CLASSIC), all.get("active").type());
                assertEquals("consumer", all.get("active").protocol());
                assertFalse(all.get("active").isSimpleConsumerGroup());
                assertEquals(Optional.of(GroupState.EMPTY), all.get("idle").groupState());
                assertEquals("", all.get("idle").protocol(), "a group made by offset commits has no protocol type");
                assertTrue(all.get("idle").isSimpleConsumerGroup());
                assertEquals(Set.of("active"), listings(get(admin.listGroups(
                    new ListGroupsOptions().inGroupStates(Set.of(GroupState.STABLE))).all())).keySet(), "listed in state Stable");
                assertEquals(Set.of("idle"), listings(get(admin.listGroups(
                    new ListGroupsOptions().inGroupStates(Set.of(GroupState.EMPTY))).all())).keySet(), "listed in state Empty");

                // describeConsumerGroups
                final ConsumerGroupDescription active = assertDescribed(admin, "active", "range", List.of(a, b));
                assertEquals(GroupType.CLASSIC, active.type());
                assertFalse(active.isSimpleConsumerGroup());
                assertEquals(broker.broker.address().getPort(), active.coordinator().port(), "coordinator is this broker");
                for (final MemberDescription m : active.members())
                {
                    assertFalse(m.host().isEmpty(), "member host");
                    assertEquals(Optional.empty(), m.groupInstanceId(), "dynamic members");
                    assertEquals(2, m.assignment().topicPartitions().size(), "range gives each member 2 of 4");
                }
                final ConsumerGroupDescription idle = get(admin.describeConsumerGroups(List.of("idle")).all()).get("idle");
                assertEquals(GroupState.EMPTY, idle.groupState());
                assertTrue(idle.members().isEmpty());
                assertTrue(idle.isSimpleConsumerGroup(), "protocol type \"\": a simple group");
                assertEquals("", idle.partitionAssignor());
                assertEquals(1, idle.coordinator().id());
                // Kafka 4.4 answers DescribeGroups v6 for an unknown group with GROUP_ID_NOT_FOUND
                assertInstanceOf(GroupIdNotFoundException.class, cause(admin.describeConsumerGroups(List.of("nobody")).all()));

                // listConsumerGroupOffsets, one group and two at once
                final Map<TopicPartition, OffsetAndMetadata> activeOffsets = get(admin.listConsumerGroupOffsets("active")
                    .partitionsToOffsetAndMetadata());
                assertEquals(Map.of(ledger0, new OffsetAndMetadata(5, "a-was-here"), audit0, new OffsetAndMetadata(2, "")),
                    activeOffsets, "offsets of the active group");
                final Map<String, Map<TopicPartition, OffsetAndMetadata>> both = get(admin.listConsumerGroupOffsets(Map.of(
                    "active", new ListConsumerGroupOffsetsSpec().topicPartitions(List.of(ledger0, new TopicPartition("ledger", 3))),
                    "idle", new ListConsumerGroupOffsetsSpec())).all());
                assertEquals(5, both.get("active").get(ledger0).offset());
                assertEquals(null, both.get("active").get(new TopicPartition("ledger", 3)), "no offset committed for ledger-3");
                assertEquals(Map.of(ledger0, new OffsetAndMetadata(7, "set-by-admin"), new TopicPartition("ledger", 1),
                    new OffsetAndMetadata(3, "")), both.get("idle"), "offsets of the idle group");

                // refused while the group has members
                assertInstanceOf(UnknownMemberIdException.class,
                    cause(admin.alterConsumerGroupOffsets("active", Map.of(ledger0, new OffsetAndMetadata(0))).all()),
                    "Kafka refuses an admin commit (generation -1, no member id) to a group with members: UNKNOWN_MEMBER_ID");
                assertInstanceOf(GroupNotEmptyException.class, cause(admin.deleteConsumerGroups(List.of("active")).all()),
                    "NON_EMPTY_GROUP");
                assertInstanceOf(GroupSubscribedToTopicException.class,
                    cause(admin.deleteConsumerGroupOffsets("active", Set.of(ledger0)).all()),
                    "GROUP_SUBSCRIBED_TO_TOPIC: the members consume ledger");
                // ... but offsets of a topic nobody in the group subscribes to can go
                get(admin.deleteConsumerGroupOffsets("active", Set.of(audit0)).all());
                assertEquals(Set.of(ledger0), get(admin.listConsumerGroupOffsets("active").partitionsToOffsetAndMetadata()).keySet());

                // the idle group: altered and its offsets deleted freely
                get(admin.alterConsumerGroupOffsets("idle", Map.of(ledger0, new OffsetAndMetadata(9, "moved"))).all());
                get(admin.deleteConsumerGroupOffsets("idle", Set.of(new TopicPartition("ledger", 1))).all());
                assertEquals(Map.of(ledger0, new OffsetAndMetadata(9, "moved")),
                    get(admin.listConsumerGroupOffsets("idle").partitionsToOffsetAndMetadata()));
            }

            // the members closed (LeaveGroup): the group is Empty, its offsets stay and can now be changed and deleted
            final ConsumerGroupDescription emptied = get(admin.describeConsumerGroups(List.of("active")).all()).get("active");
            assertEquals(GroupState.EMPTY, emptied.groupState(), "both members left");
            assertTrue(emptied.members().isEmpty());
            assertEquals(Set.of(ledger0), get(admin.listConsumerGroupOffsets("active").partitionsToOffsetAndMetadata()).keySet());
            get(admin.alterConsumerGroupOffsets("active", Map.of(ledger0, new OffsetAndMetadata(1))).all());
            get(admin.deleteConsumerGroupOffsets("active", Set.of(ledger0)).all());
            assertTrue(get(admin.listConsumerGroupOffsets("active").partitionsToOffsetAndMetadata()).isEmpty());

            // deleteConsumerGroups: deleted ones disappear; an unknown one is GROUP_ID_NOT_FOUND
            get(admin.deleteConsumerGroups(List.of("active", "idle")).all());
            assertTrue(get(admin.listGroups(ListGroupsOptions.forConsumerGroups()).all()).isEmpty(), "no groups left");
            assertInstanceOf(GroupIdNotFoundException.class, cause(admin.deleteConsumerGroups(List.of("active")).all()));
            assertInstanceOf(GroupIdNotFoundException.class, cause(admin.deleteConsumerGroups(List.of("never-was")).all()));
            assertInstanceOf(GroupIdNotFoundException.class, cause(admin.deleteConsumerGroupOffsets("never-was", Set.of(ledger0)).all()));
            assertTrue(get(admin.listConsumerGroupOffsets("idle").partitionsToOffsetAndMetadata()).isEmpty(),
                "a deleted group's offsets are gone");
        }
    }

    /**
     * removeMembersFromConsumerGroup (LeaveGroup v3+, a batch of members by group.instance.id): a static
     * member that was shut down (it did not leave) is removed at once instead of after its 45 s session
     * timeout, and its partitions go to the remaining member; an instance id that is not in the group gets
     * UNKNOWN_MEMBER_ID in the same batch.
     */
    @Test
    void removingAShutDownStaticMemberHandsItsPartitionsOverAtOnce() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("group.initial.rebalance.delay.ms", "0")); Admin admin = broker.admin())
        {
            final List<TopicPartition> partitions = Members.createTopic(admin, "parcels", 4);
            final Map<String, Object> config1 = new HashMap<>(config());
            config1.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "s1");
            config1.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 45_000);
            final Map<String, Object> config2 = new HashMap<>(config1);
            config2.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "s2");
            try (GroupMember s1 = new GroupMember(broker, "s1", "statics", "parcels", config1);
                GroupMember s2 = new GroupMember(broker, "s2", "statics", "parcels", config2))
            {
                awaitBalanced("s1 and s2", List.of(s1, s2), partitions, Duration.ofSeconds(25));
                s1.stop();
                assertEquals(2, get(admin.describeConsumerGroups(List.of("statics")).all()).get("statics").members().size(),
                    "a static member that closed is still in the group");

                final MemberToRemove gone = new MemberToRemove("s1");
                final MemberToRemove ghost = new MemberToRemove("ghost");
                final RemoveMembersFromConsumerGroupResult removed = admin.removeMembersFromConsumerGroup("statics",
                    new RemoveMembersFromConsumerGroupOptions(List.of(gone, ghost)));
                get(removed.memberResult(gone));
                assertInstanceOf(UnknownMemberIdException.class, cause(removed.memberResult(ghost)), "no member with instance id ghost");
                assertInstanceOf(UnknownMemberIdException.class, cause(removed.all()));

                // far sooner than s1's 45 s session timeout
                awaitBalanced("s2 alone", List.of(s2), partitions, Duration.ofSeconds(25));
                final ConsumerGroupDescription d = assertDescribed(admin, "statics", "range", List.of(s2));
                assertEquals(Optional.of("s2"), d.members().iterator().next().groupInstanceId());
                assertEquals(new HashSet<>(partitions), s2.view().assignment());
            }
        }
    }
}
