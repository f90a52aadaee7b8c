package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What the Kafka Streams word count tests (StreamsEosCrashTest, StreamsRestoreTest) share: the broker — Ferrite in
 * this JVM, or for development the broker at {@code -Dferrite.streams.bootstrap=host:port} (Apache Kafka 4.4 from
 * {@code /work/shared/kafka-ref}) with names of the run's own —, the word count in its child JVM, its feeder, and
 * what the application has committed.
 */
abstract class WordCountTestBase
{
    static final int WORDS = 12;
    static final int PARTITIONS = 2;

    @TempDir
    Path dir;

    RunningBroker broker;
    ForkedWordCount wordCount;
    WordFeeder feeder;
    /** Set by {@link #startBroker}. */
    String bootstrap;
    /** Appended to the application's and the topics' names: empty on a broker of the test's own. */
    String suffix;

    @AfterEach
    void stopWhatIsLeft() throws Exception
    {
        if (wordCount != null)
        {
            wordCount.close();
        }
        if (feeder != null)
        {
            feeder.close();
        }
        if (broker != null)
        {
            broker.close();
        }
    }

    /** Starts Ferrite unless another broker is named; returns which, for the test's output. */
    String startBroker(final long seed) throws IOException
    {
        final String external = System.getProperty("ferrite.streams.bootstrap");
        if (external == null)
        {
            broker = new RunningBroker(dir.resolve("data"), Map.of());
            bootstrap = broker.bootstrap();
            suffix = "";
            return "Ferrite";
        }
        bootstrap = external;
        suffix = "-" + seed; // a broker kept between runs: names of this run's own
        return external;
    }

    Admin admin()
    {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
            AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 20_000, AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000));
    }

    static void createTopics(final Admin admin, final String input, final String output) throws Exception
    {
        admin.createTopics(List.of(new NewTopic(input, PARTITIONS, (short)1), new NewTopic(output, PARTITIONS, (short)1)))
            .all().get(20, TimeUnit.SECONDS);
    }

    /** The sum of the application's committed offsets on the input topic: how many input records it has committed. */
    static long committedInput(final Admin admin, final String application, final String input) throws Exception
    {
        long sum = 0;
        for (final Map.Entry<TopicPartition, OffsetAndMetadata> e : admin.listConsumerGroupOffsets(application)
            .partitionsToOffsetAndMetadata().get(20, TimeUnit.SECONDS).entrySet())
        {
            if (e.getKey().topic().equals(input) && e.getValue() != null)
            {
                sum += e.getValue().offset();
            }
        }
        return sum;
    }
}
