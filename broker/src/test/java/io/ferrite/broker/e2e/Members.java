package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static io.ferrite.testing.Await.await;
import static io.ferrite.testing.Await.awaitValue;

/**
 * What the consumer-group tests share: a member's view of its group (from kafka-clients in this JVM or
 * in a child JVM), waiting until a group has settled, and checking the coordinator's description of it
 * against what the members themselves hold.
 */
final class Members
{
    private Members()
    {
    }

    /** A member's view of the group after its latest poll: generation, member id and the partitions it owns. */
    record View(int generation, String memberId, Set<TopicPartition> assignment)
    {
        static final View NONE = new View(-1, "", Set.of());
    }

    /** A group member the tests can watch. */
    interface Member
    {
        String name();

        View view();

        /** What ended the member's poll loop by surprise, or null. */
        Throwable failure();
    }

    static List<TopicPartition> partitions(final String topic, final int count)
    {
        final List<TopicPartition> list = new ArrayList<>();
        for (int p = 0; p < count; p++)
        {
            list.add(new TopicPartition(topic, p));
        }
        return list;
    }

    static List<TopicPartition> createTopic(final Admin admin, final String topic, final int partitions) throws Exception
    {
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short)1))).all().get(20, TimeUnit.SECONDS);
        TopicsPublished.await(admin, topic); // raw requests may follow: they see the topic once its files are made
        return partitions(topic, partitions);
    }

    static String describe(final Collection<? extends Member> members)
    {
        return members.stream().map(m -> m.name() + "=" + m.view().generation() + ":" + new TreeSet<>(
            m.view().assignment().stream().map(TopicPartition::toString).toList())).collect(Collectors.joining(" "));
    }

    /**
     * Null when the views show one settled generation: every member in the same generation, every
     * partition owned by exactly one member, and the partitions spread evenly (sizes differ by at most one).
     */
    static String balanceProblem(final List<View> views, final Collection<TopicPartition> partitions)
    {
        final Set<Integer> generations = views.stream().map(View::generation).collect(Collectors.toSet());
        if (generations.size() != 1 || generations.iterator().next() <= 0)
        {
            return "generations " + generations;
        }
        final Map<TopicPartition, Integer> owners = new HashMap<>();
        for (final View v : views)
        {
            for (final TopicPartition tp : v.assignment())
            {
                owners.merge(tp, 1, Integer::sum);
            }
        }
        for (final TopicPartition tp : partitions)
        {
            final int count = owners.getOrDefault(tp, 0);
            if (count != 1)
            {
                return tp + " owned by " + count + " members";
            }
        }
        if (!partitions.containsAll(owners.keySet()))
        {
            return "partitions owned that are not in the topic: " + owners.keySet();
        }
        final int floor = partitions.size() / views.size();
        final int ceil = (partitions.size() + views.size() - 1) / views.size();
        for (final View v : views)
        {
            if (v.assignment().size() < floor || v.assignment().size() > ceil)
            {
                return "uneven spread: a member owns " + v.assignment().size();
            }
        }
        return null;
    }

    /** Waits until the members have settled into one generation that owns every partition exactly once. */
    static void awaitBalanced(final String what, final List<? extends Member> members, final Collection<TopicPartition> partitions,
        final Duration timeout)
    {
        awaitValue(() ->
        {
            for (final Member m : members)
            {
                if (m.failure() != null)
                {
                    throw new AssertionError(what + ": member " + m.name() + " failed", m.failure());
                }
            }
            final String problem = balanceProblem(members.stream().map(Member::view).toList(), partitions);
            return problem == null ? "settled" : problem + ": " + describe(members);
        }, "settled"::equals, timeout, what + " settled in one generation");
    }

    /**
     * The coordinator's description of the group (Admin describeConsumerGroups) agrees with the members:
     * Stable, the expected assignor, exactly these member ids, each with the partitions the member holds,
     * and node 1 as coordinator. Retried for a short while in case a describe overtakes the last SyncGroup.
     */
    static ConsumerGroupDescription assertDescribed(final Admin admin, final String group, final String assignor,
        final List<? extends Member> members) throws Exception
    {
        final ConsumerGroupDescription[] description = new ConsumerGroupDescription[1];
        final String[] problem = new String[1];
        await(() ->
        {
            description[0] = admin.describeConsumerGroups(List.of(group)).all().get(20, TimeUnit.SECONDS).get(group);
            problem[0] = describedProblem(description[0], assignor, members);
            return problem[0] == null;
        }, Duration.ofSeconds(30), () -> "the coordinator's description of " + group + " to match the members (" + problem[0] + "): "
            + description[0] + " members: " + describe(members));
        return description[0];
    }

    private static String describedProblem(final ConsumerGroupDescription d, final String assignor, final List<? extends Member> members)
    {
        if (d.groupState() != GroupState.STABLE)
        {
            return "state " + d.groupState();
        }
        if (!assignor.equals(d.partitionAssignor()))
        {
            return "assignor " + d.partitionAssignor();
        }
        if (d.coordinator() == null || d.coordinator().id() != 1)
        {
            return "coordinator " + d.coordinator();
        }
        if (d.members().size() != members.size())
        {
            return d.members().size() + " members";
        }
        final Map<String, MemberDescription> byId = new HashMap<>();
        for (final MemberDescription m : d.members())
        {
            byId.put(m.consumerId(), m);
        }
        for (final Member m : members)
        {
            final MemberDescription described = byId.get(m.view().memberId());
            if (described == null)
            {
                return "member " + m.name() + " (" + m.view().memberId() + ") missing";
            }
            if (!m.name().equals(described.clientId()))
            {
                return "member " + m.name() + " described with client id " + described.clientId();
            }
            if (!described.assignment().topicPartitions().equals(m.view().assignment()))
            {
                return "member " + m.name() + " assigned " + described.assignment().topicPartitions();
            }
        }
        return null;
    }
}
