package io.ferrite.broker;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.config.ListenerEndpoints;
import io.ferrite.broker.config.ListenerSecurity;
import io.ferrite.broker.config.UnknownNames;
import io.ferrite.log.config.ConfigException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.Reader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.StringJoiner;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code ferrite-server [--config FILE] [--override key=value ...]}: Kafka's broker property names,
 * from a properties file and overridden one by one on the command line as kafka-server-start has it.
 * Without either it listens on 127.0.0.1:9092 with data in {@code ./data}. SIGTERM (and Ctrl-C)
 * shut it down cleanly and it exits 0.
 */
@Command(name = "ferrite-server", mixinStandardHelpOptions = true, version = "Ferrite 0.1.0",
    description = "Runs a Ferrite broker: a Kafka-protocol log server.")
public final class FerriteServer implements Callable<Integer>
{
    static final int EXIT_CONFIG = 2;
    static final int EXIT_START = 1;

    @Option(names = "--config", paramLabel = "FILE", description = "broker properties (Kafka's names)")
    Path config;

    @Option(names = "--override", paramLabel = "KEY=VALUE", description = "a property overriding the file's")
    List<String> overrides = new ArrayList<>();

    public static void main(final String[] args)
    {
        final FerriteServer plain = plainOptions(args);
        if (plain != null)
        {
            System.exit(plain.callAsPicocliWould());
        }
        System.exit(new CommandLine(new FerriteServer()).setParameterExceptionHandler(FerriteServer::optionError).execute(args));
    }

    /**
     * The options of an ordinary start, without picocli: only {@code --config FILE} (once) and {@code --override
     * KEY=VALUE} (each also as {@code --option=value}), with values that picocli would take as they are (no leading
     * '-', no '@' argument file); null for anything else, which picocli parses (help, version, mistakes). Building
     * picocli's {@code CommandLine} (its model, type converters, help) cost about a quarter of the broker's CPU up to its
     * first acknowledged produce, 115 of 450 ms under load (issue 17, jmh-results/profiles.md).
     */
    static FerriteServer plainOptions(final String[] args)
    {
        final FerriteServer server = new FerriteServer();
        for (int i = 0; i < args.length; i++)
        {
            final String arg = args[i];
            final int eq = arg.indexOf('=');
            final String name = arg.startsWith("--") && eq > 0 ? arg.substring(0, eq) : arg;
            final String value = name.equals(arg) ? (i + 1 < args.length ? args[++i] : null) : arg.substring(eq + 1);
            if (value == null || value.isEmpty() || value.startsWith("-") || value.startsWith("@") || arg.startsWith("@"))
            {
                return null;
            }
            if (name.equals("--override"))
            {
                server.overrides.add(value);
            }
            else if (name.equals("--config") && server.config == null && value.indexOf('\0') < 0)
            {
                server.config = Path.of(value);
            }
            else
            {
                return null;
            }
        }
        return server;
    }

    /** {@link #call()} with picocli's exit status and the same stack trace for an exception it throws (unstyled: picocli's is italic on a terminal). */
    private int callAsPicocliWould()
    {
        try
        {
            return call();
        }
        catch (final Exception ex)
        {
            ex.printStackTrace();
            return 1;
        }
    }

    /** A mistyped or incomplete option: one line with picocli's suggestions, as every other mistake at start. */
    private static int optionError(final CommandLine.ParameterException ex, final String[] args)
    {
        final StringBuilder line = new StringBuilder("ferrite-server: ").append(ex.getMessage().strip().replace('\n', ' '));
        if (ex instanceof CommandLine.UnmatchedArgumentException unmatched && !unmatched.getSuggestions().isEmpty())
        {
            line.append(" (did you mean ").append(String.join(" or ", unmatched.getSuggestions())).append("?)");
        }
        System.err.println(line.append("; see ferrite-server --help"));
        return EXIT_CONFIG;
    }

    /**
     * The properties the options give: the file's, then the overrides in order.
     *
     * @throws ConfigException for a config file that cannot be read or an override without '='
     */
    Map<String, String> properties()
    {
        final Map<String, String> values = new LinkedHashMap<>();
        if (config != null)
        {
            final Properties file = new Properties();
            try (Reader reader = Files.newBufferedReader(config, StandardCharsets.UTF_8))
            {
                file.load(reader);
            }
            catch (final NoSuchFileException ex)
            {
                throw new ConfigException("--config " + config + ": no such file");
            }
            catch (final IOException | IllegalArgumentException ex) // IllegalArgumentException: a malformed unicode escape
            {
                throw new ConfigException("--config " + config + ": cannot be read as a properties file: " + StartupException.reason(ex));
            }
            for (final String name : file.stringPropertyNames())
            {
                values.put(name, file.getProperty(name).trim());
            }
        }
        for (final String o : overrides)
        {
            final int eq = o.indexOf('=');
            if (eq <= 0)
            {
                throw new ConfigException("--override expects key=value, got '" + o + "'");
            }
            values.put(o.substring(0, eq).trim(), o.substring(eq + 1).trim());
        }
        return values;
    }

    /**
     * Exit statuses: 0 after SIGTERM or SIGINT; {@link #EXIT_CONFIG} for a configuration that is
     * wrong and {@link #EXIT_START} for a start the machine or the data directory refused, each with
     * one line on standard error; any other failure (Ferrite's own) picocli's 1 with its stack trace.
     */
    @Override
    public Integer call() throws Exception
    {
        final BrokerConfig brokerConfig;
        try
        {
            brokerConfig = BrokerConfig.of(properties());
        }
        catch (final ConfigException ex)
        {
            System.err.println("ferrite-server: " + ex.getMessage());
            return EXIT_CONFIG;
        }
        for (final String unknown : brokerConfig.unknownNames())
        {
            final String hint = UnknownNames.hint(unknown);
            System.err.println("ferrite-server: ignoring unknown property " + unknown + (hint == null ? "" : " (" + hint + ")"));
        }
        final Broker broker;
        try
        {
            broker = Broker.start(brokerConfig);
        }
        catch (final StartupException ex)
        {
            System.err.println("ferrite-server: " + ex.getMessage());
            return EXIT_START;
        }
        final CountDownLatch stopped = new CountDownLatch(1);
        final Runnable shutdown = () ->
        {
            try
            {
                broker.close();
            }
            catch (final IOException ex)
            {
                System.err.println("ferrite-server: shutdown failed: " + ex);
            }
            finally
            {
                stopped.countDown();
            }
        };
        // SIGTERM and SIGINT are handled here rather than by the JVM's exit sequence, whose status
        // would be 143: the broker closes cleanly and main returns 0; the hook covers other exits
        for (final String name : List.of("TERM", "INT"))
        {
            sun.misc.Signal.handle(new sun.misc.Signal(name), signal -> new Thread(shutdown, "ferrite-shutdown").start());
        }
        Runtime.getRuntime().addShutdownHook(new Thread(shutdown, "ferrite-exit"));
        System.out.println("Ferrite listening on " + listening(brokerConfig, broker) +
            " (node " + brokerConfig.nodeId() + ", cluster " + broker.clusterId() + ", data in " + brokerConfig.logDirs() + ")");
        System.out.flush();
        stopped.await();
        return 0;
    }

    /** Every broker listener, NAME://host:port as bound (the real port when 0 was configured), in the order of listeners. */
    private static String listening(final BrokerConfig config, final Broker broker) throws IOException
    {
        final StringJoiner all = new StringJoiner(",");
        for (final ListenerEndpoints.Endpoint e : ListenerSecurity.brokerListeners(config))
        {
            final InetSocketAddress bound = broker.address(e.name());
            all.add(e.name() + "://" + bound.getHostString() + ":" + bound.getPort());
        }
        return all.toString();
    }
}
