package io.ferrite.client;

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

    @BeforeAll
    static void start() throws Exception
    {
        ferrite = new FerriteFixture(dir);
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
