package io.ferrite.perf.damage;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The known data set: record {@code i} of the topic has offset {@code i} and a 1000-byte value
 * whose every byte follows from {@code i} (its number in ASCII, then a pattern), so a reader can
 * tell for each offset whether what it got is exactly what was written.
 */
final class Records
{
    static final int VALUE_BYTES = 1000;
    /** Kafka 4's minimum segment.bytes; both brokers get it, so ~1000 records make a segment. */
    static final int SEGMENT_BYTES = 1 << 20;

    private Records()
    {
    }

    static byte[] value(final long i)
    {
        final byte[] v = new byte[VALUE_BYTES];
        final byte[] number = String.format("%012d:", i).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(number, 0, v, 0, number.length);
        for (int j = number.length; j < v.length; j++)
        {
            v[j] = (byte) ('a' + (i * 31 + j * 7) % 26);
        }
        return v;
    }

    static boolean intact(final long offset, final byte[] value)
    {
        return value != null && java.util.Arrays.equals(value, value(offset));
    }

    static Properties admin(final String bootstrap)
    {
        final Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "8000");
        p.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, "200");
        return p;
    }

    /** Creates the topic, retried while the broker comes up, until {@code deadlineNanos}. */
    static void createTopic(final String bootstrap, final String topic, final long deadlineNanos) throws Exception
    {
        try (Admin admin = Admin.create(admin(bootstrap)))
        {
            while (true)
            {
                try
                {
                    admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(Map.of(
                        "segment.bytes", Integer.toString(SEGMENT_BYTES))))).all().get(10, TimeUnit.SECONDS);
                    return;
                }
                catch (final ExecutionException ex)
                {
                    if (ex.getCause() instanceof TopicExistsException)
                    {
                        return;
                    }
                    if (System.nanoTime() > deadlineNanos)
                    {
                        throw ex;
                    }
                }
                catch (final java.util.concurrent.TimeoutException ex)
                {
                    if (System.nanoTime() > deadlineNanos)
                    {
                        throw ex;
                    }
                }
                TimeUnit.MILLISECONDS.sleep(200); // a broker still starting: the next attempt, not a wait for an outcome
            }
        }
    }

    /** Produces records 0..count-1 with acks=all and checks that record i got offset i. */
    static void produce(final String bootstrap, final String topic, final int count) throws Exception
    {
        final Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "16384"); // ~16 records a batch, ~64 batches a segment
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none"); // so that a flipped byte is a flipped value byte
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p))
        {
            final List<Future<RecordMetadata>> sent = new ArrayList<>(count);
            for (int i = 0; i < count; i++)
            {
                sent.add(producer.send(new ProducerRecord<>(topic, 0, null, value(i))));
            }
            producer.flush();
            for (int i = 0; i < count; i++)
            {
                final long offset = sent.get(i).get(60, TimeUnit.SECONDS).offset();
                if (offset != i)
                {
                    throw new IllegalStateException("record " + i + " was written at offset " + offset);
                }
            }
        }
    }

    /** Log start and end offsets (ListOffsets earliest and latest), or an exception. */
    static long[] offsets(final Admin admin, final TopicPartition tp) throws Exception
    {
        final ListOffsetsResult earliest = admin.listOffsets(Map.of(tp, OffsetSpec.earliest()));
        final long start = earliest.partitionResult(tp).get(8, TimeUnit.SECONDS).offset();
        final ListOffsetsResult latest = admin.listOffsets(Map.of(tp, OffsetSpec.latest()));
        final long end = latest.partitionResult(tp).get(8, TimeUnit.SECONDS).offset();
        return new long[] {start, end};
    }
}
