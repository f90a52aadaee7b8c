package io.ferrite.ecosystem.connect;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.ferrite.testing.Await.await;

/**
 * What reached where: the lines of a FileStreamSink's file, the values of a topic, and how they compare with
 * the source file's lines — which are missing (a loss) and how many came more than once (a repeat).
 */
final class Delivery
{
    private Delivery()
    {
    }

    /** The sink file's lines; an absent file has none. */
    static List<String> lines(final Path file) throws IOException
    {
        if (!Files.exists(file))
        {
            return List.of();
        }
        return Files.readString(file, StandardCharsets.UTF_8).lines().toList();
    }

    /** The lines of {@code source} that {@code seen} lacks. */
    static List<String> missing(final List<String> source, final List<String> seen)
    {
        final Set<String> present = new HashSet<>(seen);
        return source.stream().filter(l -> !present.contains(l)).toList();
    }

    /** How many of {@code seen} repeat an earlier one. */
    static int repeats(final List<String> seen)
    {
        return seen.size() - new HashSet<>(seen).size();
    }

    /** A short account for the test's output and failure messages. */
    static String summary(final String where, final List<String> source, final List<String> seen)
    {
        final List<String> missing = missing(source, seen);
        return where + ": " + seen.size() + " lines for " + source.size() + " written, " + repeats(seen) + " repeated, "
            + missing.size() + " missing" + (missing.isEmpty() ? "" : " (first " + missing.subList(0, Math.min(5, missing.size())) + ")");
    }

    /** Waits until the sink file holds every line of {@code source}. */
    static void awaitAllIn(final Path sinkFile, final List<String> source, final Duration deadline)
    {
        await(() -> missing(source, lines(sinkFile)).isEmpty(), deadline,
            () -> "every source line in the sink file; " + summaryOf(sinkFile, source));
    }

    private static String summaryOf(final Path sinkFile, final List<String> source)
    {
        try
        {
            return summary("sink file", source, lines(sinkFile));
        }
        catch (final IOException ex)
        {
            return "sink file unreadable: " + ex;
        }
    }

    /** Every value of single-partition {@code topic} from its start to its end (the last stable offset under read_committed). */
    static List<String> topicValues(final String bootstrap, final String topic, final String isolation)
    {
        final Map<String, Object> c = new HashMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        final List<String> values = new ArrayList<>();
        final TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c))
        {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            final long end = consumer.endOffsets(List.of(tp)).get(tp);
            await(() ->
            {
                for (final ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200)))
                {
                    values.add(r.value());
                }
                return consumer.position(tp) >= end;
            }, Duration.ofSeconds(30), () -> topic + " read to its end " + end + ", " + values.size() + " values so far");
        }
        return values;
    }
}
