package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 11 as a client meets it: an older segment cut mid-batch while the broker was stopped. After
 * the restart a real consumer reads from the beginning to the end without an error: it loses the
 * cut batches and gets every record of every later segment.
 */
class DamagedSegmentFetchTest
{
    private static final int RECORDS = 400;
    private static final int VALUE = 10 * 1024;

    @TempDir
    Path dir;

    @Test
    void aConsumerReadsPastAnOlderSegmentCutWhileTheBrokerWasStopped() throws Exception
    {
        final String topic = "cut";
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short)1).configs(Map.of("segment.bytes", "1048576"))))
                    .all().get(20, TimeUnit.SECONDS);
            }
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 0)))
            {
                for (int i = 0; i < RECORDS; i++)
                {
                    producer.send(new ProducerRecord<>(topic, ("k" + i).getBytes(), new byte[VALUE])).get(20, TimeUnit.SECONDS);
                }
            }
            broker.broker.close(); // a clean stop

            final List<Path> logs;
            try (Stream<Path> files = Files.list(dir.resolve(topic + "-0")))
            {
                logs = files.filter(p -> p.toString().endsWith(".log")).sorted().toList();
            }
            assertTrue(logs.size() >= 4, "segments: " + logs.size());
            // cut the second segment 30 bytes into the first batch past its middle
            final Path victim = logs.get(1);
            final long nextBase = Long.parseLong(logs.get(2).getFileName().toString().substring(0, 20));
            try (RandomAccessFile raf = new RandomAccessFile(victim.toFile(), "rw"))
            {
                final ByteBuffer header = ByteBuffer.allocate(12);
                long p = 0;
                while (p < raf.length() / 2)
                {
                    header.clear();
                    raf.getChannel().read(header, p);
                    p += 12 + header.getInt(8);
                }
                raf.setLength(p + 30);
            }
            broker.start();

            final TopicPartition tp = new TopicPartition(topic, 0);
            final TreeSet<Long> offsets = new TreeSet<>();
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
            {
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                await(() ->
                {
                    for (final ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200)))
                    {
                        assertEquals(VALUE, r.value().length);
                        offsets.add(r.offset());
                    }
                    return consumer.position(tp) >= RECORDS;
                }, Duration.ofSeconds(60), () -> "the consumer at the end (" + RECORDS + ")");
                assertEquals(RECORDS, consumer.position(tp), "the consumer reached the end");
            }
            for (long o = nextBase; o < RECORDS; o++)
            {
                assertTrue(offsets.contains(o), "record " + o + " of a segment after the cut one");
            }
            assertTrue(offsets.size() < RECORDS, "the cut batches are gone");
        }
    }
}
