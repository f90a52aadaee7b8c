package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The server as its command runs it, in a child JVM: {@code --config} with Kafka's property names
 * and {@code --override}s, the line saying where it listens, SIGTERM ending in a clean shutdown with
 * exit status 0, and SIGKILL losing no acknowledged record.
 */
class ServerProcessTest
{
    private static final Pattern LISTENING = Pattern.compile("Ferrite listening on PLAINTEXT://127\\.0\\.0\\.1:(\\d+)");

    @TempDir
    Path dir;

    /** A running server process and its port. */
    private record Server(Process process, int port)
    {
    }

    private Server start(final Path config) throws IOException
    {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final Process process = new ProcessBuilder(java, "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path"), "io.ferrite.broker.FerriteServer",
            "--config", config.toString(), "--override", "log.dir=" + dir.resolve("data"),
            "--override", "listeners=PLAINTEXT://127.0.0.1:0")
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
        final BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = out.readLine()) != null)
        {
            final Matcher m = LISTENING.matcher(line);
            if (m.find())
            {
                return new Server(process, Integer.parseInt(m.group(1)));
            }
        }
        throw new IllegalStateException("the server ended without saying where it listens, exit " + waitFor(process));
    }

    private static int waitFor(final Process process)
    {
        try
        {
            return process.waitFor(10, TimeUnit.SECONDS) ? process.exitValue() : -1;
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static KafkaProducer<String, String> producer(final int port)
    {
        return new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port,
            ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.LINGER_MS_CONFIG, 1),
            new StringSerializer(), new StringSerializer());
    }

    private static List<String> readAll(final int port, final String topic, final int partitions, final int expected)
    {
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
            "127.0.0.1:" + port, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new StringDeserializer(), new StringDeserializer()))
        {
            final List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < partitions; p++)
            {
                tps.add(new TopicPartition(topic, p));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            final List<String> values = new ArrayList<>();
            for (final ConsumerRecord<String, String> r : Polling.pollCount(consumer, expected))
            {
                values.add(r.value());
            }
            return values;
        }
    }

    @Test
    void configFileOverridesSigtermAndSigkill() throws Exception
    {
        final Path config = dir.resolve("server.properties");
        Files.writeString(config, "# Kafka's names\nnode.id=7\nnum.partitions=3\nlisteners=PLAINTEXT://127.0.0.1:9\n");
        Server server = start(config);
        final List<String> acked = new ArrayList<>();
        try (KafkaProducer<String, String> producer = producer(server.port()))
        {
            for (int i = 0; i < 300; i++)
            {
                producer.send(new ProducerRecord<>("auto", "k" + i, "first-" + i)).get(20, TimeUnit.SECONDS);
                acked.add("first-" + i);
            }
        }
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port())))
        {
            assertEquals(7, admin.describeCluster().controller().get(20, TimeUnit.SECONDS).id(), "node.id from the file");
            assertEquals(3, admin.describeTopics(List.of("auto")).allTopicNames().get(20, TimeUnit.SECONDS).get("auto")
                .partitions().size(), "num.partitions from the file for an auto-created topic");
        }

        server.process().destroy(); // SIGTERM
        assertTrue(server.process().waitFor(30, TimeUnit.SECONDS), "stopped after SIGTERM");
        assertEquals(0, server.process().exitValue(), "clean exit after SIGTERM");
        assertTrue(Files.exists(dir.resolve("data").resolve(".kafka_cleanshutdown")), "clean-shutdown marker written");

        server = start(config);
        try
        {
            assertEquals(acked.size(), readAll(server.port(), "auto", 3, acked.size()).size(), "records after a clean restart");
            try (KafkaProducer<String, String> producer = producer(server.port()))
            {
                for (int i = 0; i < 200; i++)
                {
                    producer.send(new ProducerRecord<>("auto", "k" + i, "second-" + i)).get(20, TimeUnit.SECONDS);
                    acked.add("second-" + i);
                }
            }
            server.process().destroyForcibly(); // SIGKILL
            assertTrue(server.process().waitFor(30, TimeUnit.SECONDS));
            assertEquals(137, server.process().exitValue(), "killed");

            server = start(config);
            final List<String> after = readAll(server.port(), "auto", 3, acked.size());
            assertEquals(acked.size(), after.size(), "every acknowledged record after SIGKILL and recovery");
            assertTrue(after.containsAll(acked));
        }
        finally
        {
            server.process().destroy();
            server.process().waitFor(30, TimeUnit.SECONDS);
        }
    }
}
