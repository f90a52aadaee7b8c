package io.ferrite.broker.e2e;

import io.ferrite.testing.DroppingProxy;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The server in a child JVM in {@code ferrite.log.durability=fsync}, an idempotent producer at
 * acks=all writing through a proxy that cuts connections after produce requests (so retries are in
 * flight), and a SIGKILL at a random moment of each round: after the restart every acknowledged
 * record is there, once. The default build runs {@value #DEFAULT_ROUNDS} rounds;
 * {@code -Dferrite.fsynccrash.rounds=40} runs the long form. (A SIGKILL keeps the page cache, so
 * this shows recovery and idempotence across a crash, not the fsync itself: a power loss would.)
 */
@Tag("slow") // a crash loop (SIGKILL rounds): outside the default build, in `mvn -B verify -Pslow` (CI runs it; issue 17)
class FsyncCrashTest
{
    private static final int DEFAULT_ROUNDS = 3;
    private static final String TOPIC = "crash";

    @TempDir
    Path dir;

    @Test
    void everyAcknowledgedRecordSurvivesSigkillWithIdempotentRetriesInFlight() throws Exception
    {
        final CrashRounds crash = CrashRounds.of(FsyncCrashTest.class, "fsynccrash", DEFAULT_ROUNDS);
        final int rounds = crash.rounds();
        final long seed = crash.seed();
        final Random random = crash.random();
        final Set<String> acknowledged = ConcurrentHashMap.newKeySet();
        final Path data = dir.resolve("data");
        try (DroppingProxy proxy = new DroppingProxy(seed, 0.05))
        {
            for (int round = 0; round < rounds; round++)
            {
                final ServerCommand.Running server = start(data, proxy);
                if (round == 0)
                {
                    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port())))
                    {
                        admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1))).all().get(20, TimeUnit.SECONDS);
                    }
                }
                else
                {
                    assertAcknowledgedAreThere(server, acknowledged, round);
                }
                final long killAfterMs = 300 + random.nextInt(700);
                final int sentBefore = acknowledged.size();
                try (KafkaProducer<String, String> producer = producer(proxy))
                {
                    final long killAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(killAfterMs);
                    for (int i = 0; System.nanoTime() < killAt; i++)
                    {
                        final String value = round + "-" + i;
                        producer.send(new ProducerRecord<>(TOPIC, 0, null, value), (m, ex) ->
                        {
                            if (ex == null)
                            {
                                acknowledged.add(value);
                            }
                        });
                    }
                    server.process().destroyForcibly(); // SIGKILL with sends and retries in flight
                    assertTrue(server.process().waitFor(30, TimeUnit.SECONDS));
                    assertEquals(137, server.process().exitValue(), "killed");
                    producer.close(Duration.ZERO);
                }
                System.out.println("round " + round + ": killed after " + killAfterMs + " ms, " + (acknowledged.size() - sentBefore) +
                    " records acknowledged in it, " + proxy.dropped.get() + " connections cut so far");
            }
            final ServerCommand.Running last = start(data, proxy);
            try
            {
                assertAcknowledgedAreThere(last, acknowledged, rounds);
            }
            finally
            {
                last.stop();
            }
        }
        assertTrue(acknowledged.size() > 0, "records were acknowledged");
    }

    private ServerCommand.Running start(final Path data, final DroppingProxy proxy) throws Exception
    {
        final ServerCommand.Running server = ServerCommand.start(dir, "--override", "log.dir=" + data,
            "--override", "listeners=PLAINTEXT://127.0.0.1:0", "--override", "ferrite.log.durability=fsync",
            "--override", "advertised.listeners=PLAINTEXT://127.0.0.1:" + proxy.port());
        proxy.target(server.port());
        return server;
    }

    private static KafkaProducer<String, String> producer(final DroppingProxy proxy)
    {
        final Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + proxy.port());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 400);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 1);
        p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 10);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        return new KafkaProducer<>(p);
    }

    /** Reads the whole partition through the broker directly: each acknowledged value there exactly once. */
    private static void assertAcknowledgedAreThere(final ServerCommand.Running server, final Set<String> acknowledged,
        final int round)
    {
        final Map<String, Object> c = new HashMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port());
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        final TopicPartition tp = new TopicPartition(TOPIC, 0);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c))
        {
            consumer.assign(List.of(tp));
            final long end = consumer.endOffsets(List.of(tp), Duration.ofSeconds(60)).get(tp);
            consumer.seekToBeginning(List.of(tp));
            final List<String> values = new ArrayList<>();
            await(() ->
            {
                for (final ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200)))
                {
                    values.add(r.value());
                }
                return consumer.position(tp) >= end;
            }, Duration.ofSeconds(60), () -> "read to the log end " + end);
            assertEquals(end, consumer.position(tp), "read to the log end after round " + round);
            final Set<String> present = new HashSet<>();
            for (final String v : values)
            {
                assertTrue(present.add(v), "written twice: " + v + " (after round " + round + ")");
            }
            final List<String> lost = new ArrayList<>();
            for (final String v : acknowledged)
            {
                if (!present.contains(v))
                {
                    lost.add(v);
                }
            }
            assertEquals(List.of(), lost, "acknowledged and lost after round " + round);
        }
    }
}
