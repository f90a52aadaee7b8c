package io.ferrite.broker.e2e;

import io.ferrite.testing.LoopbackPorts;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.remote.JMXConnectorServer;
import javax.management.remote.JMXConnectorServerFactory;
import javax.management.remote.JMXServiceURL;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.rmi.server.UnicastRemoteObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static io.ferrite.testing.Await.awaitValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The broker's MBeans under Kafka 4.4's names, read as an operator reads Kafka's: by Kafka's own {@code JmxTool} in a
 * child JVM over a remote JMX (RMI) connection to the broker's JVM, after kafka-clients produced and consumed known
 * records and produced to a topic that does not exist; and registered at start, gone at close, there again at a second
 * start in the same JVM.
 */
class KafkaMBeansTest
{
    private static final int RECORDS = 120;
    private static final int PER_BATCH = 3;
    private static final String TOPIC = "jmx-topic";
    private static final MBeanServer SERVER = ManagementFactory.getPlatformMBeanServer();

    @TempDir
    Path dir;

    @Test
    void kafkasJmxToolReadsTheFiguresUnderKafkasNames() throws Exception
    {
        assertEquals(List.of(), brokerNames(), "a broker of an earlier test left unclosed in this JVM holds the names");
        long batchBytes = 0;
        try (RunningBroker broker = new RunningBroker(dir, Map.of("auto.create.topics.enable", "false"));
             RemoteJmx jmx = RemoteJmx.start())
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1))).all().get(30, TimeUnit.SECONDS);
            }
            // batches of three records each, all three with one timestamp: one Produce request a batch, and each batch as
            // large as kafka-clients' own builder makes those three records (timestamp deltas 0)
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.LINGER_MS_CONFIG, 60_000, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000)))
            {
                for (int i = 0; i < RECORDS; i += PER_BATCH)
                {
                    final long timestamp = System.currentTimeMillis();
                    final List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
                    final SimpleRecord[] batch = new SimpleRecord[PER_BATCH];
                    for (int r = 0; r < PER_BATCH; r++)
                    {
                        final byte[] key = ("key-" + (i + r)).getBytes(StandardCharsets.UTF_8);
                        final byte[] value = ("the value of record number " + (i + r)).getBytes(StandardCharsets.UTF_8);
                        sent.add(producer.send(new ProducerRecord<>(TOPIC, 0, timestamp, key, value)));
                        batch[r] = new SimpleRecord(timestamp, key, value);
                    }
                    producer.flush(); // the linger holds the three until here: one batch
                    for (final java.util.concurrent.Future<?> f : sent)
                    {
                        f.get(30, TimeUnit.SECONDS);
                    }
                    batchBytes += MemoryRecords.withRecords(Compression.NONE, batch).sizeInBytes();
                }
            }
            int consumed = 0;
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
            {
                consumer.assign(List.of(new TopicPartition(TOPIC, 0)));
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
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.MAX_BLOCK_MS_CONFIG, 5_000)))
            {
                assertThrows(ExecutionException.class,
                    () -> producer.send(new ProducerRecord<>("no-such-topic", new byte[10])).get(30, TimeUnit.SECONDS));
            }
            final String topicMetrics = "kafka.server:type=BrokerTopicMetrics,name=";
            final String produces = "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=Produce";
            final String unknown = "kafka.network:type=RequestMetrics,name=ErrorsPerSec,request=Metadata,error=UNKNOWN_TOPIC_OR_PARTITION";
            final String logEnd = "kafka.log:type=Log,name=LogEndOffset,topic=" + TOPIC + ",partition=0";
            final String logSize = "kafka.log:type=Log,name=Size,topic=" + TOPIC + ",partition=0";
            final List<String> names = List.of(topicMetrics + "MessagesInPerSec", topicMetrics + "MessagesInPerSec,topic=" + TOPIC,
                topicMetrics + "BytesInPerSec", topicMetrics + "BytesInPerSec,topic=" + TOPIC, topicMetrics + "BytesOutPerSec",
                topicMetrics + "BytesOutPerSec,topic=" + TOPIC, produces, unknown, logEnd, logSize,
                "kafka.log:type=Log,name=LogStartOffset,topic=" + TOPIC + ",partition=0",
                "kafka.server:type=ReplicaManager,name=PartitionCount", "kafka.server:type=ReplicaManager,name=LeaderCount",
                "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions", topicMetrics + "ReplicationBytesOutPerSec",
                "kafka.controller:type=KafkaController,name=ActiveControllerCount",
                "kafka.controller:type=KafkaController,name=OfflinePartitionsCount");
            // the last Metadata request of the failed send may still be in the broker's hands; topic MBeans follow each second
            final String output = awaitValue(() -> jmx.jmxTool(names), out -> readAll(out, names.size(), unknown),
                Duration.ofSeconds(60), () -> "JmxTool reads every name, an unknown topic's error counted");
            final Map<String, String> read = RemoteJmx.parse(output);
            assertEquals(String.valueOf(RECORDS), read.get(topicMetrics + "MessagesInPerSec:Count"), read::toString);
            assertEquals(String.valueOf(RECORDS), read.get(topicMetrics + "MessagesInPerSec,topic=" + TOPIC + ":Count"), read::toString);
            // Kafka's bytes in are the record batches' bytes as appended: here exactly those kafka-clients builds
            final long bytesIn = Long.parseLong(read.get(topicMetrics + "BytesInPerSec:Count"));
            assertTrue(Math.abs(bytesIn - batchBytes) <= batchBytes / 100, bytesIn + " bytes in, " + batchBytes + " produced");
            assertEquals(String.valueOf(bytesIn), read.get(topicMetrics + "BytesInPerSec,topic=" + TOPIC + ":Count"), read::toString);
            assertEquals(String.valueOf(bytesIn), read.get(logSize + ":Value"), "one partition: its log is what came in");
            // the consumer read every batch at least once: Kafka's bytes out are the batches' bytes sent, at least the
            // bytes in (kafka-clients' bytes-consumed-total is no check: it counts the records' keys and values, less)
            final long bytesOut = Long.parseLong(read.get(topicMetrics + "BytesOutPerSec:Count"));
            assertTrue(bytesOut >= bytesIn, bytesOut + " bytes out, " + bytesIn + " in " + read);
            assertEquals(String.valueOf(bytesOut), read.get(topicMetrics + "BytesOutPerSec,topic=" + TOPIC + ":Count"), read::toString);
            assertEquals("0", read.get(topicMetrics + "ReplicationBytesOutPerSec:Count"), "no follower: " + read);
            // a request a batch (more if the producer retried one): fewer requests than records, so not the records counted
            final long produceRequests = Long.parseLong(read.get(produces + ":Count"));
            assertTrue(produceRequests >= RECORDS / PER_BATCH && produceRequests < RECORDS, produceRequests + " Produce requests " + read);
            assertEquals(String.valueOf(RECORDS), read.get(logEnd + ":Value"), read::toString);
            assertEquals("0", read.get("kafka.log:type=Log,name=LogStartOffset,topic=" + TOPIC + ",partition=0:Value"), read::toString);
            assertEquals("0", read.get("kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions:Value"), read::toString);
            assertEquals("1", read.get("kafka.controller:type=KafkaController,name=ActiveControllerCount:Value"), read::toString);
            assertEquals("0", read.get("kafka.controller:type=KafkaController,name=OfflinePartitionsCount:Value"), read::toString);
            final int partitions = broker.broker.topics().topics().stream().mapToInt(t -> t.partitions.length).sum();
            assertEquals(String.valueOf(partitions), read.get("kafka.server:type=ReplicaManager,name=PartitionCount:Value"));
            assertEquals(String.valueOf(partitions), read.get("kafka.server:type=ReplicaManager,name=LeaderCount:Value"));
            // a meter's other attributes, as Kafka's: rates per second, the event type
            final ObjectName messagesIn = new ObjectName(topicMetrics + "MessagesInPerSec");
            assertEquals(TimeUnit.SECONDS, SERVER.getAttribute(messagesIn, "RateUnit"));
            assertEquals("messages", SERVER.getAttribute(messagesIn, "EventType"));
            assertTrue((Double)SERVER.getAttribute(messagesIn, "MeanRate") > 0);
            await(() -> (Double)SERVER.getAttribute(messagesIn, "OneMinuteRate") > 0, Duration.ofSeconds(30),
                "the first tick (5 s) sets the one-minute rate");
        }
    }

    @Test
    void theMBeansComeWithTheBrokerAndTheTopicsAndGoWithThem() throws Exception
    {
        final ObjectName messagesIn = new ObjectName("kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec");
        final ObjectName anyTopic = new ObjectName("kafka.server:type=BrokerTopicMetrics,topic=brief,*");
        final ObjectName anyLog = new ObjectName("kafka.log:type=Log,topic=brief,*");
        assertEquals(List.of(), brokerNames(), "a broker of an earlier test left unclosed in this JVM holds the names");
        for (int start = 0; start < 2; start++) // an embedded broker started twice in one JVM
        {
            try (RunningBroker broker = new RunningBroker(dir.resolve("start-" + start), Map.of()))
            {
                assertTrue(SERVER.isRegistered(messagesIn));
                assertEquals(0L, SERVER.getAttribute(messagesIn, "Count"), "each start counts from zero");
                try (Admin admin = broker.admin())
                {
                    admin.createTopics(List.of(new NewTopic("brief", 2, (short)1))).all().get(30, TimeUnit.SECONDS);
                    await(() -> SERVER.queryNames(anyLog, null).size() == 6 && SERVER.queryNames(anyTopic, null).size() == 3,
                        Duration.ofSeconds(30), () -> "3 meters and 2 partitions' 3 gauges: " + SERVER.queryNames(anyTopic, null)
                            + SERVER.queryNames(anyLog, null));
                    admin.deleteTopics(List.of("brief")).all().get(30, TimeUnit.SECONDS);
                    await(() -> SERVER.queryNames(anyLog, null).isEmpty() && SERVER.queryNames(anyTopic, null).isEmpty(),
                        Duration.ofSeconds(30), "the deleted topic's MBeans go");
                }
            }
            assertEquals(List.of(), brokerNames(), "closed: nothing left");
        }
    }

    private static boolean readAll(final String output, final int names, final String unknownTopicErrors)
    {
        final Map<String, String> read = RemoteJmx.parse(output);
        return read.keySet().stream().map(k -> k.substring(0, k.lastIndexOf(':'))).distinct().count() == names
            && Long.parseLong(read.getOrDefault(unknownTopicErrors + ":Count", "0")) >= 1;
    }

    /**
     * The names of a broker's MBeans registered in this JVM (kafka-clients' own are in other domains). Not empty before
     * a test starts its broker: another test's broker was left unclosed, and this test's would read that one's figures
     * (the names are taken; docs/operations.md, "JMX").
     */
    private static List<ObjectName> brokerNames() throws Exception
    {
        final List<ObjectName> names = new ArrayList<>();
        for (final String domain : List.of("kafka.server", "kafka.network", "kafka.log", "kafka.controller"))
        {
            names.addAll(SERVER.queryNames(new ObjectName(domain + ":*"), null));
        }
        return names;
    }

    /** This JVM's platform MBean server behind an RMI connector on a loopback port, as {@code -Dcom.sun.management.jmxremote.port} would. */
    private record RemoteJmx(Registry registry, JMXConnectorServer connector, String url) implements AutoCloseable
    {
        static RemoteJmx start() throws IOException
        {
            final int port = LoopbackPorts.take();
            System.setProperty("java.rmi.server.hostname", "127.0.0.1"); // the stubs name loopback, not the host's address
            final Registry registry = LocateRegistry.createRegistry(port);
            final String url = "service:jmx:rmi:///jndi/rmi://127.0.0.1:" + port + "/jmxrmi";
            final JMXConnectorServer connector = JMXConnectorServerFactory.newJMXConnectorServer(
                new JMXServiceURL("service:jmx:rmi://127.0.0.1:" + port + "/jndi/rmi://127.0.0.1:" + port + "/jmxrmi"), null, SERVER);
            connector.start();
            return new RemoteJmx(registry, connector, url);
        }

        /**
         * Kafka's JmxTool, once, in a child JVM: its output, a {@code name:attribute=value} line for each attribute of
         * each name. (With {@code --attributes} and no pattern among the names it prints nothing, against Kafka 4.4 too.)
         */
        String jmxTool(final List<String> names) throws IOException, InterruptedException
        {
            final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), "org.apache.kafka.tools.JmxTool",
                "--jmx-url", url, "--one-time", "true", "--report-format", "properties"));
            for (final String name : names)
            {
                command.add("--object-name");
                command.add(name);
            }
            return ChildProcess.run(null, null, 60, "a JDK", command.toArray(String[]::new));
        }

        static Map<String, String> parse(final String out)
        {
            final Map<String, String> values = new HashMap<>();
            for (final String line : out.split("\n"))
            {
                final int eq = line.lastIndexOf('=');
                if (line.startsWith("kafka.") && eq > 0)
                {
                    values.put(line.substring(0, eq), line.substring(eq + 1).trim());
                }
            }
            return values;
        }

        @Override
        public void close() throws IOException
        {
            connector.stop();
            UnicastRemoteObject.unexportObject(registry, true);
        }
    }
}
