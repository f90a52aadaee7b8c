package io.ferrite.broker.e2e;

import io.ferrite.broker.Broker;
import io.ferrite.broker.admin.CreationsHold;
import io.ferrite.broker.admin.PendingCreations;
import io.ferrite.broker.config.BrokerConfig;

import java.io.InputStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A test's child JVM: the broker {@code FerriteServer} starts (its {@code --override KEY=VALUE} options only), with the
 * creations' backlog bound ({@link CreationsHold#backlog}) and the estimated cost of a partition's files
 * ({@link CreationsHold#estimate}) fixed from before it says where it listens — {@code --backlog-ms N} and
 * {@code --estimate-ms N} first — so that a test's CreateTopics is over the bound with a few hundred partitions
 * instead of the 1 111 of a fresh server's 10 s at 9 ms, whatever the machine measures. Not held: the agent makes the
 * files after the answer as a server does. A test ends it with SIGKILL; standard input closed (the test JVM gone)
 * closes the broker and exits.
 */
public final class BoundedBacklogServer
{
    private BoundedBacklogServer()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        long backlogMs = -1;
        long estimateMs = -1;
        final Map<String, String> values = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2)
        {
            switch (args[i])
            {
                case "--backlog-ms" -> backlogMs = Long.parseLong(args[i + 1]);
                case "--estimate-ms" -> estimateMs = Long.parseLong(args[i + 1]);
                case "--override" ->
                {
                    final int eq = args[i + 1].indexOf('=');
                    values.put(args[i + 1].substring(0, eq), args[i + 1].substring(eq + 1));
                }
                default -> throw new IllegalArgumentException("only --backlog-ms N, --estimate-ms N, --override KEY=VALUE: " + args[i]);
            }
        }
        if (backlogMs < 0 || estimateMs <= 0)
        {
            throw new IllegalArgumentException("--backlog-ms and --estimate-ms are both needed");
        }
        final Broker broker = Broker.start(BrokerConfig.of(values));
        final PendingCreations creations = broker.admin().creations();
        CreationsHold.estimate(creations, Duration.ofMillis(estimateMs));
        CreationsHold.backlog(creations, Duration.ofMillis(backlogMs));
        System.out.println("Ferrite listening on PLAINTEXT://" + broker.address().getHostString() + ":" + broker.address().getPort()
            + " (creations' backlog bound " + backlogMs + " ms at " + estimateMs + " ms a partition)");
        System.out.flush();
        final InputStream in = System.in;
        while (in.read() != -1)
        {
            // nothing to read: standard input only tells when the test JVM is gone
        }
        broker.close();
        System.exit(0);
    }
}
