package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * librdkafka, through the {@code kcat} command (Debian package kcat; {@code .ci/run} installs it):
 * metadata listing, producing with each compression (librdkafka compresses only when the broker
 * advertises Produce from v0, Kafka 4's quirk), consuming, and the Java consumer reading what it wrote.
 */
class KcatTest
{
    @TempDir
    Path dir;

    private static String run(final String input, final String... command) throws IOException, InterruptedException
    {
        return ChildProcess.run(null, input, 60, "apt-get install kcat", command);
    }

    @Test
    void kcatListsProducesAndConsumes() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            final String b = broker.bootstrap();
            final StringBuilder input = new StringBuilder();
            for (int i = 0; i < 20; i++)
            {
                input.append("key").append(i).append(':').append("value-").append(i).append('\n');
            }
            run(input.toString(), "kcat", "-b", b, "-P", "-t", "cat", "-K:", "-X", "topic.request.required.acks=-1");
            for (final String codec : List.of("gzip", "snappy", "lz4", "zstd"))
            {
                run("k-" + codec + ":" + codec + "-compressed\n", "kcat", "-b", b, "-P", "-t", "cat", "-K:", "-z", codec);
            }
            final String metadata = run(null, "kcat", "-b", b, "-L", "-t", "cat");
            assertTrue(metadata.contains("broker " + broker.broker.config().nodeId() + " at " + b), metadata);
            assertTrue(metadata.contains("topic \"cat\" with 1 partitions"), metadata);

            final String consumed = run(null, "kcat", "-b", b, "-C", "-t", "cat", "-e", "-f", "%k=%s@%o\\n");
            final List<String> lines = new ArrayList<>();
            for (final String line : consumed.strip().split("\n"))
            {
                if (!line.startsWith("% ")) // kcat's own notes ("Reached end of topic")
                {
                    lines.add(line);
                }
            }
            assertEquals(24, lines.size(), consumed);
            for (int i = 0; i < 20; i++)
            {
                assertEquals("key" + i + "=value-" + i + "@" + i, lines.get(i));
            }
            assertEquals("k-zstd=zstd-compressed@23", lines.get(23));

            // what librdkafka wrote, the Java client reads
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
            {
                final TopicPartition tp = new TopicPartition("cat", 0);
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                final List<ConsumerRecord<byte[], byte[]>> got = Polling.pollCount(consumer, 24);
                assertEquals(24, got.size());
                assertEquals("gzip-compressed", new String(got.get(20).value(), StandardCharsets.UTF_8));
                assertEquals("k-snappy", new String(got.get(21).key(), StandardCharsets.UTF_8));
            }
        }
    }

    /** kcat's output lines but its own notes ("% Reached end of topic"). */
    private static List<String> records(final String out)
    {
        final List<String> lines = new ArrayList<>();
        for (final String line : out.strip().split("\n"))
        {
            if (!line.isEmpty() && !line.startsWith("% "))
            {
                lines.add(line);
            }
        }
        return lines;
    }

    /**
     * librdkafka's transactions (transaction version 1: it sends AddPartitionsToTxn itself): kcat with
     * {@code transactional.id} commits what it read from stdin once stdin closes; a transaction of
     * kafka-clients' producer is aborted between kcat's two; librdkafka's read_committed consumer then
     * reads the committed records only (it filters with the Fetch response's aborted transactions),
     * its read_uncommitted one every record. (kcat aborts only when stopped before it produced, so
     * the abort is the Java client's.)
     */
    @Test
    void kcatTransactionsCommitAndItsReadCommittedConsumerSkipsAnAbort() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            final String b = broker.bootstrap();
            run("k1:committed-1\nk2:committed-2\n", "kcat", "-b", b, "-P", "-t", "txn", "-K:", "-X", "transactional.id=kcat-1");
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "java-1")))
            {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>("txn", 0, null, "aborted-3".getBytes(StandardCharsets.UTF_8))).get();
                producer.abortTransaction();
            }
            run("k4:committed-4\n", "kcat", "-b", b, "-P", "-t", "txn", "-K:", "-X", "transactional.id=kcat-1");
            // kcat's commit returns with the EndTxn answer and the coordinator writes the markers after it (Kafka 4.4's
            // order); a read_committed kcat -e stops at the last stable offset, so it waits for the last marker
            try (Admin admin = broker.admin())
            {
                final TopicPartition tp = new TopicPartition("txn", 0);
                await(() -> TransactionLedger.latest(admin, tp, IsolationLevel.READ_COMMITTED)
                    == TransactionLedger.latest(admin, tp, IsolationLevel.READ_UNCOMMITTED), Duration.ofSeconds(20),
                    "the markers written: txn-0's last stable offset at its end");
            }

            assertEquals(List.of("committed-1", "committed-2", "committed-4"), records(run(null, "kcat", "-b", b, "-C", "-t", "txn", "-e",
                "-f", "%s\\n", "-X", "isolation.level=read_committed")));
            assertEquals(List.of("committed-1", "committed-2", "aborted-3", "committed-4"),
                records(run(null, "kcat", "-b", b, "-C", "-t", "txn", "-e", "-f", "%s\\n", "-X", "isolation.level=read_uncommitted")));
        }
    }
}
