package io.ferrite.client;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link RangeAssignor#assign} against kafka-clients 4.4's {@code RangeAssignor} on seeded random groups: 1-6 members
 * subscribed to different sets of 1-4 topics of 0-7 partitions, some to a topic the cluster does not have (no member
 * gets it). Covers the uneven remainder ({@code n % c} members get one more) and per-topic member sets.
 */
class RangeAssignorTest
{
    @Test
    void assignsAsKafkaClientsRangeAssignorOnRandomGroups()
    {
        final Random random = new Random(15);
        final org.apache.kafka.clients.consumer.RangeAssignor kafka = new org.apache.kafka.clients.consumer.RangeAssignor();
        for (int round = 0; round < 2_000; round++)
        {
            final int topicCount = 1 + random.nextInt(4);
            final Map<String, Integer> counts = new HashMap<>();
            final List<String> names = new ArrayList<>();
            for (int t = 0; t < topicCount; t++)
            {
                final String name = "t" + t;
                names.add(name);
                if (random.nextInt(8) != 0) // else a topic the cluster does not have
                {
                    counts.put(name, random.nextInt(8));
                }
            }
            final Map<String, List<String>> ours = new TreeMap<>();
            final Map<String, Subscription> theirs = new HashMap<>();
            final int members = 1 + random.nextInt(6);
            for (int m = 0; m < members; m++)
            {
                final String id = "member-" + Integer.toHexString(random.nextInt());
                final List<String> topics = new ArrayList<>();
                for (final String name : names)
                {
                    if (random.nextBoolean())
                    {
                        topics.add(name);
                    }
                }
                if (topics.isEmpty())
                {
                    topics.add(names.get(random.nextInt(names.size())));
                }
                ours.put(id, topics);
                theirs.put(id, new Subscription(topics));
            }
            final Map<String, List<TopicPartition>> expected = kafka.assign(counts, theirs);
            final Map<String, Map<String, List<Integer>>> actual =
                RangeAssignor.assign(ours, name -> counts.getOrDefault(name, -1));
            final int r = round;
            for (final String id : ours.keySet())
            {
                assertEquals(asSet(expected.get(id)), asSet(actual.get(id)), () -> "round " + r + ", member " + id +
                    " of " + ours + " with partitions " + counts);
            }
        }
    }

    private static TreeSet<String> asSet(final List<TopicPartition> partitions)
    {
        final TreeSet<String> set = new TreeSet<>();
        partitions.forEach(tp -> set.add(tp.topic() + "-" + tp.partition()));
        return set;
    }

    private static TreeSet<String> asSet(final Map<String, List<Integer>> assignment)
    {
        final TreeSet<String> set = new TreeSet<>();
        if (assignment != null)
        {
            assignment.forEach((topic, partitions) -> partitions.forEach(p -> set.add(topic + "-" + p)));
        }
        return set;
    }
}
