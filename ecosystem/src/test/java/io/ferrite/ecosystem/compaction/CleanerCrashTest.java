package io.ferrite.ecosystem.compaction;

import io.ferrite.testing.BrokerNode;
import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * SIGKILL of a Ferrite broker while its cleaner works, round after round (1 in the default build, 3 under
 * {@code -Pslow}, 50 under {@code -Plong}, {@code -Dferrite.cleaner.crash.rounds}; tagged {@code shortened}: 3 in the
 * default build before issue 17's build work, 15 s of the module's 17): a compacted topic of small segments, a
 * cleaner that runs every 50 ms at any dirt, and an idempotent acks=all producer putting and deleting
 * 300 keys; each record carries its key's version in a header. The broker is killed at a random moment
 * 1-4 s into each round and restarted on the same directory (past the rounds asked for, up to 7 more until a kill
 * came after the cleaner's first checkpoint); then the partition is read from offset 0:
 * no key's latest acknowledged value is lost (its last record is that version or a later one sent), no
 * stale value reappears (a key's versions only go up along the offsets, and a key whose latest
 * acknowledged operation was a delete ends with no value older than that delete), and the log is still
 * cleaned by the restarted broker.
 */
class CleanerCrashTest
{
    private static final String TOPIC = "crash-compacted";
    private static final int KEYS = 300;
    private static final int ROUNDS = Integer.getInteger("ferrite.cleaner.crash.rounds", 1);
    /** Rounds at most: past ROUNDS, on until a kill came after the cleaner's first checkpoint (a loaded machine may produce little in 1-4 s). */
    private static final int MAX_ROUNDS = ROUNDS + 7;

    @TempDir
    Path dir;

    /** A key's latest acknowledged operation: its version, and whether it was a delete. */
    private record Acked(long version, boolean delete)
    {
    }

    @Test
    @Tag("shortened")
    void noKeyLostAndNoStaleValueAfterKillsDuringCleaning() throws Exception
    {
        final Map<String, String> brokerConfig = Map.of("log.cleaner.backoff.ms", "50");
        final Map<Integer, Acked> acked = new ConcurrentHashMap<>();
        final long[] versions = new long[KEYS];
        final Random random = new Random();
        final Path brokerDir = dir.resolve("ferrite");
        long cleanedRounds = 0;
        int rounds = 0;
        for (int round = 1; round <= ROUNDS || cleanedRounds == 0 && round <= MAX_ROUNDS; round++)
        {
            final BrokerNode broker = BrokerNode.spawn(BrokerNode.Kind.FERRITE, "ferrite", brokerDir, brokerConfig);
            try
            {
                broker.awaitReady();
                if (round == 1)
                {
                    createTopic(broker);
                }
                else
                {
                    verify(broker, acked, round);
                }
                final long killAt = System.nanoTime() + (1_000 + random.nextInt(3_000)) * 1_000_000L;
                final KafkaProducer<byte[], byte[]> producer = producer(broker);
                try
                {
                    while (System.nanoTime() < killAt)
                    {
                        final int key = random.nextInt(KEYS);
                        final long version = ++versions[key];
                        final boolean delete = random.nextInt(20) == 0;
                        final ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(TOPIC, 0, key(key),
                            delete ? null : value(key, version, random));
                        record.headers().add("v", ByteBuffer.allocate(8).putLong(version).array());
                        producer.send(record, (metadata, error) ->
                        {
                            if (error == null)
                            {
                                acked.merge(key, new Acked(version, delete), (a, b) -> a.version >= b.version ? a : b);
                            }
                        });
                    }
                    broker.kill();
                }
                finally
                {
                    // sends not acknowledged by the kill fail here: they were not promised
                    producer.close(Duration.ZERO);
                }
                final long cleaned = CleanerProgress.checkpointed(brokerDir.resolve("ferrite-data").resolve("cleaner-offset-checkpoint"), TOPIC, 0);
                cleanedRounds += cleaned > 0 ? 1 : 0;
                rounds = round;
            }
            finally
            {
                broker.kill();
            }
        }
        try (BrokerNode broker = BrokerNode.spawn(BrokerNode.Kind.FERRITE, "ferrite", brokerDir, brokerConfig))
        {
            broker.awaitReady();
            verify(broker, acked, rounds + 1);
            CleanerProgress.awaitCleaned(broker, TOPIC, 0);
            verify(broker, acked, rounds + 1);
        }
        System.out.println(rounds + " kills; the cleaner had checkpointed before " + cleanedRounds + " of them");
        assertTrue(cleanedRounds > 0, "the cleaner never cleaned before a kill: the kills did not land while it worked");
    }

    private static void createTopic(final BrokerNode broker) throws Exception
    {
        try (Admin admin = Admin.create(broker.clientConfig()))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1).configs(Map.of(
                "cleanup.policy", "compact",
                "internal.segment.bytes", "65536",
                "min.cleanable.dirty.ratio", "0.01",
                "delete.retention.ms", "2000")))).all().get();
        }
    }

    private static KafkaProducer<byte[], byte[]> producer(final BrokerNode broker)
    {
        final Map<String, Object> config = new HashMap<>(broker.clientConfig());
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        config.put(ProducerConfig.LINGER_MS_CONFIG, 2);
        config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 5_000);
        config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 5_000);
        config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 4_000);
        return new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static byte[] key(final int key)
    {
        return ("key-" + key).getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] value(final int key, final long version, final Random random)
    {
        final byte[] value = new byte[100 + random.nextInt(200)];
        random.nextBytes(value);
        final byte[] tag = (key + ":" + version + ":").getBytes(StandardCharsets.UTF_8);
        System.arraycopy(tag, 0, value, 0, tag.length);
        return value;
    }

    /** Reads the partition from offset 0 to its end and checks every key against what was acknowledged. */
    private static void verify(final BrokerNode broker, final Map<Integer, Acked> acked, final int round)
    {
        final Map<Integer, Long> lastVersion = new HashMap<>();
        final Map<Integer, Boolean> lastDelete = new HashMap<>();
        final Map<String, Object> config = new HashMap<>(broker.clientConfig());
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer()))
        {
            final TopicPartition tp = new TopicPartition(TOPIC, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            final long end = consumer.endOffsets(List.of(tp)).get(tp);
            Await.await(() ->
            {
                for (final ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200)))
                {
                    final int key = Integer.parseInt(new String(r.key(), StandardCharsets.UTF_8).substring(4));
                    final Header v = r.headers().lastHeader("v");
                    final long version = ByteBuffer.wrap(v.value()).getLong();
                    final Long before = lastVersion.put(key, version);
                    if (before != null && before >= version)
                    {
                        fail("round " + round + ": key " + key + " version " + version + " at offset " + r.offset() + " after version " + before);
                    }
                    if (r.value() != null && !new String(r.value(), 0, 20, StandardCharsets.ISO_8859_1).startsWith(key + ":" + version + ":"))
                    {
                        fail("round " + round + ": key " + key + " at offset " + r.offset() + " holds another record's value");
                    }
                    lastDelete.put(key, r.value() == null);
                }
                return consumer.position(tp) >= end;
            }, Duration.ofSeconds(60), () -> "round " + round + ": read the partition to " + end);
        }
        for (final Map.Entry<Integer, Acked> e : acked.entrySet())
        {
            final int key = e.getKey();
            final Acked promised = e.getValue();
            final Long found = lastVersion.get(key);
            if (found == null)
            {
                assertTrue(promised.delete, () -> "round " + round + ": key " + key + " lost: acknowledged at version " + promised.version
                    + ", nothing in the log");
            }
            else
            {
                assertTrue(found >= promised.version, () -> "round " + round + ": key " + key + " ends at version " + found + " ("
                    + (lastDelete.get(key) ? "delete" : "value") + "), but version " + promised.version + " was acknowledged");
            }
        }
    }
}
