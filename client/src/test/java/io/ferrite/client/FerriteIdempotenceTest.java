package io.ferrite.client;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

/** {@link IdempotentRetriesContract} against Ferrite (in-process), advertising the proxy in front of it. */
class FerriteIdempotenceTest extends IdempotentRetriesContract
{
    @TempDir
    static Path dir;
    static FerriteFixture ferrite;

    @BeforeAll
    static void start() throws Exception
    {
        ferrite = new FerriteFixture(dir, advertiseProxy());
        proxy.target(ferrite.broker.address().getPort());
    }

    @AfterAll
    static void stop() throws Exception
    {
        if (ferrite != null)
        {
            ferrite.close();
        }
    }

    @Override
    void createTopic(final String name, final int partitions, final Map<String, String> configs) throws Exception
    {
        ferrite.createTopic(name, partitions, configs);
    }
}
