package io.ferrite.broker.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferrite.broker.config.BrokerConfig;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeReplicaLogDirsResult.ReplicaLogDirInfo;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.message.DescribeLogDirsRequestData;
import org.apache.kafka.common.message.DescribeLogDirsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * DescribeLogDirs against a broker with two log directories, through kafka-clients' Admin, Kafka 4.4's
 * kafka-log-dirs.sh ({@code LogDirsCommand}, in process) and raw requests: every partition is in the
 * directory its files are in, its size the bytes of the batches in its segment files (several rolled
 * segments too), growing as records are produced; {@code __consumer_offsets} is listed like any topic;
 * named partitions that do not exist are left out, and so is a topic none of whose asked partitions is
 * in a directory (each answer as a Kafka 4.4 node gives it).
 */
class LogDirsTest
{
    private static final int NODE = 1;

    @TempDir
    Path dir;

    @Test
    void partitionsOfBothDirectoriesWithTheBytesOfTheirSegments() throws Exception
    {
        final Path d1 = dir.resolve("d1");
        final Path d2 = dir.resolve("d2");
        try (RunningBroker broker = new RunningBroker(dir, Map.of(BrokerConfig.LOG_DIRS, d1 + "," + d2));
            Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic("sizes", 4, (short)1),
                new NewTopic("rolled", 1, (short)1).configs(Map.of("segment.bytes", "1048576"))))
                .all().get(20, TimeUnit.SECONDS);
            Map<String, LogDirDescription> dirs = describe(admin);
            assertEquals(Set.of(d1.toAbsolutePath().toString(), d2.toAbsolutePath().toString()), dirs.keySet());
            for (int p = 0; p < 4; p++)
            {
                assertEquals(0, sizeOf(dirs, new TopicPartition("sizes", p)));
            }
            for (final LogDirDescription d : dirs.values())
            {
                assertNull(d.error());
                assertEquals(Files.getFileStore(d1).getTotalSpace(), d.totalBytes().getAsLong());
                assertTrue(d.usableBytes().getAsLong() > 0);
            }

            produce(broker, "sizes", 4, 50, 100);
            produce(broker, "rolled", 1, 300, 8 * 1024);
            dirs = describe(admin);
            final Map<TopicPartition, Long> first = checkedSizes(dirs, "sizes", 4);
            final long rolled = checkedSizes(dirs, "rolled", 1).get(new TopicPartition("rolled", 0));
            assertTrue(rolled > 2 * 1048576, "rolled: " + rolled);
            try (Stream<Path> files = Files.list(dirOf(dirs, new TopicPartition("rolled", 0)).resolve("rolled-0")))
            {
                assertTrue(files.filter(f -> f.toString().endsWith(".log")).count() > 2, "rolled-0 has several segments");
            }

            produce(broker, "sizes", 4, 20, 100);
            final Map<TopicPartition, Long> then = checkedSizes(describe(admin), "sizes", 4);
            for (final Map.Entry<TopicPartition, Long> e : first.entrySet())
            {
                assertTrue(then.get(e.getKey()) > e.getValue(), e.getKey() + ": " + e.getValue() + " then " + then.get(e.getKey()));
            }

            // the internal topic a commit creates and writes, listed as Kafka lists it
            final TopicPartition sizes0 = new TopicPartition("sizes", 0);
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG, "g")))
            {
                consumer.commitSync(Map.of(sizes0, new OffsetAndMetadata(7)));
            }
            final int offsetsPartitions = admin.describeTopics(List.of("__consumer_offsets")).allTopicNames()
                .get(20, TimeUnit.SECONDS).get("__consumer_offsets").partitions().size();
            final Map<TopicPartition, Long> offsets = checkedSizes(describe(admin), "__consumer_offsets", offsetsPartitions);
            assertTrue(offsets.values().stream().anyMatch(size -> size > 0), "the commit's bytes: " + offsets);

            // named replicas (a request with topics): an unknown partition and topic are left out
            final Map<TopicPartitionReplica, ReplicaLogDirInfo> replicas = admin.describeReplicaLogDirs(List.of(
                new TopicPartitionReplica("sizes", 1, NODE), new TopicPartitionReplica("sizes", 9, NODE),
                new TopicPartitionReplica("nosuch", 0, NODE))).all().get(20, TimeUnit.SECONDS);
            final TopicPartition sizes1 = new TopicPartition("sizes", 1);
            assertEquals(dirOf(dirs, sizes1).toString(), replicas.get(new TopicPartitionReplica("sizes", 1, NODE)).getCurrentReplicaLogDir());
            assertEquals(0, replicas.get(new TopicPartitionReplica("sizes", 1, NODE)).getCurrentReplicaOffsetLag());
            assertNull(replicas.get(new TopicPartitionReplica("sizes", 1, NODE)).getFutureReplicaLogDir());
            assertNull(replicas.get(new TopicPartitionReplica("sizes", 9, NODE)).getCurrentReplicaLogDir());
            assertNull(replicas.get(new TopicPartitionReplica("nosuch", 0, NODE)).getCurrentReplicaLogDir());

            final JsonNode printed = logDirsTool(broker, "--describe", "--topic-list", "sizes,rolled");
            final JsonNode logDirs = printed.get("brokers").get(0).get("logDirs");
            assertEquals(NODE, printed.get("brokers").get(0).get("broker").asInt());
            assertEquals(2, logDirs.size());
            int listed = 0;
            for (final JsonNode d : logDirs)
            {
                assertTrue(d.get("error").isNull(), d.toString());
                for (final JsonNode p : d.get("partitions"))
                {
                    final String name = p.get("partition").asText();
                    final int dash = name.lastIndexOf('-');
                    final TopicPartition tp = new TopicPartition(name.substring(0, dash), Integer.parseInt(name.substring(dash + 1)));
                    assertEquals(dirOf(dirs, tp).toString(), d.get("logDir").asText(), name);
                    assertEquals(tp.topic().equals("rolled") ? rolled : then.get(tp), p.get("size").asLong(), name);
                    assertEquals(0, p.get("offsetLag").asLong());
                    assertFalse(p.get("isFuture").asBoolean());
                    listed++;
                }
            }
            assertEquals(5, listed, printed.toString());
        }
    }

    /** Raw requests, each answer as Kafka 4.4 gives it: topics left out, v1's shape and v4+'s file store. */
    @Test
    void rawAnswersAsKafka() throws Exception
    {
        final Path d1 = dir.resolve("d1");
        final Path d2 = dir.resolve("d2");
        try (RunningBroker broker = new RunningBroker(dir, Map.of(BrokerConfig.LOG_DIRS, d1 + "," + d2));
            RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("a", 4, (short)1))).all().get(20, TimeUnit.SECONDS);
            }
            for (short v = 1; v <= 5; v++)
            {
                final DescribeLogDirsResponseData all = describe(raw, v, null);
                assertEquals(0, all.errorCode());
                assertEquals(List.of(d1.toAbsolutePath().toString(), d2.toAbsolutePath().toString()),
                    all.results().stream().map(DescribeLogDirsResponseData.DescribeLogDirsResult::logDir).toList());
                int partitions = 0;
                for (final DescribeLogDirsResponseData.DescribeLogDirsResult r : all.results())
                {
                    assertEquals(0, r.errorCode());
                    assertEquals(v >= 4 ? Files.getFileStore(d1).getTotalSpace() : -1, r.totalBytes(), "v" + v);
                    partitions += r.topics().stream().mapToInt(t -> t.partitions().size()).sum();
                }
                assertEquals(4, partitions, "v" + v);

                // an empty list, an unknown topic, a topic with no partitions named: no topics in either directory
                for (final DescribeLogDirsRequestData.DescribableLogDirTopicCollection asked : List.of(topics(),
                    topics("nosuch", 0), topics("a")))
                {
                    for (final DescribeLogDirsResponseData.DescribeLogDirsResult r : describe(raw, v, asked).results())
                    {
                        assertEquals(List.of(), r.topics(), "v" + v + " " + asked);
                    }
                }
                // one partition: only its directory lists its topic, with that partition alone
                final DescribeLogDirsResponseData one = describe(raw, v, topics("a", 2, 7));
                assertEquals(1, one.results().stream().mapToInt(r -> r.topics().size()).sum(), one.toString());
                for (final DescribeLogDirsResponseData.DescribeLogDirsResult r : one.results())
                {
                    for (final DescribeLogDirsResponseData.DescribeLogDirsTopic t : r.topics())
                    {
                        assertEquals("a", t.name());
                        assertEquals(List.of(2), t.partitions().stream().map(DescribeLogDirsResponseData.DescribeLogDirsPartition::partitionIndex).toList());
                        assertTrue(Files.isDirectory(Path.of(r.logDir()).resolve("a-2")));
                    }
                }
            }
        }
    }

    private static DescribeLogDirsRequestData.DescribableLogDirTopicCollection topics(final Object... topicThenPartitions)
    {
        final DescribeLogDirsRequestData.DescribableLogDirTopicCollection topics = new DescribeLogDirsRequestData.DescribableLogDirTopicCollection();
        if (topicThenPartitions.length > 0)
        {
            final DescribeLogDirsRequestData.DescribableLogDirTopic t = new DescribeLogDirsRequestData.DescribableLogDirTopic()
                .setTopic((String)topicThenPartitions[0]);
            for (int i = 1; i < topicThenPartitions.length; i++)
            {
                t.partitions().add((Integer)topicThenPartitions[i]);
            }
            topics.add(t);
        }
        return topics;
    }

    private static DescribeLogDirsResponseData describe(final RawClient raw, final short v,
        final DescribeLogDirsRequestData.DescribableLogDirTopicCollection topics) throws IOException
    {
        final ByteBuffer body = raw.exchange(ApiKeys.DESCRIBE_LOG_DIRS, v, new DescribeLogDirsRequestData().setTopics(topics));
        final DescribeLogDirsResponseData response = new DescribeLogDirsResponseData(new ByteBufferAccessor(body), v);
        assertEquals(0, body.remaining(), "v" + v + " trailing bytes");
        return response;
    }

    private static Map<String, LogDirDescription> describe(final Admin admin) throws Exception
    {
        return admin.describeLogDirs(List.of(NODE)).allDescriptions().get(20, TimeUnit.SECONDS).get(NODE);
    }

    private static void produce(final RunningBroker broker, final String topic, final int partitions, final int records,
        final int valueBytes) throws Exception
    {
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
        {
            for (int p = 0; p < partitions; p++)
            {
                for (int i = 0; i < records; i++)
                {
                    producer.send(new ProducerRecord<>(topic, p, ("k" + i).getBytes(StandardCharsets.UTF_8), new byte[valueBytes]));
                }
            }
            producer.flush();
            // flush() waits for every answer; one more send's get() makes a failed one throw here
            producer.send(new ProducerRecord<>(topic, 0, null, new byte[valueBytes])).get(20, TimeUnit.SECONDS);
        }
    }

    /**
     * Each of the topic's {@code partitions} listed exactly once, in the directory holding its files,
     * with the bytes of the batches in its segment files; returns the sizes.
     */
    private static Map<TopicPartition, Long> checkedSizes(final Map<String, LogDirDescription> dirs, final String topic,
        final int partitions) throws IOException
    {
        final Map<TopicPartition, Long> sizes = new HashMap<>();
        for (int p = 0; p < partitions; p++)
        {
            final TopicPartition tp = new TopicPartition(topic, p);
            final long size = sizeOf(dirs, tp);
            assertEquals(batchBytes(dirOf(dirs, tp).resolve(tp.toString())), size, tp.toString());
            sizes.put(tp, size);
        }
        return sizes;
    }

    /** The partition's size, checked it is listed in one directory only, that directory holding it. */
    private static long sizeOf(final Map<String, LogDirDescription> dirs, final TopicPartition tp)
    {
        return dirs.get(dirOf(dirs, tp).toString()).replicaInfos().get(tp).size();
    }

    private static Path dirOf(final Map<String, LogDirDescription> dirs, final TopicPartition tp)
    {
        Path found = null;
        for (final Map.Entry<String, LogDirDescription> e : dirs.entrySet())
        {
            final ReplicaInfo info = e.getValue().replicaInfos().get(tp);
            if (info != null)
            {
                assertNull(found, tp + " listed in two directories");
                assertEquals(0, info.offsetLag());
                assertFalse(info.isFuture());
                found = Path.of(e.getKey());
            }
        }
        assertTrue(found != null && Files.isDirectory(found.resolve(tp.toString())), tp + " listed in " + found);
        return found;
    }

    /** The bytes of the batches in a partition's segment files, walked by their length fields (the files may be preallocated). */
    private static long batchBytes(final Path partitionDir) throws IOException
    {
        long total = 0;
        final ByteBuffer header = ByteBuffer.allocate(12);
        try (Stream<Path> files = Files.list(partitionDir))
        {
            for (final Path log : files.filter(f -> f.toString().endsWith(".log")).toList())
            {
                try (FileChannel channel = FileChannel.open(log))
                {
                    long position = 0;
                    while (position + 12 <= channel.size())
                    {
                        header.clear();
                        channel.read(header, position);
                        final int length = header.getInt(8);
                        if (length <= 0)
                        {
                            break; // the preallocated zeros after the last batch
                        }
                        position += 12 + length;
                    }
                    total += position;
                }
            }
        }
        return total;
    }

    /** kafka-log-dirs.sh (Kafka 4.4's LogDirsCommand, in process) against the broker: its JSON, checked it exited 0. */
    private static JsonNode logDirsTool(final RunningBroker broker, final String... args) throws Exception
    {
        final String[] all = Stream.concat(Stream.of("--bootstrap-server", broker.bootstrap()), Stream.of(args)).toArray(String[]::new);
        final Method main = Class.forName("org.apache.kafka.tools.LogDirsCommand").getDeclaredMethod("mainNoExit", String[].class);
        main.setAccessible(true);
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        final PrintStream out = System.out;
        final int status;
        try (PrintStream capture = new PrintStream(printed, true, StandardCharsets.UTF_8))
        {
            System.setOut(capture);
            status = (int)main.invoke(null, (Object)all);
        }
        finally
        {
            System.setOut(out);
        }
        final String text = printed.toString(StandardCharsets.UTF_8);
        assertEquals(0, status, text);
        final String json = text.lines().filter(l -> l.startsWith("{")).findFirst().orElseThrow(() -> new AssertionError(text));
        return new ObjectMapper().readTree(json);
    }
}
