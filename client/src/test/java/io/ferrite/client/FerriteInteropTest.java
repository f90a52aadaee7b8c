package io.ferrite.client;

import io.ferrite.broker.config.BrokerConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

/** {@link ProducerInteropContract} and {@link ConsumerInteropContract} against Ferrite, started in-process. */
class FerriteInteropTest extends ProducerInteropContract implements ConsumerInteropContract, GroupOffsetsInteropContract,
    ProducerErrorsContract,
    GroupMembershipInteropContract
{
    @TempDir
    static Path dir;
    static FerriteFixture ferrite;

    /**
     * Without Kafka's three seconds of {@code group.initial.rebalance.delay.ms} before a new group's first generation,
     * as the Kafka node of {@link KafkaInteropTest} runs (test-support's BrokerNode sets 0): the group cases would
     * each wait it out once per new group (about 40 s of this class in all), and the contract is the same on both.
     */
    @BeforeAll
    static void start() throws Exception
    {
        ferrite = new FerriteFixture(dir, Map.of(BrokerConfig.GROUP_INITIAL_REBALANCE_DELAY_MS, "0"));
    }

    @AfterAll
    static void stop() throws Exception
    {
        ferrite.close();
    }

    @Override
    public String bootstrap()
    {
        return ferrite.bootstrap();
    }

    @Override
    public void createTopic(final String name, final int partitions) throws Exception
    {
        ferrite.createTopic(name, partitions);
    }

    @Override
    public void createTopic(final String name, final int partitions, final Map<String, String> configs) throws Exception
    {
        ferrite.createTopic(name, partitions, configs);
    }
}
