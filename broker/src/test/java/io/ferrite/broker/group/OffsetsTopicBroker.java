package io.ferrite.broker.group;

import io.ferrite.broker.Broker;
import io.ferrite.broker.config.BrokerConfig;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** For tests: a broker whose {@code __consumer_offsets} has one partition, made before it is handed out. */
public final class OffsetsTopicBroker
{
    private OffsetsTopicBroker()
    {
    }

    public static Broker start(final Path dir) throws Exception
    {
        final Broker broker = Broker.start(BrokerConfig.of(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0",
            BrokerConfig.LOG_DIR, dir.toString(), "offsets.topic.num.partitions", "1")));
        try
        {
            final GroupCoordinator groups = broker.groups();
            final CompletableFuture<?> created = groups.agent().call(groups, (c, now) -> c.offsetsTopicWanted()).get(20, TimeUnit.SECONDS);
            if (created != null)
            {
                created.get(20, TimeUnit.SECONDS);
            }
            return broker;
        }
        catch (final Exception | Error ex)
        {
            broker.close();
            throw ex;
        }
    }
}
