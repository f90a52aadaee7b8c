package io.ferrite.broker.e2e;

import io.ferrite.broker.Broker;
import io.ferrite.broker.admin.CreationsHold;
import io.ferrite.broker.admin.PendingCreations;
import io.ferrite.broker.config.BrokerConfig;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A test's child JVM: the broker {@code FerriteServer} starts (its {@code --override KEY=VALUE} options only), with its
 * creations held ({@link CreationsHold}) from before it says where it listens, so that a test's CreateTopics,
 * CreatePartitions and config changes of a large topic all reach it while none of its slices is made. A line on standard
 * input steps it: {@code chunk} makes one chunk on the admin agent (a large topic's next slice, queued behind the
 * commands the agent has taken) and then prints {@code chunked <topics made>} on standard output from the agent's thread
 * (a test that must order the chunk before its next request waits for that line), {@code release} lets the agent make the rest between its commands. A test ends it with
 * SIGKILL; standard input closed (the test JVM gone) closes the broker and exits.
 */
public final class HeldCreationsServer
{
    private HeldCreationsServer()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Map<String, String> values = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2)
        {
            if (!args[i].equals("--override"))
            {
                throw new IllegalArgumentException("only --override KEY=VALUE: " + args[i]);
            }
            final int eq = args[i + 1].indexOf('=');
            values.put(args[i + 1].substring(0, eq), args[i + 1].substring(eq + 1));
        }
        final Broker broker = Broker.start(BrokerConfig.of(values));
        final PendingCreations creations = broker.admin().creations();
        CreationsHold.hold(creations, true);
        System.out.println("Ferrite listening on PLAINTEXT://" + broker.address().getHostString() + ":" + broker.address().getPort()
            + " (held creations)");
        System.out.flush();
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null)
        {
            switch (line.trim())
            {
                case "chunk" -> broker.admin().execute(() -> chunked(CreationsHold.chunk(creations)));
                case "release" -> CreationsHold.hold(creations, false);
                default -> System.err.println("HeldCreationsServer: unknown command " + line);
            }
        }
        broker.close(); // standard input closed: the test is gone (a test ends this process with SIGKILL)
        System.exit(0);
    }

    /** On the agent's thread, after the chunk: its files are made when the test reads this line. */
    private static void chunked(final int topics)
    {
        System.out.println("chunked " + topics);
        System.out.flush();
    }
}
