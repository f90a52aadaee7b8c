package io.ferrite.broker.e2e;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Thousands of idle connections cost little and do not get in the way: 5 000 connections held open
 * (one in ten sent an ApiVersions request first, as a client that connected and went quiet), then a
 * producer and a consumer still work, and every connection is gone once closed. The memory they
 * take (heap after a collection, plus direct buffers — a broker's per-connection buffers live
 * there) is printed per connection and bounded: a Kafka broker keeps a few KiB per idle
 * connection (its receive buffer is allocated only once a frame's size is read). Connections that fetched once (a
 * response of about 100 KB of records copied in beside their headers) and went quiet are held to the same bound: the
 * output a response grew is given back once it is written.
 */
class IdleConnectionsTest
{
    private static final int CONNECTIONS = 5_000;
    /** Per idle connection, heap and direct memory together (the clients' sockets are in the same JVM). */
    private static final long MAX_BYTES_PER_CONNECTION = 8 * 1024;

    @TempDir
    Path dir;

    @Test
    void fiveThousandIdleConnectionsThenNormalClientsStillWork() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            final int port = broker.broker.address().getPort();
            final long before = usedMemory();
            final List<SocketChannel> idle = new ArrayList<>(CONNECTIONS);
            final List<RawClient> spoke = new ArrayList<>();
            try
            {
                for (int i = 0; i < CONNECTIONS; i++)
                {
                    if (i % 10 == 0)
                    {
                        final RawClient client = new RawClient(port);
                        spoke.add(client);
                        client.exchange(ApiKeys.API_VERSIONS, (short)3, new ApiVersionsRequestData()
                            .setClientSoftwareName("idle-test").setClientSoftwareVersion("1"));
                    }
                    else
                    {
                        idle.add(SocketChannel.open(new InetSocketAddress("127.0.0.1", port)));
                    }
                }
                await(() -> broker.broker.openConnections() == CONNECTIONS, "all connections accepted");
                final long after = usedMemory();
                final long perConnection = (after - before) / CONNECTIONS;
                System.out.printf("%d idle connections: %d KiB before, %d KiB after, %d bytes per connection%n",
                    CONNECTIONS, before / 1024, after / 1024, perConnection);
                assertTrue(perConnection < MAX_BYTES_PER_CONNECTION,
                    perConnection + " bytes of heap and direct memory per idle connection");

                produceAndConsume(broker);
            }
            finally
            {
                for (final SocketChannel channel : idle)
                {
                    channel.close();
                }
                for (final RawClient client : spoke)
                {
                    client.close();
                }
            }
            // the producer and consumer of produceAndConsume are closed too
            await(() -> broker.broker.openConnections() == 0, "every connection gone");
        }
    }

    @Test
    void connectionsThatFetchedOnceAndWentQuietHoldLittle() throws Exception
    {
        final int connections = 100;
        // four partitions of about 25 KB each: every region is copied (under 32 KiB), about 100 KB a response, which
        // grows the output to about 130 KiB; the request stays under the input's first 256 bytes, so what is measured
        // is the output (a larger request grows the input for the connection's life: a separate cost, not given back)
        final int partitions = 4;
        try (RunningBroker broker = new RunningBroker(dir, Map.of("num.network.threads", "2")))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("fetched", partitions, (short)1))).all().get(20, TimeUnit.SECONDS);
            }
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of("acks", "1")))
            {
                for (int p = 0; p < partitions; p++)
                {
                    for (int i = 0; i < 25; i++)
                    {
                        producer.send(new ProducerRecord<>("fetched", p, null, new byte[1000]));
                    }
                }
                producer.flush();
            }
            final List<FetchRequestData.FetchPartition> fetched = new ArrayList<>();
            for (int p = 0; p < partitions; p++)
            {
                fetched.add(new FetchRequestData.FetchPartition().setPartition(p).setFetchOffset(0).setPartitionMaxBytes(1 << 20));
            }
            final FetchRequestData fetch = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(0)
                .setMaxBytes(50 << 20).setSessionEpoch(-1).setTopics(List.of(new FetchRequestData.FetchTopic().setTopic("fetched")
                    .setPartitions(fetched)));
            // one connection per network thread first, closed before the measure: what a first fetch sets up once (the
            // thread's fetch handler; the test's own parsing classes) is not counted per connection
            for (int c = 0; c < 2; c++)
            {
                try (RawClient client = new RawClient(broker.broker.address().getPort()))
                {
                    new FetchResponseData(new ByteBufferAccessor(client.exchange(ApiKeys.FETCH, (short)12, fetch)), (short)12);
                }
            }
            await(() -> broker.broker.openConnections() == 0, "the first connections gone");
            final long before = usedMemory();
            final long givenBackBefore = outputsGivenBack(broker);
            final List<RawClient> quiet = new ArrayList<>(connections);
            try
            {
                long largest = 0;
                for (int c = 0; c < connections; c++)
                {
                    final RawClient client = new RawClient(broker.broker.address().getPort());
                    quiet.add(client);
                    final ByteBuffer body = client.exchange(ApiKeys.FETCH, (short)12, fetch);
                    largest = Math.max(largest, body.capacity());
                    final FetchResponseData response = new FetchResponseData(new ByteBufferAccessor(body), (short)12);
                    assertEquals(partitions, response.responses().get(0).partitions().size());
                    for (final FetchResponseData.PartitionData answer : response.responses().get(0).partitions())
                    {
                        assertEquals(0, answer.errorCode(), "partition " + answer.partitionIndex());
                        assertTrue(answer.records().sizeInBytes() > 20_000, "records of partition " + answer.partitionIndex());
                    }
                }
                // each connection's one response grew its output far above the bound; each gave it back once written
                await(() -> outputsGivenBack(broker) - givenBackBefore == connections, "every grown output given back");
                // the outputs a response outgrew on its way up (1 KiB, 1.5, 2.25, ... 130 KiB) are freed by their cleaners
                // after a collection, on the JDK's cleaner thread: measured again until that has caught up, or the deadline
                final long[] after = new long[1];
                final long largestResponse = largest;
                final BooleanSupplier small = () ->
                {
                    after[0] = usedMemory();
                    return (after[0] - before) / connections < MAX_BYTES_PER_CONNECTION;
                };
                try
                {
                    await(small, "memory per connection under " + MAX_BYTES_PER_CONNECTION + " bytes");
                }
                finally
                {
                    System.out.printf("%d connections that fetched %d bytes once: %d KiB before, %d KiB after, %d bytes per connection%n",
                        connections, largestResponse, before / 1024, after[0] / 1024, (after[0] - before) / connections);
                }
            }
            finally
            {
                for (final RawClient client : quiet)
                {
                    client.close();
                }
            }
        }
    }

    private static long outputsGivenBack(final RunningBroker broker)
    {
        return broker.broker.networkThread(0).stats().outputsGivenBack() + broker.broker.networkThread(1).stats().outputsGivenBack();
    }

    private static void produceAndConsume(final RunningBroker broker) throws Exception
    {
        final TopicPartition tp = new TopicPartition("after-idle", 0);
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of("acks", "all")))
        {
            for (int i = 0; i < 100; i++)
            {
                producer.send(new ProducerRecord<>(tp.topic(), 0, null, ("v" + i).getBytes(StandardCharsets.UTF_8))).get();
            }
        }
        try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
        {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            final List<String> values = new ArrayList<>();
            for (final ConsumerRecord<byte[], byte[]> r : Polling.pollCount(consumer, 100))
            {
                values.add(new String(r.value(), StandardCharsets.UTF_8));
            }
            assertEquals(100, values.size(), "records read back");
            for (int i = 0; i < 100; i++)
            {
                assertEquals("v" + i, values.get(i));
            }
        }
    }

    /** Heap in use after a collection plus the direct buffers allocated. */
    private static long usedMemory()
    {
        for (int i = 0; i < 3; i++)
        {
            System.gc();
        }
        long direct = 0;
        for (final BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class))
        {
            if (pool.getName().equals("direct"))
            {
                direct = pool.getMemoryUsed();
            }
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() + direct;
    }

    private static void await(final BooleanSupplier condition, final String what)
    {
        Await.await(condition::getAsBoolean, Duration.ofSeconds(60), what);
    }
}
