package io.ferrite.client;

import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.internal.AbstractRecords;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Each bad input the producer can meet, against a broker over a socket (a JUnit test interface: the interop classes
 * run it against Ferrite and Apache Kafka 4.4): a typed outcome — {@link Producer#send}'s code for what is refused
 * before it is taken, the record's completion for what a broker refuses — and the producer's other records written,
 * each once, in order, where kafka-clients' consumer reads them.
 */
interface ProducerErrorsContract
{
    String bootstrap();

    /** Creates a topic of one replica with topic configs (Kafka's names) and returns once the broker serves it. */
    void createTopic(String name, int partitions, Map<String, String> configs) throws Exception;

    /** Records {@code tags} sent and not completed read -99; a completion writes its error code. */
    final class Outcomes
    {
        final short[] errors;
        final long[] offsets;

        Outcomes(final int count)
        {
            errors = new short[count];
            offsets = new long[count];
            Arrays.fill(errors, (short)-99);
        }

        CompletionHandler handler()
        {
            return (tag, topic, partition, offset, error) ->
            {
                errors[(int)tag] = error;
                offsets[(int)tag] = offset;
            };
        }
    }

    private static byte[] value(final int tag)
    {
        return ("record-" + tag).getBytes(StandardCharsets.UTF_8);
    }

    /** Sends the small record {@code tag} to {@code topic}'s partition 0 with the given timestamp (-1: now). */
    private static void sendSmall(final Producer producer, final String topic, final int tag, final long timestamp)
    {
        final UnsafeBuffer value = new UnsafeBuffer(value(tag));
        assertEquals(0, producer.send(topic, 0, null, 0, -1, value, 0, value.capacity(), null, timestamp, tag), "record " + tag);
    }

    /** Partition 0 of {@code topic} holds exactly the small records {@code tags}, in order, at the offsets their completions named. */
    private void assertLogHolds(final String topic, final Outcomes outcomes, final int... tags)
    {
        final List<ConsumerRecord<byte[], byte[]>> read = FerriteFixture.readToEnd(bootstrap(), topic, 0);
        assertEquals(tags.length, read.size(), "records in " + topic);
        for (int i = 0; i < tags.length; i++)
        {
            assertEquals(0, outcomes.errors[tags[i]], "record " + tags[i] + "'s completion");
            assertArrayEquals(value(tags[i]), read.get(i).value(), "record at offset " + i);
            assertEquals(read.get(i).offset(), outcomes.offsets[tags[i]], "record " + tags[i] + "'s completion offset");
        }
    }

    /**
     * A topic the broker does not have: {@code awaitPartitions} and {@code send} say UNKNOWN_TOPIC once the metadata
     * answered UNKNOWN_TOPIC_OR_PARTITION (kafka-clients waits {@code max.block.ms} and then fails the send with a
     * TimeoutException), nothing is created although Kafka's {@code auto.create.topics.enable} is on (the client asks
     * without auto-creation), and the records to a known topic before and after are written.
     */
    @Test
    default void anUnknownTopicIsRefusedAndNotCreatedAndTheOtherRecordsAreWritten() throws Exception
    {
        final String topic = "errors-known";
        final String unknown = "errors-no-such-topic";
        createTopic(topic, 1, Map.of());
        final Outcomes outcomes = new Outcomes(2);
        try (Producer producer = new Producer(new ProducerConfig().bootstrapServers(bootstrap()), outcomes.handler()))
        {
            assertEquals(1, producer.awaitPartitions(topic, 30_000));
            sendSmall(producer, topic, 0, -1);
            assertEquals(Producer.UNKNOWN_TOPIC, producer.awaitPartitions(unknown, 30_000));
            final UnsafeBuffer value = new UnsafeBuffer(new byte[10]);
            assertEquals(Producer.UNKNOWN_TOPIC, producer.send(unknown, 0, null, 0, -1, value, 0, 10, null, -1, 99));
            assertEquals(Producer.UNKNOWN_TOPIC, producer.send(unknown, -1, null, 0, -1, value, 0, 10, null, -1, 99));
            sendSmall(producer, topic, 1, -1);
            FerriteFixture.drain(producer);
        }
        assertLogHolds(topic, outcomes, 0, 1);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap())))
        {
            assertFalse(admin.listTopics().names().get(30, TimeUnit.SECONDS).contains(unknown), "the unknown topic made");
        }
    }

    /**
     * A topic name that is not legal ({@code "bad name!"}): the broker's metadata answers INVALID_TOPIC_EXCEPTION, and
     * {@code awaitPartitions} and {@code send} say INVALID_TOPIC (not UNKNOWN_TOPIC); the records to a known topic
     * before and after are written.
     */
    @Test
    default void anInvalidTopicNameIsRefusedAsInvalidAndTheOtherRecordsAreWritten() throws Exception
    {
        final String topic = "errors-valid-name";
        final String invalid = "bad name!";
        createTopic(topic, 1, Map.of());
        final Outcomes outcomes = new Outcomes(2);
        try (Producer producer = new Producer(new ProducerConfig().bootstrapServers(bootstrap()), outcomes.handler()))
        {
            assertEquals(1, producer.awaitPartitions(topic, 30_000));
            sendSmall(producer, topic, 0, -1);
            assertEquals(Producer.INVALID_TOPIC, producer.awaitPartitions(invalid, 30_000));
            final UnsafeBuffer value = new UnsafeBuffer(new byte[10]);
            assertEquals(Producer.INVALID_TOPIC, producer.send(invalid, 0, null, 0, -1, value, 0, 10, null, -1, 99));
            sendSmall(producer, topic, 1, -1);
            FerriteFixture.drain(producer);
        }
        assertLogHolds(topic, outcomes, 0, 1);
    }

    /**
     * Bad lengths and ranges are refused before the record is taken, as kafka-clients refuses them before it touches
     * its accumulator: a null header key when the header is made ({@code NullPointerException}, as kafka-clients'
     * {@code RecordHeader}), then at {@code send} ({@code IllegalArgumentException}) a header whose buffer no longer
     * holds its range, a value range outside its buffer and a length below -1. Nothing is left half-written in the
     * partition's batch: the records before and after are written, and the refused ones never complete.
     */
    @Test
    default void badLengthsAreRefusedBeforeTheRecordIsTakenAndTheRecordsBeforeAndAfterAreWritten() throws Exception
    {
        final String topic = "errors-bad-lengths";
        createTopic(topic, 1, Map.of());
        final Outcomes outcomes = new Outcomes(5);
        try (Producer producer = new Producer(new ProducerConfig().bootstrapServers(bootstrap()).lingerMs(50),
            outcomes.handler()))
        {
            assertEquals(1, producer.awaitPartitions(topic, 30_000));
            sendSmall(producer, topic, 0, -1);
            final UnsafeBuffer value = new UnsafeBuffer(new byte[10]);
            final NullPointerException nullKey = assertThrows(NullPointerException.class,
                () -> new OutgoingHeaders().add(null, 0, -1, value, 0, 3));
            assertEquals("Null header keys are not permitted", nullKey.getMessage());
            final UnsafeBuffer headerKey = new UnsafeBuffer(new byte[10]);
            final OutgoingHeaders headers = new OutgoingHeaders().add(headerKey, 0, 10, value, 0, 3);
            headerKey.wrap(new byte[2]);
            assertThrows(IllegalArgumentException.class,
                () -> producer.send(topic, 0, null, 0, -1, value, 0, 10, headers, -1, 1));
            assertThrows(IllegalArgumentException.class,
                () -> producer.send(topic, 0, null, 0, -1, value, 5, 10, null, -1, 2));
            assertThrows(IllegalArgumentException.class,
                () -> producer.send(topic, 0, value, 0, -2, value, 0, 10, null, -1, 3));
            sendSmall(producer, topic, 4, -1);
            FerriteFixture.drain(producer);
        }
        for (int refused = 1; refused <= 3; refused++)
        {
            assertEquals(-99, outcomes.errors[refused], "refused record " + refused + " never completes");
        }
        assertLogHolds(topic, outcomes, 0, 4);
    }

    /**
     * A record over {@code max.request.size} by kafka-clients 4.4's count ({@code estimateSizeInBytesUpperBound}) is
     * refused by {@code send} with RECORD_TOO_LARGE and never completes; one exactly at the limit is taken and written;
     * the client's count is kafka-clients' for null and present keys, values and header values. A partition the
     * topic does not have is INVALID_PARTITION.
     */
    @Test
    default void aRecordOverMaxRequestSizeAsKafkaClientsCountsItIsRefusedAndOneAtItIsWritten() throws Exception
    {
        final byte[] key = new byte[10];
        final byte[] atLimit = new byte[1_000];
        final Header[] oneHeader = {new RecordHeader("h", new byte[3])};
        // the count itself, shape by shape: each length on both sides of a varint boundary (63/64, 8 191/8 192),
        // null and empty fields, no headers, one, several, 64 and more (a two-byte count), long header keys
        final int[][] headerShapes = {{-1}, {0}, {1, 1, -1}, {1, 1, 0}, {1, 1, 100}, {3, 5, 10}, {63, 1, 1}, {64, 1, 1},
            {70, 2, -1}, {1, 63, 5}, {1, 64, 5}, {2, 200, 8_192}, {1, 8_191, 8_191}};
        for (final int keyLength : new int[] {-1, 0, 10, 63, 64, 200, 8_191, 8_192})
        {
            for (final int valueLength : new int[] {-1, 0, 63, 64, 1_000, 8_191, 8_192, 20_000})
            {
                for (final int[] shape : headerShapes)
                {
                    final OutgoingHeaders headers = shape[0] < 0 ? null : new OutgoingHeaders();
                    final Header[] kafkaHeaders = new Header[Math.max(shape[0], 0)];
                    for (int h = 0; h < kafkaHeaders.length; h++)
                    {
                        final int keyBytes = shape[1];
                        final int valueBytes = shape[2];
                        headers.add(new UnsafeBuffer(new byte[keyBytes]), 0, keyBytes,
                            new UnsafeBuffer(new byte[Math.max(valueBytes, 0)]), 0, valueBytes);
                        kafkaHeaders[h] = new RecordHeader("k".repeat(keyBytes), valueBytes < 0 ? null : new byte[valueBytes]);
                    }
                    assertEquals(AbstractRecords.estimateSizeInBytesUpperBound(RecordBatch.CURRENT_MAGIC_VALUE,
                            CompressionType.NONE, keyLength < 0 ? null : new byte[keyLength],
                            valueLength < 0 ? null : new byte[valueLength], kafkaHeaders),
                        RecordChecks.sizeUpperBound(keyLength, valueLength, headers),
                        "key " + keyLength + " value " + valueLength + " headers " + Arrays.toString(shape));
                }
            }
        }
        final int limit = AbstractRecords.estimateSizeInBytesUpperBound(RecordBatch.CURRENT_MAGIC_VALUE,
            CompressionType.NONE, key, atLimit, oneHeader);
        final String topic = "errors-too-large";
        createTopic(topic, 1, Map.of());
        final Outcomes outcomes = new Outcomes(3);
        final OutgoingHeaders headers = new OutgoingHeaders()
            .add(new UnsafeBuffer("h".getBytes(StandardCharsets.UTF_8)), 0, 1, new UnsafeBuffer(new byte[3]), 0, 3);
        try (Producer producer = new Producer(new ProducerConfig().bootstrapServers(bootstrap()).maxRequestSize(limit),
            outcomes.handler()))
        {
            assertEquals(1, producer.awaitPartitions(topic, 30_000));
            final UnsafeBuffer k = new UnsafeBuffer(key);
            final UnsafeBuffer v = new UnsafeBuffer(new byte[atLimit.length + 1]);
            assertEquals(Producer.RECORD_TOO_LARGE, producer.send(topic, 0, k, 0, 10, v, 0, atLimit.length + 1, headers, -1, 0));
            assertEquals(0, producer.send(topic, 0, k, 0, 10, v, 0, atLimit.length, headers, -1, 1));
            assertEquals(Producer.INVALID_PARTITION, producer.send(topic, 1, k, 0, 10, v, 0, 10, headers, -1, 2));
            FerriteFixture.drain(producer);
        }
        assertEquals(-99, outcomes.errors[0], "the refused record never completes");
        assertEquals(0, outcomes.errors[1], "the record at the limit");
        final List<ConsumerRecord<byte[], byte[]>> read = FerriteFixture.read(bootstrap(), topic, 0, 1);
        assertEquals(1, read.size());
        assertEquals(atLimit.length, read.get(0).value().length);
    }

    /**
     * A record over the topic's {@code max.message.bytes}, alone in its batch, completes with the broker's
     * MESSAGE_TOO_LARGE; the records before and after it are written, with idempotence (the epoch is bumped over the
     * gap) and without.
     */
    @Test
    default void aRecordOverTheTopicsMaxMessageBytesFailsWithMessageTooLargeAndTheOthersAreWritten() throws Exception
    {
        oneRefusedAmongOthers("errors-message-too-large-", Map.of("max.message.bytes", "2048"), (producer, topic) ->
        {
            final UnsafeBuffer big = new UnsafeBuffer(new byte[4_096]);
            assertEquals(0, producer.send(topic, 0, null, 0, -1, big, 0, big.capacity(), null, -1, 2));
        }, ClientErrors.MESSAGE_TOO_LARGE);
    }

    /**
     * A batch the broker refuses with an error that is not retriable (INVALID_TIMESTAMP: a record older than the
     * topic's {@code message.timestamp.before.max.ms}) completes with it, at once (the delivery timeout is 10 minutes),
     * and the records before and after it are written, with idempotence and without. TOPIC_AUTHORIZATION_FAILED, the
     * other usual one, needs ACLs, which neither broker here has.
     */
    @Test
    default void aNonRetriableBrokerErrorFailsItsRecordAndTheOthersAreWritten() throws Exception
    {
        oneRefusedAmongOthers("errors-invalid-timestamp-", Map.of("message.timestamp.before.max.ms", "3600000"),
            (producer, topic) -> sendSmall(producer, topic, 2, 1_000L), ClientErrors.INVALID_TIMESTAMP); // 1970
    }

    /**
     * Records 0 and 1, then record 2 sent by {@code sendRefused} in a batch of its own, then 3 and 4, with idempotence
     * and without (a topic each, {@code configs} on it): record 2 completes with {@code expected}, the others are
     * written once, in order.
     */
    private void oneRefusedAmongOthers(final String topicPrefix, final Map<String, String> configs,
        final BiConsumer<Producer, String> sendRefused, final short expected) throws Exception
    {
        for (final boolean idempotent : new boolean[] {true, false})
        {
            final String topic = topicPrefix + idempotent;
            createTopic(topic, 1, configs);
            final Outcomes outcomes = new Outcomes(5);
            final ProducerConfig config = new ProducerConfig().bootstrapServers(bootstrap()).enableIdempotence(idempotent)
                .acks(idempotent ? -1 : 1).lingerMs(0).deliveryTimeoutMs(600_000);
            try (Producer producer = new Producer(config, outcomes.handler()))
            {
                assertEquals(1, producer.awaitPartitions(topic, 30_000));
                sendSmall(producer, topic, 0, -1);
                sendSmall(producer, topic, 1, -1);
                FerriteFixture.drain(producer);
                sendRefused.accept(producer, topic);
                FerriteFixture.drain(producer);
                sendSmall(producer, topic, 3, -1);
                sendSmall(producer, topic, 4, -1);
                FerriteFixture.drain(producer);
                assertEquals(0, producer.fatalError());
            }
            assertEquals(expected, outcomes.errors[2], "the refused record (idempotent " + idempotent + ")");
            assertLogHolds(topic, outcomes, 0, 1, 3, 4);
        }
    }

    /**
     * {@code buffer.memory} for two batches: a third partition's first record is refused with BUFFER_FULL (nothing
     * taken, nothing completes), and taken once the duty cycle has sent the others; every record taken is written.
     */
    @Test
    default void aFullBufferRefusesASendUntilTheDutyCycleFreesABatch() throws Exception
    {
        final String topic = "errors-buffer-full";
        createTopic(topic, 3, Map.of());
        final Outcomes outcomes = new Outcomes(4);
        final int batchSize = 1_024;
        final ProducerConfig config = new ProducerConfig().bootstrapServers(bootstrap()).batchSize(batchSize)
            .bufferMemory(2L * (batchSize + ProducerBatch.BATCH_OVERHEAD)).lingerMs(60_000);
        try (Producer producer = new Producer(config, outcomes.handler()))
        {
            assertEquals(3, producer.awaitPartitions(topic, 30_000));
            final UnsafeBuffer v0 = new UnsafeBuffer(value(0));
            final UnsafeBuffer v1 = new UnsafeBuffer(value(1));
            final UnsafeBuffer v2 = new UnsafeBuffer(value(2));
            assertEquals(0, producer.send(topic, 0, null, 0, -1, v0, 0, v0.capacity(), null, -1, 0));
            assertEquals(1, producer.send(topic, 1, null, 0, -1, v1, 0, v1.capacity(), null, -1, 1));
            assertEquals(Producer.BUFFER_FULL, producer.send(topic, 2, null, 0, -1, v2, 0, v2.capacity(), null, -1, 3));
            assertEquals(2, producer.pending());
            FerriteFixture.drain(producer);
            assertEquals(2, producer.send(topic, 2, null, 0, -1, v2, 0, v2.capacity(), null, -1, 2));
            FerriteFixture.drain(producer);
        }
        assertEquals(-99, outcomes.errors[3], "the refused send never completes");
        for (int p = 0; p < 3; p++)
        {
            assertEquals(0, outcomes.errors[p], "record " + p);
            final List<ConsumerRecord<byte[], byte[]>> read = FerriteFixture.read(bootstrap(), topic, p, 1);
            assertEquals(1, read.size());
            assertArrayEquals(value(p), read.get(0).value());
        }
    }

    /**
     * {@code close}: the records acknowledged before are in the log; a record still held completes with CLIENT_CLOSED
     * (it was never sent: {@code flush} and drain first to deliver it), {@code pending} is 0, and later sends and
     * {@code awaitPartitions} say CLOSED.
     */
    @Test
    default void aClosedProducerFailsWhatItHeldAndRefusesSends() throws Exception
    {
        final String topic = "errors-closed";
        createTopic(topic, 1, Map.of());
        final Outcomes outcomes = new Outcomes(3);
        final Producer producer = new Producer(new ProducerConfig().bootstrapServers(bootstrap()).lingerMs(60_000),
            outcomes.handler());
        assertEquals(1, producer.awaitPartitions(topic, 30_000));
        sendSmall(producer, topic, 0, -1);
        FerriteFixture.drain(producer);
        sendSmall(producer, topic, 1, -1);
        producer.close();
        assertEquals(ClientErrors.CLIENT_CLOSED, outcomes.errors[1]);
        assertEquals(0, producer.pending());
        final UnsafeBuffer v = new UnsafeBuffer(value(2));
        assertEquals(Producer.CLOSED, producer.send(topic, 0, null, 0, -1, v, 0, v.capacity(), null, -1, 2));
        assertEquals(Producer.CLOSED, producer.awaitPartitions(topic, 1_000));
        assertEquals(-99, outcomes.errors[2]);
        producer.close(); // again: nothing
        assertLogHolds(topic, outcomes, 0);
    }
}
