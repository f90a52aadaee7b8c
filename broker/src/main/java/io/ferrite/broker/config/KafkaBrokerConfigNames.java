package io.ferrite.broker.config;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * Apache Kafka 4.4's broker config names and which of them it changes at run time (its
 * {@code DynamicConfig.Broker.names()} and {@code nonDynamicProps()}), as data: {@value #RESOURCE}. Kafka refuses a
 * dynamic change of every name it knows that is not dynamic, whether Ferrite knows the name or not; a name Kafka
 * does not know is a custom config.
 */
public final class KafkaBrokerConfigNames
{
    static final String RESOURCE = "kafka-broker-configs.txt";

    /** Every Kafka 4.4 broker config name: true when Kafka changes it at run time. */
    public static final Map<String, Boolean> DYNAMIC_BY_NAME = read();

    private KafkaBrokerConfigNames()
    {
    }

    /** Whether Kafka 4.4 knows {@code name} as a broker config. */
    public static boolean known(final String name)
    {
        return DYNAMIC_BY_NAME.containsKey(name);
    }

    private static Map<String, Boolean> read()
    {
        final Map<String, Boolean> names = new TreeMap<>();
        try (InputStream in = KafkaBrokerConfigNames.class.getResourceAsStream(RESOURCE))
        {
            if (in == null)
            {
                throw new IllegalStateException(RESOURCE + " is missing from the class path");
            }
            final BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            for (String line = lines.readLine(); line != null; line = lines.readLine())
            {
                if (line.isBlank() || line.startsWith("#"))
                {
                    continue;
                }
                final String[] fields = line.trim().split(" ");
                names.put(fields[0], "dynamic".equals(fields[1]));
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return Collections.unmodifiableMap(names);
    }
}
