package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupMaxSizeReachedException;
import org.apache.kafka.common.errors.InconsistentGroupProtocolException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.ferrite.broker.e2e.Members.assertDescribed;
import static io.ferrite.broker.e2e.Members.awaitBalanced;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ordinary kafka-clients consumers with a group.id (classic protocol) share a topic's partitions through
 * Ferrite's group coordinator: every partition owned by exactly one member, and moved when a member joins,
 * when one closes (LeaveGroup) and when one dies (its session times out), with the eager RangeAssignor and
 * with the cooperative-sticky assignor; the group agrees on an assignor every member supports and keeps
 * to group.max.size.
 */
class ConsumerGroupTest
{
    /** Brokers here start rebalances at once and accept the short session timeout of the member that is killed. */
    static final Map<String, String> GROUP_OVERRIDES = Map.of("group.initial.rebalance.delay.ms", "0",
        "group.min.session.timeout.ms", "1000");
    private static final int PARTITIONS = 6;
    private static final Duration SETTLE = Duration.ofSeconds(25);
    /** Session timeout of the live members: a rebalance that waited for it instead of LeaveGroup would miss SETTLE. */
    private static final int LONG_SESSION_MS = 45_000;
    /**
     * Session timeout of the member that is killed: well inside SETTLE, and long enough that its child JVM, heartbeating
     * every 500 ms, keeps its session through a loaded machine's stall until the kill (3 s left 2.5 s of slack). It is
     * not waited out: the coordinators' clock is stepped by it after the kill; a heartbeat the child sent just before
     * it and the broker handles after the step only puts the expiry back to this much real time, still inside SETTLE.
     */
    private static final int SHORT_SESSION_MS = 6_000;

    @TempDir
    Path dir;

    private static String assignorClass(final String assignor)
    {
        return switch (assignor)
        {
            case "range" -> RangeAssignor.class.getName();
            case "cooperative-sticky" -> CooperativeStickyAssignor.class.getName();
            case "roundrobin" -> RoundRobinAssignor.class.getName();
            default -> throw new IllegalArgumentException(assignor);
        };
    }

    private static Map<String, Object> config(final String assignorClasses)
    {
        final Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, assignorClasses);
        config.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, LONG_SESSION_MS);
        return config;
    }

    /**
     * Two members, then three (one joins), then two (it closes and leaves), then three (one in a child JVM
     * joins), then two (that JVM is killed: no LeaveGroup, only its session times out). At each step every
     * partition is owned by exactly one member, evenly, in one generation, and the coordinator's
     * description (Admin) shows the same members, assignments, assignor and state Stable.
     * With range (eager) a rebalance first revokes everything a member owns; with cooperative-sticky a
     * member is revoked only the partitions it gives away, never those it keeps, and nothing at all when
     * it only gains partitions. No member ever has its partitions "lost" (which would mean the coordinator
     * fenced it).
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"range", "cooperative-sticky"})
    void partitionsAreSharedAndMoveWhenMembersJoinLeaveOrDie(final String assignor) throws Exception
    {
        final boolean cooperative = assignor.equals("cooperative-sticky");
        final String topic = "orders";
        final String group = "shared-" + assignor;
        final SteppedClock clock = new SteppedClock();
        try (RunningBroker broker = new RunningBroker(dir, GROUP_OVERRIDES, clock); Admin admin = broker.admin())
        {
            final List<TopicPartition> partitions = Members.createTopic(admin, topic, PARTITIONS);
            final Map<String, Object> config = config(assignorClass(assignor));
            try (GroupMember a = new GroupMember(broker, "a", group, topic, config);
                GroupMember b = new GroupMember(broker, "b", group, topic, config))
            {
                awaitBalanced("a and b", List.of(a, b), partitions, SETTLE);
                assertEquals(3, a.view().assignment().size());
                assertDescribed(admin, group, assignor, List.of(a, b));

                // c joins: a and b give up a partition each
                int markA = a.eventCount();
                int markB = b.eventCount();
                Set<TopicPartition> beforeA = a.view().assignment();
                Set<TopicPartition> beforeB = b.view().assignment();
                try (GroupMember c = new GroupMember(broker, "c", group, topic, config))
                {
                    awaitBalanced("c joined", List.of(a, b, c), partitions, SETTLE);
                    assertDescribed(admin, group, assignor, List.of(a, b, c));
                    assertRevocations(cooperative, a, markA, beforeA);
                    assertRevocations(cooperative, b, markB, beforeB);

                    // c closes: a dynamic member sends LeaveGroup, the others take its partitions at once
                    markA = a.eventCount();
                    markB = b.eventCount();
                    beforeA = a.view().assignment();
                    beforeB = b.view().assignment();
                    c.stop();
                    assertNull(c.failure(), "c closed cleanly");
                }
                awaitBalanced("c left", List.of(a, b), partitions, SETTLE);
                assertDescribed(admin, group, assignor, List.of(a, b));
                assertRevocations(cooperative, a, markA, beforeA);
                assertRevocations(cooperative, b, markB, beforeB);

                // d joins from a child JVM, then dies without a word
                try (ForkedMember d = ForkedMember.start(broker, "d", group, topic, assignorClass(assignor), SHORT_SESSION_MS))
                {
                    awaitBalanced("d joined", List.of(a, b, d), partitions, Duration.ofSeconds(40));
                    assertDescribed(admin, group, assignor, List.of(a, b, d));
                    markA = a.eventCount();
                    markB = b.eventCount();
                    beforeA = a.view().assignment();
                    beforeB = b.view().assignment();
                    d.kill();
                }
                clock.step(Duration.ofMillis(SHORT_SESSION_MS)); // d's session expires at the coordinators' next pass
                awaitBalanced("d's session expired", List.of(a, b), partitions, SETTLE);
                assertDescribed(admin, group, assignor, List.of(a, b));
                assertRevocations(cooperative, a, markA, beforeA);
                assertRevocations(cooperative, b, markB, beforeB);

                for (final GroupMember m : List.of(a, b))
                {
                    assertNull(m.failure(), m.name() + " failed");
                    assertTrue(m.events().stream().noneMatch(e -> e.kind() == GroupMember.Kind.LOST),
                        m.name() + " never lost its partitions: " + m.events());
                }
            }
        }
    }

    /**
     * What the member's rebalance listener was told since {@code mark}, given what it owned before and
     * owns now. Eager: it was revoked everything it owned. Cooperative: it was revoked exactly what it gave
     * away, it kept the rest (sticky), and no partition it kept was revoked or handed to it again.
     */
    private static void assertRevocations(final boolean cooperative, final GroupMember m, final int mark, final Set<TopicPartition> before)
    {
        final Set<TopicPartition> after = m.view().assignment();
        final List<GroupMember.Event> events = m.eventsSince(mark);
        final Set<TopicPartition> revoked = new HashSet<>();
        final Set<TopicPartition> assigned = new HashSet<>();
        for (final GroupMember.Event e : events)
        {
            assertTrue(e.kind() != GroupMember.Kind.LOST, m.name() + " lost partitions: " + events);
            (e.kind() == GroupMember.Kind.REVOKED ? revoked : assigned).addAll(e.partitions());
        }
        if (cooperative)
        {
            final Set<TopicPartition> kept = new HashSet<>(before);
            kept.retainAll(after);
            final Set<TopicPartition> givenAway = new HashSet<>(before);
            givenAway.removeAll(after);
            assertEquals(givenAway, revoked, m.name() + " revoked exactly what it gave away: " + events);
            for (final TopicPartition tp : kept)
            {
                assertTrue(!assigned.contains(tp), m.name() + " was handed " + tp + " again though it kept it: " + events);
            }
            if (after.size() < before.size())
            {
                assertTrue(before.containsAll(after), m.name() + " kept its partitions (sticky): " + before + " -> " + after);
            }
        }
        else
        {
            assertTrue(events.stream().anyMatch(e -> e.kind() == GroupMember.Kind.REVOKED && e.partitions().equals(before)),
                m.name() + " (eager) was revoked all of " + before + ": " + events);
            assertTrue(events.stream().anyMatch(e -> e.kind() == GroupMember.Kind.ASSIGNED && e.partitions().equals(after)),
                m.name() + " (eager) was assigned all of " + after + ": " + events);
        }
    }

    /**
     * Protocol selection: a member offering [cooperative-sticky, range] and one offering only [range]
     * settle on range, the one both support. A third that offers only roundrobin is turned away with
     * INCONSISTENT_GROUP_PROTOCOL (InconsistentGroupProtocolException from its poll) and the other two
     * are not disturbed: same generation, same assignment.
     */
    @Test
    void theGroupUsesAnAssignorEveryMemberSupportsAndTurnsAwayOneWithNone() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, GROUP_OVERRIDES); Admin admin = broker.admin())
        {
            final List<TopicPartition> partitions = Members.createTopic(admin, "votes", PARTITIONS);
            try (GroupMember a = new GroupMember(broker, "a", "voters", "votes",
                    config(assignorClass("cooperative-sticky") + "," + assignorClass("range")));
                GroupMember b = new GroupMember(broker, "b", "voters", "votes", config(assignorClass("range"))))
            {
                awaitBalanced("a and b", List.of(a, b), partitions, SETTLE);
                assertDescribed(admin, "voters", "range", List.of(a, b));
                final Members.View viewA = a.view();
                final Members.View viewB = b.view();
                try (GroupMember c = new GroupMember(broker, "c", "voters", "votes", config(assignorClass("roundrobin"))))
                {
                    assertInstanceOf(InconsistentGroupProtocolException.class, c.awaitFailure(Duration.ofSeconds(30)),
                        "a member with no protocol in common is turned away");
                }
                GroupMember.awaitHeartbeatsAfterNow(List.of(a, b)); // a rebalance wrongly started by c would have reached a and b by then
                assertDescribed(admin, "voters", "range", List.of(a, b));
                assertEquals(viewA, a.view(), "a undisturbed");
                assertEquals(viewB, b.view(), "b undisturbed");
            }
        }
    }

    /**
     * group.max.size=2: a third member is turned away with GROUP_MAX_SIZE_REACHED
     * (GroupMaxSizeReachedException from its poll) and the two members keep their generation and partitions.
     */
    @Test
    void aMemberBeyondGroupMaxSizeIsTurnedAway() throws Exception
    {
        final Map<String, String> overrides = new HashMap<>(GROUP_OVERRIDES);
        overrides.put("group.max.size", "2");
        try (RunningBroker broker = new RunningBroker(dir, overrides); Admin admin = broker.admin())
        {
            final List<TopicPartition> partitions = Members.createTopic(admin, "capped", PARTITIONS);
            final Map<String, Object> config = config(assignorClass("range"));
            try (GroupMember a = new GroupMember(broker, "a", "small", "capped", config);
                GroupMember b = new GroupMember(broker, "b", "small", "capped", config))
            {
                awaitBalanced("a and b", List.of(a, b), partitions, SETTLE);
                final Members.View viewA = a.view();
                final Members.View viewB = b.view();
                try (GroupMember c = new GroupMember(broker, "c", "small", "capped", config))
                {
                    assertInstanceOf(GroupMaxSizeReachedException.class, c.awaitFailure(Duration.ofSeconds(30)),
                        "the third member is turned away");
                }
                GroupMember.awaitHeartbeatsAfterNow(List.of(a, b)); // a rebalance wrongly started by c would have reached a and b by then
                assertDescribed(admin, "small", "range", List.of(a, b));
                assertEquals(viewA, a.view(), "a undisturbed");
                assertEquals(viewB, b.view(), "b undisturbed");
            }
        }
    }
}
