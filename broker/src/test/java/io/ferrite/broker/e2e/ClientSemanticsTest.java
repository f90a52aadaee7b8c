package io.ferrite.broker.e2e;

import io.ferrite.testing.DroppingProxy;
import io.ferrite.log.PartitionLog;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What Kafka's clients rely on beyond a plain round trip: offsets, seeking, long poll, idempotence, limits, restarts. */
class ClientSemanticsTest
{
    @TempDir
    Path dir;

    private static String text(final byte[] b)
    {
        return new String(b, StandardCharsets.UTF_8);
    }

    private static byte[] bytes(final String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static List<ConsumerRecord<byte[], byte[]>> read(final KafkaConsumer<byte[], byte[]> consumer, final int count)
    {
        return Polling.pollCount(consumer, count);
    }

    @Test
    void listOffsetsAndSeekReplayFromTheMiddle() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic("ticks", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
            final long t0 = 1_700_000_000_000L;
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 0)))
            {
                for (int i = 0; i < 100; i++)
                {
                    producer.send(new ProducerRecord<>("ticks", 0, t0 + i * 10L, null, bytes("tick-" + i))).get();
                }
            }
            final TopicPartition tp = new TopicPartition("ticks", 0);
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
            {
                assertEquals(0L, consumer.beginningOffsets(List.of(tp)).get(tp));
                assertEquals(100L, consumer.endOffsets(List.of(tp)).get(tp));
                final Map<TopicPartition, OffsetAndTimestamp> at = consumer.offsetsForTimes(Map.of(tp, t0 + 425));
                assertEquals(43L, at.get(tp).offset(), "first record at or after the timestamp");
                assertEquals(t0 + 430, at.get(tp).timestamp());
                assertNull(consumer.offsetsForTimes(Map.of(tp, t0 + 100_000)).get(tp), "no record that late");

                consumer.assign(List.of(tp));
                consumer.seek(tp, 50);
                final List<ConsumerRecord<byte[], byte[]>> tail = read(consumer, 50);
                assertEquals(50, tail.size());
                for (int i = 0; i < 50; i++)
                {
                    assertEquals(50 + i, tail.get(i).offset());
                    assertEquals("tick-" + (50 + i), text(tail.get(i).value()));
                }
                consumer.seek(tp, at.get(tp).offset());
                assertEquals("tick-43", text(read(consumer, 1).get(0).value()), "replay from the offset found by time");
            }
        }
    }

    @Test
    void aWaitingPollGetsANewRecordAtOnceAndAnIdleFetchWaitsForMaxWait() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic("live", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
            final TopicPartition tp = new TopicPartition("live", 0);
            final long maxWait = 6_000; // the consumer's close waits for its last long poll: ended by a record below
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, (int)maxWait));
                KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 0)))
            {
                consumer.assign(List.of(tp));
                consumer.seekToEnd(List.of(tp));
                consumer.poll(Duration.ofMillis(300)); // position known, a fetch now waits on the broker
                producer.partitionsFor("live"); // the producer's metadata fetched before its send is timed
                final long[] sentAt = new long[1];
                final AtomicReference<Throwable> writerFailure = new AtomicReference<>();
                final io.ferrite.broker.topic.Partition partition = broker.broker.topics().topic("live").partition(0);
                final Thread writer = new Thread(() ->
                {
                    try
                    {
                        // the consumer's fetch is parked on the broker, not on its way: the append must wake it
                        await(partition::hasParkedFetches, Duration.ofSeconds(30), "the consumer's fetch parked");
                        sentAt[0] = System.nanoTime();
                        producer.send(new ProducerRecord<>("live", bytes("now"))).get();
                    }
                    catch (final Throwable ex)
                    {
                        writerFailure.set(ex);
                    }
                });
                writer.start();
                final List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
                await(() ->
                {
                    consumer.poll(Duration.ofSeconds(30)).forEach(got::add);
                    if (writerFailure.get() != null)
                    {
                        throw new AssertionError("the writer failed", writerFailure.get());
                    }
                    return !got.isEmpty();
                }, Duration.ofSeconds(30), "the record written during the long poll");
                final long arrivedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sentAt[0]);
                writer.join();
                assertEquals("now", text(got.get(0).value()));
                System.out.println("long poll: record arrived " + arrivedMs + " ms after it was sent (fetch.max.wait.ms " + maxWait + ")");
                // the wait was cut short by the append, not ended by fetch.max.wait.ms
                assertTrue(arrivedMs < maxWait / 2, "arrived after " + arrivedMs + " ms");
                // the consumer's next fetch is parked (or on its way): a record answers it, so that the close does not
                // wait out its fetch.max.wait.ms (6 s of the test's 7 before issue 17's build work)
                producer.send(new ProducerRecord<>("live", bytes("after"))).get(30, TimeUnit.SECONDS);
            }

            // an idle fetch: min_bytes 1, nothing arrives, the answer comes at max_wait_ms
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                final int wait = 400;
                final FetchRequestData fetch = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(wait).setMinBytes(1)
                    .setMaxBytes(1 << 20).setIsolationLevel((byte)0).setSessionId(0).setSessionEpoch(-1)
                    .setTopics(List.of(new FetchRequestData.FetchTopic().setTopic("live").setPartitions(List.of(
                        new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(2).setPartitionMaxBytes(1 << 20)))));
                final long start = System.nanoTime();
                final ByteBuffer body = raw.exchange(ApiKeys.FETCH, (short)12, fetch);
                final long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                final FetchResponseData response = new FetchResponseData(new ByteBufferAccessor(body), (short)12);
                assertEquals(Errors.NONE.code(), response.errorCode());
                assertEquals(0, response.sessionId(), "sessions declined");
                final FetchResponseData.PartitionData partition = response.responses().get(0).partitions().get(0);
                assertEquals(Errors.NONE.code(), partition.errorCode());
                assertEquals(2L, partition.highWatermark()); // "now" and "after": the fetch is at the log end
                assertEquals(0, ((org.apache.kafka.common.record.internal.BaseRecords)partition.records()).sizeInBytes());
                System.out.println("idle fetch answered after " + elapsed + " ms (max_wait_ms " + wait + ")");
                assertTrue(elapsed >= wait - 5, "answered after " + elapsed + " ms, before max_wait_ms");

                // a fetch for no partition, as a consumer's close sends to end its fetch session (and
                // waits for): Kafka answers it at once; waiting out an hour's max_wait_ms would end in
                // the raw client's read timeout (20 s)
                final FetchRequestData none = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(3_600_000).setMinBytes(1)
                    .setMaxBytes(1 << 20).setIsolationLevel((byte)0).setSessionId(0).setSessionEpoch(-1).setTopics(List.of());
                final FetchResponseData answered = new FetchResponseData(new ByteBufferAccessor(
                    raw.exchange(ApiKeys.FETCH, (short)12, none)), (short)12);
                assertEquals(Errors.NONE.code(), answered.errorCode());
                assertTrue(answered.responses().isEmpty(), answered.toString());
            }
        }
    }

    /**
     * In fsync durability also: every acknowledgement — including a retry's, answered with the
     * original offsets — comes only once the log is durable past the record (checked in the send
     * callback against the broker's own log: the durable offset only grows, so a record durable
     * when answered is still durable at the callback; one answered early is caught if the fsync
     * has not come by then).
     */
    @ParameterizedTest
    @ValueSource(strings = {"flush", "fsync"})
    void idempotentProducerThroughDroppedConnectionsWritesEachRecordOnceInOrder(final String durability) throws Exception
    {
        try (DroppingProxy proxy = new DroppingProxy(42, 0.05);
            RunningBroker broker = new RunningBroker(dir, Map.of("advertised.listeners", "PLAINTEXT://127.0.0.1:" + proxy.port())))
        {
            proxy.target(broker.broker.address().getPort());
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("exactly", 1, (short)1).configs(Map.of("ferrite.durability", durability))))
                    .all().get(20, TimeUnit.SECONDS);
            }
            final PartitionLog log = broker.broker.topics().topic("exactly").partition(0).log;
            final List<String> early = new CopyOnWriteArrayList<>();
            final int count = 3_000;
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + proxy.port(),
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5, ProducerConfig.BATCH_SIZE_CONFIG, 400,
                ProducerConfig.LINGER_MS_CONFIG, 1, ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 10,
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000)))
            {
                final List<Future<RecordMetadata>> sent = new ArrayList<>();
                for (int i = 0; i < count; i++)
                {
                    sent.add(producer.send(new ProducerRecord<>("exactly", bytes("r" + i)), (m, ex) ->
                    {
                        final long durable = log.durableOffset();
                        if (ex == null && durability.equals("fsync") && durable <= m.offset())
                        {
                            early.add(m.offset() + " acknowledged at durable offset " + durable);
                        }
                    }));
                }
                producer.flush();
                long last = -1;
                for (final Future<RecordMetadata> f : sent)
                {
                    final long offset = f.get(60, TimeUnit.SECONDS).offset();
                    assertEquals(last + 1, offset, "acknowledged offsets follow the send order");
                    last = offset;
                }
            }
            assertTrue(proxy.dropped.get() > 0, "the proxy cut connections after produce requests");
            assertEquals(List.of(), early, "acknowledged before an fsync covered them");
            System.out.println("idempotence: " + proxy.dropped.get() + " connections cut after a produce request");
            final TopicPartition tp = new TopicPartition("exactly", 0);
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
            {
                consumer.assign(List.of(tp));
                assertEquals((long)count, consumer.endOffsets(List.of(tp)).get(tp), "no duplicate in the log");
                consumer.seekToBeginning(List.of(tp));
                final List<ConsumerRecord<byte[], byte[]>> got = read(consumer, count);
                assertEquals(count, got.size());
                for (int i = 0; i < count; i++)
                {
                    assertEquals("r" + i, text(got.get(i).value()), "record " + i);
                }
            }
        }
    }

    @Test
    void anOversizedRecordIsRefusedAndMinInsyncReplicasIsCappedByTheReplicationFactor() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic("small", 1, (short)1).configs(Map.of("max.message.bytes", "2000")),
                new NewTopic("safe", 1, (short)1).configs(Map.of("min.insync.replicas", "2")))).all().get(20, TimeUnit.SECONDS);
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.RETRIES_CONFIG, 0, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false)))
            {
                final ExecutionException tooLarge = assertThrows(ExecutionException.class,
                    () -> producer.send(new ProducerRecord<>("small", new byte[5_000])).get(20, TimeUnit.SECONDS));
                assertInstanceOf(RecordTooLargeException.class, tooLarge.getCause());
                assertEquals(0L, producer.send(new ProducerRecord<>("small", new byte[500])).get(20, TimeUnit.SECONDS).offset(),
                    "the broker keeps serving");
                assertEquals(0L, producer.send(new ProducerRecord<>("safe", bytes("kept"))).get(20, TimeUnit.SECONDS).offset(),
                    "acks=all with min.insync.replicas=2 on one replica succeeds, as on Kafka 4.4");
            }
        }
    }

    @Test
    void everyAcknowledgedRecordIsReadBackAfterARestart() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("durable", 3, (short)1),
                    new NewTopic("synced", 2, (short)1).configs(Map.of("ferrite.durability", "fsync")))).all().get(20, TimeUnit.SECONDS);
            }
            final Map<TopicPartition, List<String>> acked = new java.util.HashMap<>();
            for (final String acks : List.of("1", "all"))
            {
                try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.ACKS_CONFIG, acks,
                    ProducerConfig.COMPRESSION_TYPE_CONFIG, "lz4")))
                {
                    // one at a time, half of them fsynced before their answer: 400 a level took 8 s of a quiet build
                    for (int i = 0; i < 100; i++)
                    {
                        final String topic = i % 2 == 0 ? "durable" : "synced";
                        final String value = acks + "-" + i;
                        final RecordMetadata m = producer.send(new ProducerRecord<>(topic, bytes(value))).get(20, TimeUnit.SECONDS);
                        acked.computeIfAbsent(new TopicPartition(topic, m.partition()), k -> new ArrayList<>()).add(value);
                    }
                }
            }
            broker.restart();
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
            {
                for (final Map.Entry<TopicPartition, List<String>> e : acked.entrySet())
                {
                    consumer.assign(List.of(e.getKey()));
                    consumer.seekToBeginning(List.of(e.getKey()));
                    final List<ConsumerRecord<byte[], byte[]>> got = read(consumer, e.getValue().size());
                    final List<String> values = new ArrayList<>();
                    got.forEach(r -> values.add(text(r.value())));
                    assertEquals(e.getValue(), values, "records of " + e.getKey() + " after the restart");
                }
            }
        }
    }
}
