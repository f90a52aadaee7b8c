package io.ferrite.client;

import io.ferrite.testing.BrokerNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

/** {@link IdempotentRetriesContract} against Apache Kafka 4.4 in a child JVM, advertising the proxy in front of it. */
class KafkaIdempotenceTest extends IdempotentRetriesContract
{
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    static Path dir;
    static BrokerNode kafka;

    @BeforeAll
    static void start() throws Exception
    {
        kafka = BrokerNode.spawn(BrokerNode.Kind.KAFKA, "kafka", dir.resolve("kafka"), advertiseProxy());
        proxy.target(Integer.parseInt(kafka.bootstrap().substring(kafka.bootstrap().lastIndexOf(':') + 1)));
        kafka.awaitReady();
    }

    @AfterAll
    static void stop() throws Exception
    {
        if (kafka != null)
        {
            kafka.close();
        }
    }

    @Override
    void createTopic(final String name, final int partitions, final Map<String, String> configs) throws Exception
    {
        KafkaInteropTest.createTopic(kafka.bootstrap(), name, partitions, configs);
    }
}
