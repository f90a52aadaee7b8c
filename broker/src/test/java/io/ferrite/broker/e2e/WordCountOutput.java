package io.ferrite.broker.e2e;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static io.ferrite.testing.Await.await;

/**
 * What the Kafka Streams word count ({@link WordCountApplication}) wrote: every count update on its output topic,
 * by word in offset order, and the check that each word's updates are exactly 1, 2, ..., n for the n times it was fed.
 */
final class WordCountOutput
{
    private WordCountOutput()
    {
    }

    /**
     * Every count update on {@code output} ({@code partitions} partitions) from its start, by word in offset order: reads
     * until each fed word's count has reached what was fed (or passed it), then on to the end offsets (under read_committed
     * the last stable offsets), so an update too many shows.
     */
    static Map<String, List<Long>> read(final String bootstrap, final String output, final int partitions, final IsolationLevel isolation,
        final Map<String, Integer> fed)
    {
        final Map<String, Object> c = new HashMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation.toString());
        final Map<String, List<Long>> updates = new HashMap<>();
        final List<TopicPartition> tps = new ArrayList<>();
        for (int p = 0; p < partitions; p++)
        {
            tps.add(new TopicPartition(output, p));
        }
        try (KafkaConsumer<String, Long> consumer = new KafkaConsumer<>(c))
        {
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            await(() ->
            {
                for (final ConsumerRecord<String, Long> r : consumer.poll(Duration.ofMillis(200)))
                {
                    updates.computeIfAbsent(r.key(), w -> new ArrayList<>()).add(r.value());
                }
                return fed.entrySet().stream().allMatch(e ->
                {
                    final List<Long> counts = updates.getOrDefault(e.getKey(), List.of());
                    return !counts.isEmpty() && counts.get(counts.size() - 1) >= e.getValue();
                });
            }, Duration.ofSeconds(120), () -> "every word's count at what was fed " + new TreeMap<>(fed) + ", last counts read "
                + lastCounts(updates));
            await(() ->
            {
                for (final ConsumerRecord<String, Long> r : consumer.poll(Duration.ofMillis(200)))
                {
                    updates.computeIfAbsent(r.key(), w -> new ArrayList<>()).add(r.value());
                }
                final Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
                return tps.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp));
            }, Duration.ofSeconds(30), "the output read to its end offsets");
        }
        return updates;
    }

    /** The words whose updates are not exactly 1..n for the n times {@code fed} says, each with what went wrong; empty when all are. */
    static List<String> wrong(final Map<String, List<Long>> updates, final Map<String, Integer> fed)
    {
        final List<String> wrong = new ArrayList<>();
        for (final Map.Entry<String, List<Long>> e : new TreeMap<>(updates).entrySet())
        {
            final List<Long> expected = new ArrayList<>();
            for (long n = 1; n <= fed.getOrDefault(e.getKey(), 0); n++)
            {
                expected.add(n);
            }
            if (!e.getValue().equals(expected))
            {
                wrong.add(e.getKey() + ": fed " + expected.size() + " times, " + describe(e.getValue(), expected.size()));
            }
        }
        for (final String word : new TreeMap<>(fed).keySet())
        {
            if (!updates.containsKey(word))
            {
                wrong.add(word + ": fed " + fed.get(word) + " times, no count read");
            }
        }
        return wrong;
    }

    private static Map<String, Long> lastCounts(final Map<String, List<Long>> updates)
    {
        final Map<String, Long> last = new TreeMap<>();
        updates.forEach((word, counts) -> last.put(word, counts.get(counts.size() - 1)));
        return last;
    }

    /** A wrong sequence of counts, shortly: how many, the last, and where it first goes wrong. */
    private static String describe(final List<Long> counts, final int fed)
    {
        int i = 0;
        while (i < counts.size() && counts.get(i) == i + 1)
        {
            i++;
        }
        final String at = i < counts.size()
            ? "update " + i + " is " + counts.get(i) + " after " + (i == 0 ? "none" : counts.get(i - 1))
                + (counts.get(i) <= i ? " (a duplicate)" : " (a gap)")
            : "all in order, " + (counts.size() > fed ? "counted too often" : "counted too rarely");
        return counts.size() + " updates read, the last " + (counts.isEmpty() ? "none" : counts.get(counts.size() - 1)) + ", " + at;
    }
}
