package io.ferrite.client;

import io.ferrite.testing.DroppingProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

/** {@link IdempotentRetriesContract} against Ferrite (in-process), advertising the proxy in front of it. */
class FerriteIdempotenceTest implements IdempotentRetriesContract
{
    @TempDir
    static Path dir;
    static DroppingProxy proxy;
    static FerriteFixture ferrite;

    @BeforeAll
    static void start() throws Exception
    {
        proxy = IdempotentRetriesContract.newProxy();
        ferrite = new FerriteFixture(dir, Map.of("advertised.listeners", "PLAINTEXT://127.0.0.1:" + proxy.port()));
        proxy.target(ferrite.broker.address().getPort());
    }

    @AfterAll
    static void stop() throws Exception
    {
        if (ferrite != null)
        {
            ferrite.close();
        }
        if (proxy != null)
        {
            proxy.close();
        }
    }

    @Override
    public DroppingProxy proxy()
    {
        return proxy;
    }

    @Override
    public void createTopic(final String name, final int partitions, final Map<String, String> configs) throws Exception
    {
        ferrite.createTopic(name, partitions, configs);
    }
}
