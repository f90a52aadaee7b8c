package io.ferrite.broker.group;

import io.ferrite.testing.TeeStream;
import io.ferrite.broker.Broker;
import io.ferrite.broker.config.BrokerConfig;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Tag;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static io.ferrite.broker.group.KafkaOffsetsLog.key;
import static io.ferrite.broker.group.KafkaOffsetsLog.message;
import static io.ferrite.broker.group.KafkaOffsetsLog.value;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A {@code __consumer_offsets} log of good records (Kafka's serializers, every value version) among bad
 * ones — cut short, random bytes under a record type Kafka does not declare, a value version above
 * what 4.4 reads, a key or value too short for its int16 prefix — in random order: the broker starts
 * every time, Kafka's Admin lists exactly the good offsets (a bad record changes nothing), and the log
 * has one line per bad record, naming its partition and offset. Tagged {@code shortened}: 3 logs (a
 * broker start each) in the default build; {@link #manyLogs} (tagged slow) 30.
 */
@Tag("shortened")
class OffsetsLoadFuzzTest
{
    private static final Pattern SKIPPED = Pattern.compile("__consumer_offsets-0 offset ([0-9]+): a record skipped");
    private static final String[] GROUPS = {"g0", "g1", "g2"};

    @Property(tries = 3)
    void theBrokerStartsAndKeepsTheGoodOffsets(@ForAll final long seed) throws Exception
    {
        check(seed);
    }

    @Property(tries = 30)
    @Tag("slow")
    void manyLogs(@ForAll final long seed) throws Exception
    {
        check(seed);
    }

    private static void check(final long seed) throws Exception
    {
        final Random r = new Random(seed);
        final KafkaOffsetsLog log = new KafkaOffsetsLog();
        final Map<String, Map<TopicPartition, Long>> expected = new HashMap<>();
        final Set<Long> bad = new TreeSet<>();
        final int records = 20 + r.nextInt(60);
        for (int i = 0; i < records; i++)
        {
            final String group = GROUPS[r.nextInt(GROUPS.length)];
            final TopicPartition tp = new TopicPartition("t" + r.nextInt(3), r.nextInt(4));
            final byte[] key = key(message("OffsetCommitKey", "Group", group, "Topic", tp.topic(), "Partition", tp.partition()));
            final long offset = r.nextInt(1_000_000);
            final int version = r.nextInt(5);
            final byte[] value = value(message("OffsetCommitValue", "Offset", offset, "LeaderEpoch", r.nextInt(5), "Metadata",
                "m" + r.nextInt(100), "CommitTimestamp", System.currentTimeMillis(), "TopicId", Uuid.randomUuid()), version);
            if (r.nextInt(3) > 0)
            {
                log.add(key, value);
                expected.computeIfAbsent(group, g -> new HashMap<>()).put(tp, offset);
                continue;
            }
            bad.add((long)log.next());
            switch (r.nextInt(6))
            {
                case 0 -> log.add(Arrays.copyOf(key, r.nextInt(key.length)), value); // key cut short
                case 1 -> log.add(key, Arrays.copyOf(value, r.nextInt(value.length))); // value cut short
                case 2 -> log.add(typed(24 + r.nextInt(Short.MAX_VALUE - 24), random(r)), random(r)); // a type Kafka does not declare
                case 3 -> log.add(typed(-1 - r.nextInt(Short.MAX_VALUE), random(r)), random(r)); // a negative type
                case 4 -> log.add(key, typed(5 + r.nextInt(Short.MAX_VALUE - 5), Arrays.copyOfRange(value, 2, value.length))); // a future version
                default -> log.add(key, new byte[r.nextInt(2)]); // no room for the value's version
            }
        }
        final Path dir = Files.createTempDirectory("offsets-fuzz");
        log.writeTo(dir);
        final PrintStream originalErr = System.err;
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(new TeeStream(originalErr, captured), true, StandardCharsets.UTF_8));
        final Map<String, Map<TopicPartition, Long>> listed = new HashMap<>();
        try (Broker broker = Broker.start(BrokerConfig.of(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0",
            BrokerConfig.LOG_DIR, dir.toString(), BrokerConfig.KAFKA_METADATA_IMPORT_ENABLE, "false", // a coordinator log written here, no Kafka metadata
            "offsets.topic.num.partitions", "1")));
            Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.address().getPort())))
        {
            for (final String group : GROUPS)
            {
                final Map<TopicPartition, Long> offsets = new HashMap<>();
                final Map<TopicPartition, OffsetAndMetadata> found =
                    admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
                found.forEach((tp, o) -> offsets.put(tp, o.offset()));
                if (!offsets.isEmpty())
                {
                    listed.put(group, offsets);
                }
            }
        }
        finally
        {
            System.setErr(originalErr);
            try (Stream<Path> files = Files.walk(dir))
            {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
        assertEquals(expected, listed, "the good offsets, seed " + seed);
        final Set<Long> logged = new TreeSet<>();
        final Matcher m = SKIPPED.matcher(captured.toString(StandardCharsets.UTF_8));
        int lines = 0;
        while (m.find())
        {
            lines++;
            logged.add(Long.parseLong(m.group(1)));
        }
        assertEquals(bad, logged, "the bad records' offsets logged, seed " + seed);
        assertEquals(bad.size(), lines, "one line per bad record, seed " + seed);
    }

    private static byte[] typed(final int prefix, final byte[] rest)
    {
        return ByteBuffer.allocate(2 + rest.length).putShort((short)prefix).put(rest).array();
    }

    private static byte[] random(final Random r)
    {
        final byte[] b = new byte[r.nextInt(40)];
        r.nextBytes(b);
        return b;
    }
}
