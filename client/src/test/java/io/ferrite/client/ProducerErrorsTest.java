package io.ferrite.client;

import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Typed outcomes for bad input against Ferrite, and keyed placement as kafka-clients places keys. */
class ProducerErrorsTest
{
    @TempDir
    static Path dir;
    static FerriteFixture ferrite;

    @BeforeAll
    static void start() throws Exception
    {
        ferrite = new FerriteFixture(dir);
        ferrite.createTopic("errors", 2);
    }

    @AfterAll
    static void stop() throws Exception
    {
        ferrite.close();
    }

    private Producer producer(final ProducerConfig config, final CompletionHandler handler)
    {
        return new Producer(config.bootstrapServers(ferrite.bootstrap()), handler);
    }

    @Test
    void anUnknownTopicIsNamedSoAndNotCreated()
    {
        try (Producer p = producer(new ProducerConfig(), (tag, t, partition, offset, error) -> { }))
        {
            assertEquals(Producer.UNKNOWN_TOPIC, p.awaitPartitions("no-such-topic", 30_000));
            final UnsafeBuffer v = new UnsafeBuffer(new byte[10]);
            assertEquals(Producer.UNKNOWN_TOPIC, p.send("no-such-topic", 0, null, 0, -1, v, 0, 10, null, -1, 0));
        }
        assertEquals(null, ferrite.broker.topics().topic("no-such-topic"));
    }

    @Test
    void aRecordTooLargeForARequestIsRefusedAndASmallOneIsNot()
    {
        final short[] errors = {-99, -99};
        try (Producer p = producer(new ProducerConfig().maxRequestSize(1_024), (tag, t, partition, offset, error) ->
            errors[(int)tag] = error))
        {
            assertEquals(2, p.awaitPartitions("errors", 30_000));
            final UnsafeBuffer v = new UnsafeBuffer(new byte[2_000]);
            assertEquals(Producer.RECORD_TOO_LARGE, p.send("errors", 0, null, 0, -1, v, 0, 2_000, null, -1, 0));
            assertEquals(0, p.send("errors", 0, null, 0, -1, v, 0, 100, null, -1, 1));
            assertEquals(Producer.INVALID_PARTITION, p.send("errors", 2, null, 0, -1, v, 0, 100, null, -1, 1));
            FerriteFixture.drain(p);
        }
        assertEquals(-99, errors[0]);
        assertEquals(0, errors[1]);
    }

    @Test
    void aClosedProducerRefusesSendsAndFailsWhatItHeld()
    {
        final short[] errors = {-99};
        final Producer p = producer(new ProducerConfig().lingerMs(60_000), (tag, t, partition, offset, error) ->
            errors[(int)tag] = error);
        assertEquals(2, p.awaitPartitions("errors", 30_000));
        final UnsafeBuffer v = new UnsafeBuffer(new byte[10]);
        assertEquals(1, p.send("errors", 1, null, 0, -1, v, 0, 10, null, -1, 0));
        p.close();
        assertEquals(ClientErrors.CLIENT_CLOSED, errors[0]);
        assertEquals(0, p.pending());
        assertEquals(Producer.CLOSED, p.send("errors", 1, null, 0, -1, v, 0, 10, null, -1, 0));
    }

    @Test
    void keysArePlacedAsKafkaClientsPlacesThem()
    {
        final long seed = System.nanoTime();
        System.out.println("keysArePlacedAsKafkaClientsPlacesThem seed " + seed);
        final Random random = new Random(seed);
        for (int i = 0; i < 10_000; i++)
        {
            final byte[] key = new byte[random.nextInt(40)];
            random.nextBytes(key);
            final int partitions = 1 + random.nextInt(100);
            assertEquals(Utils.toPositive(Utils.murmur2(key)) % partitions,
                Murmur2Partitioner.partition(new UnsafeBuffer(key), 0, key.length, partitions), "seed " + seed);
        }
    }
}
