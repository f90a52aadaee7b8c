package io.ferrite.broker.e2e;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

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
        final Process process;
        try
        {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
        }
        catch (final IOException ex)
        {
            throw new IOException("kcat is needed for this test (apt-get install kcat; .ci/run installs it)", ex);
        }
        if (input != null)
        {
            process.getOutputStream().write(input.getBytes(StandardCharsets.UTF_8));
        }
        process.getOutputStream().close();
        final String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "kcat finished");
        assertEquals(0, process.exitValue(), String.join(" ", command) + " failed:\n" + out);
        return out;
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
}
