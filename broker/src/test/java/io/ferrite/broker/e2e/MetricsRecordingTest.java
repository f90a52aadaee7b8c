package io.ferrite.broker.e2e;

import io.ferrite.broker.config.BrokerConfig;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ferrite.metrics.recording}: what docs/operations.md says it turns off, and what it leaves on. The same traffic
 * with it on (the default) and off — {@value #RECORDS} acks=all produces of one record each, a consumer reading them
 * all and committing offset {@value #COMMITTED} for its group, a Metadata request for a topic that does not exist —
 * read through {@code ferrite-stat --once --all} (a child JVM) and the MBeans: on, the requests, records, bytes, the
 * error and the request times count it; off, they stay at 0, as do the network threads' duty cycles, while the
 * connections, the group's offsets and lag and the log's gauges still show it.
 */
class MetricsRecordingTest
{
    private static final int RECORDS = 100;
    private static final int COMMITTED = 40;
    private static final String TOPIC = "watched";
    private static final String GROUP = "readers";
    private static final MBeanServer JMX = ManagementFactory.getPlatformMBeanServer();

    @TempDir
    Path dir;

    @ParameterizedTest(name = "ferrite.metrics.recording={0}")
    @ValueSource(booleans = {true, false})
    void recordingOffLeavesThePerRequestFiguresAtZeroAndTheOthersCounting(final boolean recording) throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of(BrokerConfig.METRICS_RECORDING, Boolean.toString(recording),
            BrokerConfig.AUTO_CREATE_TOPICS, "false")))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1))).all().get(30, TimeUnit.SECONDS);
                final ExecutionException unknown = assertThrows(ExecutionException.class,
                    () -> admin.describeTopics(List.of("no-such-topic")).allTopicNames().get(30, TimeUnit.SECONDS));
                assertInstanceOf(UnknownTopicOrPartitionException.class, unknown.getCause()); // answered, counted or not
            }
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all")))
            {
                for (int i = 0; i < RECORDS; i++)
                {
                    producer.send(new ProducerRecord<>(TOPIC, ("record " + i).getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
                }
            }
            final TopicPartition partition = new TopicPartition(TOPIC, 0);
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG, GROUP)))
            {
                consumer.assign(List.of(partition));
                final int[] read = {0};
                await(() -> (read[0] += consumer.poll(Duration.ofMillis(100)).count()) >= RECORDS, Duration.ofSeconds(60),
                    () -> "read " + read[0] + " of " + RECORDS);
                consumer.commitSync(Map.of(partition, new OffsetAndMetadata(COMMITTED)));
            }
            final long logBytes = broker.broker.topics().topic(TOPIC).partitions[0].log.sizeInBytes();
            final long perRequest = recording ? 1 : 0; // what a per-request figure is multiplied by
            final String lag = "consumer lag topic=" + TOPIC + " partition=0 group=" + GROUP;
            final Map<?, ?>[] seen = {null};
            await(() ->
            {
                final Map<String, Long> rows = FerriteStatTest.onceRows(broker.dir, "--all");
                seen[0] = rows;
                return Long.valueOf(RECORDS - COMMITTED).equals(rows.get(lag));
            }, Duration.ofSeconds(30), () -> "the group's lag row at " + (RECORDS - COMMITTED) + ": " + seen[0]);
            final Map<String, Long> stat = FerriteStatTest.onceRows(broker.dir, "--all");
            // the per-request figures: counted with recording on, 0 with it off
            assertEquals(perRequest * RECORDS, stat.get("Produce requests"), stat::toString);
            assertEquals(perRequest * RECORDS, stat.get("records in"), stat::toString);
            assertEquals(perRequest * RECORDS, stat.get("records in topic=" + TOPIC), stat::toString);
            assertEquals(perRequest * logBytes, stat.get("bytes in"), stat::toString);
            assertEquals(perRequest * logBytes, stat.get("bytes in topic=" + TOPIC), stat::toString);
            assertEquals(perRequest * logBytes, stat.get("bytes out"), stat::toString);
            assertEquals(perRequest * logBytes, stat.get("bytes out topic=" + TOPIC), stat::toString);
            assertEquals(recording, stat.get("Fetch requests") >= 1, stat::toString);
            assertEquals(recording, stat.get("Metadata requests") >= 2, stat::toString);
            assertEquals(recording, stat.get("Metadata errors") >= 1, stat::toString);
            assertEquals(recording, stat.get("error UNKNOWN_TOPIC_OR_PARTITION (3)") >= 1, stat::toString);
            assertEquals(recording, stat.get("network duty cycles") > 0, stat::toString);
            assertEquals(perRequest * RECORDS, count("kafka.network:type=RequestMetrics,name=RequestsPerSec,request=Produce"));
            assertEquals(perRequest * RECORDS, count("kafka.network:type=RequestMetrics,name=TotalTimeMs,request=Produce"));
            assertEquals(recording, count("kafka.network:type=RequestMetrics,name=TotalTimeMs,request=FetchConsumer") >= 1);
            assertEquals(perRequest * RECORDS, count("kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=" + TOPIC));
            // what still counts with recording off: connections, the group coordinator's figures, the log's gauges
            assertTrue(stat.get("connections accepted") >= 3, stat::toString);
            assertTrue(stat.get("group offsets committed") >= 1, stat::toString);
            assertEquals(RECORDS - COMMITTED, stat.get(lag), stat::toString);
            final ObjectName logEnd = new ObjectName("kafka.log:type=Log,name=LogEndOffset,topic=" + TOPIC + ",partition=0");
            await(() -> JMX.isRegistered(logEnd), Duration.ofSeconds(30), "the partition's LogEndOffset MBean registered");
            assertEquals((long)RECORDS, ((Number)JMX.getAttribute(logEnd, "Value")).longValue());
        }
    }

    /** The {@code Count} of a meter or histogram MBean (awaited registered: a topic's come within a second of it). */
    private static long count(final String name) throws Exception
    {
        final ObjectName objectName = new ObjectName(name);
        await(() -> JMX.isRegistered(objectName), Duration.ofSeconds(30), () -> name + " registered");
        return ((Number)JMX.getAttribute(objectName, "Count")).longValue();
    }
}
