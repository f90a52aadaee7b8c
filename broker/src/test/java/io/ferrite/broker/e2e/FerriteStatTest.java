package io.ferrite.broker.e2e;

import io.ferrite.broker.metrics.CountersFile;
import org.agrona.concurrent.status.CountersReader;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.BaseRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The counters file read by {@code ferrite-stat --once} in a child JVM (another process, as an operator runs it) while
 * the broker runs and after it died: records and bytes in and bytes out as kafka-clients produced and consumed them,
 * request counts, the error counters of an unknown topic and of refused Produce and Fetch partitions, and a follower's
 * fetches counted apart.
 */
class FerriteStatTest
{
    private static final Pattern ROW = Pattern.compile("^(.*\\S)\\s+(-?\\d+)$");
    private static final int RECORDS = 200;

    @TempDir
    Path dir;

    @Test
    void producedAndConsumedRecordsShowInFerriteStat() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("counted", 1, (short)1))).all().get(30, TimeUnit.SECONDS);
            }
            // one synchronous send per record: one Produce request each, one batch each
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all")))
            {
                for (int i = 0; i < RECORDS; i++)
                {
                    producer.send(new ProducerRecord<>("counted", ("key-" + i).getBytes(StandardCharsets.UTF_8),
                        ("value of record " + i).getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
                }
            }
            int consumed = 0;
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
            {
                consumer.assign(List.of(new TopicPartition("counted", 0)));
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (consumed < RECORDS && System.nanoTime() < deadline)
                {
                    for (final ConsumerRecord<byte[], byte[]> ignored : consumer.poll(Duration.ofMillis(200)))
                    {
                        consumed++;
                    }
                }
            }
            assertEquals(RECORDS, consumed);
            // the batches as written: what was produced and what was fetched, byte for byte
            final long logBytes = broker.broker.topics().topic("counted").partitions[0].log.sizeInBytes();
            final Map<String, Long> stat = stat("--once");
            assertEquals(RECORDS, stat.get("records in"), stat::toString);
            assertEquals(RECORDS, stat.get("records in topic=counted"), stat::toString);
            assertEquals(logBytes, stat.get("bytes in"), stat::toString);
            assertEquals(logBytes, stat.get("bytes in topic=counted"), stat::toString);
            assertEquals(logBytes, stat.get("bytes out"), stat::toString);
            assertEquals(logBytes, stat.get("bytes out topic=counted"), stat::toString);
            assertEquals(null, stat.get("replication bytes out"), "no follower fetched: " + stat);
            assertEquals(RECORDS, stat.get("Produce requests"), stat::toString);
            assertTrue(stat.getOrDefault("Fetch requests", 0L) >= 1, stat::toString);
            assertTrue(stat.getOrDefault("Metadata requests", 0L) >= 2, stat::toString);
            assertTrue(stat.getOrDefault("connections accepted", 0L) >= 3, stat::toString);
            assertTrue(stat.getOrDefault("network duty cycles", 0L) > 0, stat::toString);
            assertEquals(null, stat.get("Produce errors"), "no error, no row (zeros are left out): " + stat);
            // the filter and the per-thread rows: the two network threads' rows add up to the sum
            final Map<String, Long> perThread = stat("--once", "--all", "--per-thread", "--filter", "records in topic=counted");
            assertEquals(2, perThread.size(), perThread::toString);
            assertEquals(RECORDS, perThread.values().stream().mapToLong(Long::longValue).sum(), perThread::toString);
        }
        // closed: the last values stay readable
        assertEquals(RECORDS, stat("--once").get("records in"));
    }

    @Test
    void anUnknownTopicShowsInTheErrorCounters() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("auto.create.topics.enable", "false")))
        {
            final CountersReader reader = broker.broker.counters().reader();
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(UnknownTopicSends.producerConfig()))
            {
                UnknownTopicSends.untilCounted(producer, "no-such-topic", () -> sum(reader, "Metadata errors") >= 1,
                    "a Metadata error counted");
            }
            final Map<String, Long> stat = stat("--once", "--filter", "rror");
            assertTrue(stat.getOrDefault("Metadata errors", 0L) >= 1, stat::toString);
            assertEquals(stat.get("Metadata errors"), stat.get("error UNKNOWN_TOPIC_OR_PARTITION (3)"), stat::toString);
            assertEquals(null, stat.get("records in"), "filtered out: " + stat);
        }
    }

    @Test
    void aTopicsCountersComeWithItAndGoWithIt() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            assertEquals(Map.of(), stat("--once", "--all", "--filter", "topic=brief"));
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("brief", 2, (short)1))).all().get(30, TimeUnit.SECONDS);
                try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
                {
                    producer.send(new ProducerRecord<>("brief", 1, null, new byte[7])).get(30, TimeUnit.SECONDS);
                }
                final Map<String, Long> made = stat("--once", "--all", "--filter", "topic=brief");
                assertEquals(Map.of("records in topic=brief", 1L, "bytes in topic=brief",
                    broker.broker.topics().topic("brief").partitions[1].log.sizeInBytes(), "bytes out topic=brief", 0L), made);
                // grown: the new partition counts into the topic's counters
                admin.createPartitions(Map.of("brief", org.apache.kafka.clients.admin.NewPartitions.increaseTo(3)))
                    .all().get(30, TimeUnit.SECONDS);
                await(() -> broker.broker.topics().topic("brief").partitions.length == 3,
                    Duration.ofSeconds(30), "the third partition published");
                try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
                {
                    producer.send(new ProducerRecord<>("brief", 2, null, new byte[7])).get(30, TimeUnit.SECONDS);
                }
                assertEquals(2, stat("--once", "--filter", "topic=brief").get("records in topic=brief"));
                admin.deleteTopics(List.of("brief")).all().get(30, TimeUnit.SECONDS); // freed before the answer
            }
            assertEquals(Map.of(), stat("--once", "--all", "--filter", "topic=brief"));
            assertEquals(2, stat("--once").get("records in"), "the broker's figure keeps what the topic had");
        }
    }

    @Test
    void aProduceToAMissingPartitionAndAFetchOutOfRangeShowInTheErrorCounters() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            final Uuid topicId;
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("refused", 1, (short)1))).all().get(30, TimeUnit.SECONDS);
                topicId = admin.describeTopics(List.of("refused")).allTopicNames().get().get("refused").topicId();
            }
            final int port = broker.broker.address().getPort();
            try (RawClient client = new RawClient(port))
            {
                // partition 5 of a topic of one: the broker answers the partition UNKNOWN_TOPIC_OR_PARTITION
                final ProduceRequestData request = new ProduceRequestData().setAcks((short)1).setTimeoutMs(10_000);
                request.topicData().add(new ProduceRequestData.TopicProduceData().setName("refused").setPartitionData(List.of(
                    new ProduceRequestData.PartitionProduceData().setIndex(5).setRecords(
                        MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(new byte[10]))))));
                final short version = 9;
                final ProduceResponseData response = new ProduceResponseData(
                    new ByteBufferAccessor(client.exchange(ApiKeys.PRODUCE, version, request)), version);
                assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(),
                    response.responses().iterator().next().partitionResponses().get(0).errorCode());
            }
            try (RawFollower consumer = new RawFollower(port, -1, RawFollower.OLD_VERSION, "refused", topicId))
            {
                assertEquals(Errors.OFFSET_OUT_OF_RANGE.code(), consumer.fetch(-1, 1000).errorCode(), "beyond the empty log's end");
            }
            assertEquals(Map.of("Produce errors", 1L, "Fetch errors", 1L, "error UNKNOWN_TOPIC_OR_PARTITION (3)", 1L,
                "error OFFSET_OUT_OF_RANGE (1)", 1L, "Produce error UNKNOWN_TOPIC_OR_PARTITION (3)", 1L,
                "Fetch error OFFSET_OUT_OF_RANGE (1)", 1L), stat("--once", "--filter", "rror"));
        }
    }

    @Test
    void aFollowersFetchesCountAsReplicationBytesOutNotAsBytesOut() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            final Uuid topicId;
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("replicated", 1, (short)1))).all().get(30, TimeUnit.SECONDS);
                topicId = admin.describeTopics(List.of("replicated")).allTopicNames().get().get("replicated").topicId();
            }
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
            {
                for (int i = 0; i < 5; i++)
                {
                    producer.send(new ProducerRecord<>("replicated", 0, null, new byte[100])).get(30, TimeUnit.SECONDS);
                }
            }
            broker.broker.leadership().leadWithoutController("replicated", 0, 0, new int[] {1, 2, 3}, new int[] {1, 2, 3},
                (topic, partition, leaderEpoch, isr) -> { }).get(20, TimeUnit.SECONDS);
            final long logBytes = broker.broker.topics().topic("replicated").partitions[0].log.sizeInBytes();
            try (RawFollower follower = new RawFollower(broker.broker.address().getPort(), 2, RawFollower.NEW_VERSION,
                "replicated", topicId))
            {
                final FetchResponseData.PartitionData fetched = follower.fetch(0, 0);
                assertEquals(Errors.NONE.code(), fetched.errorCode());
                assertEquals(logBytes, ((BaseRecords)fetched.records()).sizeInBytes(), "the whole log in one answer");
            }
            final Map<String, Long> stat = stat("--once", "--filter", "bytes out");
            assertEquals(Map.of("replication bytes out", logBytes), stat, "Kafka's BytesOutPerSec leaves followers out");
        }
    }

    @Test
    void theLastValuesStayReadableAfterTheBrokerIsKilled() throws Exception
    {
        final Path data = dir.resolve("data");
        final ServerCommand.Running server = ServerCommand.start(dir, "--override", "log.dirs=" + data,
            "--override", "listeners=PLAINTEXT://127.0.0.1:0");
        try
        {
            final Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, org.apache.kafka.common.serialization.ByteArraySerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, org.apache.kafka.common.serialization.ByteArraySerializer.class);
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config))
            {
                for (int i = 0; i < 10; i++)
                {
                    producer.send(new ProducerRecord<>("killed", new byte[100])).get(30, TimeUnit.SECONDS);
                }
            }
        }
        finally
        {
            server.process().destroyForcibly(); // SIGKILL: nothing of the broker runs after it
            assertTrue(server.process().waitFor(30, TimeUnit.SECONDS));
        }
        final List<String> lines = statLines(data, "--once");
        assertTrue(lines.get(0).contains("(not running)"), lines::toString);
        final Map<String, Long> stat = rows(lines);
        assertEquals(10, stat.get("records in"), stat::toString);
        assertEquals(10, stat.get("records in topic=killed"), stat::toString);
    }

    @Test
    void aLiveProcessThatStartedAfterTheFileWasMadeIsNotTheBroker() throws Exception
    {
        CountersFile.create(dir, 1024).close(); // this JVM's pid, made now
        assertTrue(statLines(dir, "--once").get(0).contains("(running)"));
        // the same pid, a file made in 1970: the id was reused by this JVM, the broker that made the file is gone
        try (FileChannel channel = FileChannel.open(dir.resolve(CountersFile.NAME), StandardOpenOption.WRITE))
        {
            channel.write(ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, 1000), 16);
        }
        final List<String> lines = statLines(dir, "--once");
        assertTrue(lines.get(0).contains("(not running)") && lines.get(0).contains("started 1970-01-01T00:00:01Z"),
            lines::toString);
    }

    @Test
    void aRefreshingStatWaitsThroughAFileNotWrittenYet() throws Exception
    {
        // a broker between making its file and writing the header: a file of zeros (layout 0)
        Files.write(dir.resolve(CountersFile.NAME), new byte[256]);
        final Path out = dir.resolve("refreshing.txt");
        final Process process = new ProcessBuilder(statCommand(dir, "--interval", "100")).redirectOutput(out.toFile())
            .redirectErrorStream(true).start();
        try
        {
            await(() -> Files.readString(out).contains("waiting for " + dir.resolve(CountersFile.NAME)), Duration.ofSeconds(60),
                "a waiting line");
            CountersFile.create(dir, 1024).close(); // the broker's file, made: the next refresh shows it
            await(() -> Files.readString(out).contains("(running)"), Duration.ofSeconds(60), "the new file shown");
            assertTrue(process.isAlive(), () -> "ended: " + out);
        }
        finally
        {
            process.destroyForcibly();
            assertTrue(process.waitFor(30, TimeUnit.SECONDS));
        }
    }

    /** The sum over the network threads of the counters labelled {@code label net=N}, read in this process. */
    private static long sum(final CountersReader reader, final String label)
    {
        final long[] sum = {0};
        reader.forEach((value, id, l) ->
        {
            if (l.startsWith(label + " net="))
            {
                sum[0] += value;
            }
        });
        return sum[0];
    }

    private Map<String, Long> stat(final String... args) throws IOException, InterruptedException
    {
        return rows(statLines(dir, args));
    }

    /** The rows of {@code ferrite-stat --once args} (a child JVM), for an await's condition. */
    static Map<String, Long> onceRows(final Path logDir, final String... args)
    {
        final String[] all = new String[args.length + 1];
        all[0] = "--once";
        System.arraycopy(args, 0, all, 1, args.length);
        try
        {
            return rows(statLines(logDir, all));
        }
        catch (final java.io.IOException | InterruptedException e)
        {
            throw new IllegalStateException(e);
        }
    }

    static Map<String, Long> rows(final List<String> lines)
    {
        final Map<String, Long> rows = new LinkedHashMap<>();
        for (final String line : lines.subList(2, lines.size()))
        {
            final Matcher m = ROW.matcher(line);
            assertTrue(m.matches(), line);
            rows.put(m.group(1), Long.parseLong(m.group(2)));
        }
        return rows;
    }

    /** The command line of {@code ferrite-stat --dir logDir args} in a child JVM, as bin/ferrite-stat runs it. */
    static List<String> statCommand(final Path logDir, final String... args)
    {
        // a --once lives a second: the client compiler alone (ChildJava)
        final List<String> command = ChildJava.command(List.of(args).contains("--once"), "io.ferrite.broker.metrics.FerriteStat");
        command.addAll(List.of("--dir", logDir.toString()));
        command.addAll(List.of(args));
        return command;
    }

    /** {@code ferrite-stat --dir logDir args} in a child JVM, as bin/ferrite-stat runs it: its standard output. */
    static List<String> statLines(final Path logDir, final String... args) throws IOException, InterruptedException
    {
        final List<String> command = statCommand(logDir, args);
        final Path out = Files.createTempFile(logDir.getParent(), "stat", ".txt");
        final Process process = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectErrorStream(true).start();
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "ferrite-stat did not end");
        final List<String> lines = Files.readAllLines(out, StandardCharsets.UTF_8);
        assertEquals(0, process.exitValue(), lines::toString);
        assertTrue(Files.exists(logDir.resolve(CountersFile.NAME)));
        return lines;
    }
}
