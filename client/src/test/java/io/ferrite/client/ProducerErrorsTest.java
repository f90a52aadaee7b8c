package io.ferrite.client;

import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Keyed placement as kafka-clients places keys. (The typed outcomes for bad input, which were here against Ferrite
 * only, are {@link ProducerErrorsContract}'s, run against Ferrite and Kafka 4.4.)
 */
class ProducerErrorsTest
{
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
