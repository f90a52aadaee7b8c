package io.ferrite.broker.e2e;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code kafka-configs.sh --entity-type brokers} (Kafka 4.4's ConfigCommand, in a child JVM) against a running broker:
 * {@code --alter --add-config}, {@code --describe} and {@code --delete-config} for this node and for
 * {@code --entity-default}, printing what a real Kafka 4.4 prints for the same commands (taken from one), and a
 * config that cannot change at run time refused with Kafka's exception, the tool exiting 1.
 */
class BrokerConfigsToolTest
{
    @TempDir
    Path dir;

    @Test
    void alterDescribeAndDeleteAsKafka() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); KafkaToolSession tools = new KafkaToolSession())
        {
            KafkaTool.Run run = configs(tools, broker, "--entity-type", "brokers", "--entity-name", "1", "--alter", "--add-config",
                "log.cleaner.threads=2,log.retention.ms=600000");
            assertEquals(List.of("Completed updating config for broker 1."), run.lines(), run.err());
            run = configs(tools, broker, "--entity-type", "brokers", "--entity-default", "--alter", "--add-config",
                "log.cleaner.io.max.bytes.per.second=1000000,log.segment.bytes=2000000");
            assertEquals(List.of("Completed updating default config for brokers in the cluster."), run.lines(), run.err());

            run = configs(tools, broker, "--entity-type", "brokers", "--entity-name", "1", "--describe");
            assertEquals(List.of("Dynamic configs for broker 1 are:",
                "  log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.cleaner.threads=2, "
                    + "DEFAULT_CONFIG:log.cleaner.threads=1}",
                "  log.retention.ms=600000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=600000, "
                    + "DEFAULT_CONFIG:log.retention.hours=168}"), run.lines(), run.err());
            run = configs(tools, broker, "--entity-type", "brokers", "--entity-default", "--describe");
            assertEquals(List.of("Default configs for brokers in the cluster are:",
                "  log.cleaner.io.max.bytes.per.second=1000000 sensitive=false "
                    + "synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.io.max.bytes.per.second=1000000}",
                "  log.segment.bytes=2000000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.segment.bytes=2000000}"),
                run.lines(), run.err());
            run = configs(tools, broker, "--entity-type", "brokers", "--entity-name", "1", "--describe", "--all");
            assertTrue(run.lines().contains("  log.segment.bytes=2000000 sensitive=false "
                + "synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.segment.bytes=2000000, DEFAULT_CONFIG:log.segment.bytes=1073741824}"),
                run.out());
            assertTrue(run.lines().contains("  log.cleaner.io.max.bytes.per.second=1000000.0 sensitive=false "
                + "synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.io.max.bytes.per.second=1000000, "
                + "DEFAULT_CONFIG:log.cleaner.io.max.bytes.per.second=1.7976931348623157E308}"), run.out());

            run = configs(tools, broker, "--entity-type", "brokers", "--entity-name", "1", "--alter", "--add-config", "num.partitions=3");
            assertEquals(1, run.status(), run.out());
            assertTrue(run.err().contains("InvalidRequestException: Cannot update these configs dynamically: [num.partitions]"), run.err());

            run = configs(tools, broker, "--entity-type", "brokers", "--entity-name", "1", "--alter", "--delete-config",
                "log.cleaner.threads,log.retention.ms");
            assertEquals(List.of("Completed updating config for broker 1."), run.lines(), run.err());
            run = configs(tools, broker, "--entity-type", "brokers", "--entity-name", "1", "--describe");
            assertEquals(List.of("Dynamic configs for broker 1 are:"), run.lines(), run.err());
        }
    }

    /** kafka-configs.sh with {@code args} after {@code --bootstrap-server}, in the test's child JVM of Kafka's tools. */
    static KafkaTool.Run configs(final KafkaToolSession tools, final RunningBroker broker, final String... args) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of("--bootstrap-server", broker.bootstrap()));
        command.addAll(List.of(args));
        return tools.run("org.apache.kafka.tools.ConfigCommand", command.toArray(new String[0]));
    }
}
