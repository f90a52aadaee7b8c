package io.ferrite.broker.e2e;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Thousands of idle connections cost little and do not get in the way: 5 000 connections held open
 * (one in ten sent an ApiVersions request first, as a client that connected and went quiet), then a
 * producer and a consumer still work, and every connection is gone once closed. The memory they
 * take (heap after a collection, plus direct buffers — a broker's per-connection buffers live
 * there) is printed per connection and bounded: a Kafka broker keeps a few KiB per idle
 * connection (its receive buffer is allocated only once a frame's size is read).
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
