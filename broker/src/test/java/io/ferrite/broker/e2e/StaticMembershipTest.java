package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static io.ferrite.broker.e2e.Members.assertDescribed;
import static io.ferrite.broker.e2e.Members.awaitBalanced;
import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Static membership (group.instance.id, KIP-345) with kafka-clients' classic consumer: a static member
 * that closes does not leave (kafka-clients sends no LeaveGroup for a static member on close), so when
 * it comes back within its session timeout it gets its old partitions at once, in the same generation,
 * and nobody else rebalances; a second live consumer with the same group.instance.id takes the place over
 * and the one it replaced is fenced (FencedInstanceIdException from its poll).
 */
class StaticMembershipTest
{
    private static final int SESSION_MS = 45_000;

    @TempDir
    Path dir;

    private static Map<String, Object> config(final String instanceId)
    {
        final Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instanceId);
        config.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, SESSION_MS);
        config.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, RangeAssignor.class.getName());
        return config;
    }

    private static MemberDescription memberWithInstance(final ConsumerGroupDescription d, final String instanceId)
    {
        return d.members().stream().filter(m -> m.groupInstanceId().equals(Optional.of(instanceId))).findFirst()
            .orElseThrow(() -> new AssertionError("no member with instance id " + instanceId + ": " + d));
    }

    @Test
    void aStaticMemberComesBackToItsPartitionsWithoutARebalanceAndADuplicateIsFenced() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("group.initial.rebalance.delay.ms", "0")); Admin admin = broker.admin())
        {
            final List<TopicPartition> partitions = Members.createTopic(admin, "shipments", 6);
            try (GroupMember a = new GroupMember(broker, "a", "depot", "shipments", config("instance-a")))
            {
                GroupMember b = new GroupMember(broker, "b", "depot", "shipments", config("instance-b"));
                try
                {
                    awaitBalanced("a and b", List.of(a, b), partitions, Duration.ofSeconds(25));
                    final ConsumerGroupDescription before = assertDescribed(admin, "depot", "range", List.of(a, b));
                    final Members.View viewA = a.view();
                    final Members.View viewB = b.view();
                    final int generation = viewA.generation();
                    final int markA = a.eventCount();

                    // b closes: a static member does not leave, the coordinator keeps it (and its partitions)
                    b.close();
                    assertNull(b.failure());
                    final ConsumerGroupDescription whileAway = admin.describeConsumerGroups(List.of("depot")).all()
                        .get(20, TimeUnit.SECONDS).get("depot");
                    assertEquals(GroupState.STABLE, whileAway.groupState(), "no rebalance when a static member closes");
                    assertEquals(2, whileAway.members().size(), "the closed static member is still a member: " + whileAway);
                    assertEquals(viewB.assignment(), memberWithInstance(whileAway, "instance-b").assignment().topicPartitions());

                    // b comes back within its session timeout: same partitions, same generation, new member id
                    b = new GroupMember(broker, "b", "depot", "shipments", config("instance-b"));
                    awaitBalanced("b back", List.of(a, b), partitions, Duration.ofSeconds(25));
                    a.awaitHeartbeatsAfterNow(); // a rebalance wrongly started by b's return would have reached a by then
                    assertEquals(viewB.assignment(), b.view().assignment(), "b got its partitions back");
                    assertEquals(generation, b.view().generation(), "b rejoined the same generation");
                    assertNotEquals(viewB.memberId(), b.view().memberId(), "the coordinator gave b a new member id");
                    assertEquals(viewA, a.view(), "a undisturbed");
                    assertEquals(List.of(), a.eventsSince(markA), "a's rebalance listener was not called");
                    final ConsumerGroupDescription after = assertDescribed(admin, "depot", "range", List.of(a, b));
                    assertEquals(memberWithInstance(before, "instance-a").consumerId(), memberWithInstance(after, "instance-a").consumerId());

                    // a second live consumer with b's instance id (and, being the same deployment, its client.id:
                    // Kafka keeps the replaced member's client id in DescribeGroups) replaces it; b is fenced
                    try (GroupMember duplicate = new GroupMember(broker, "b", "depot", "shipments", config("instance-b")))
                    {
                        final GroupMember older = b;
                        await(() -> older.failure() != null || duplicate.failure() != null, Duration.ofSeconds(30),
                            "one of the two instance-b consumers fenced");
                        final Throwable fenced = b.failure() != null ? b.failure() : duplicate.failure();
                        assertInstanceOf(FencedInstanceIdException.class, fenced, "one of the two instance-b consumers is fenced");
                        assertTrue(b.failure() instanceof FencedInstanceIdException,
                            "the older instance-b is the one fenced (Kafka replaces the member id on join)");
                        awaitBalanced("the duplicate in b's place", List.of(a, duplicate), partitions, Duration.ofSeconds(25));
                        assertEquals(viewB.assignment(), duplicate.view().assignment(), "the duplicate took b's partitions");
                        assertEquals(generation, duplicate.view().generation(), "no rebalance for the replacement either");
                        assertEquals(viewA, a.view(), "a undisturbed");
                        assertEquals(List.of(), a.eventsSince(markA), "a's rebalance listener was not called");
                        final ConsumerGroupDescription replaced = assertDescribed(admin, "depot", "range", List.of(a, duplicate));
                        final String fencedId = b.view().memberId();
                        assertFalse(replaced.members().stream().anyMatch(m -> m.consumerId().equals(fencedId)),
                            "the fenced member id is gone");
                    }
                }
                finally
                {
                    b.close();
                }
            }
        }
    }
}
