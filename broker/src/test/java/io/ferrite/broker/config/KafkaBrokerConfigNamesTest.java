package io.ferrite.broker.config;

import org.junit.jupiter.api.Test;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The data table of Kafka's broker config names against Kafka 4.4's own lists (kafka-server's
 * {@code DynamicConfig.Broker}, loaded from {@code target/configs-tool.classpath}: kafka-server is kept off the test
 * JVMs' class path, see broker/pom.xml).
 */
class KafkaBrokerConfigNamesTest
{
    @Test
    void theTableIsKafkasList() throws Exception
    {
        final List<URL> jars = new ArrayList<>();
        for (final String jar : Files.readString(Path.of("target", "configs-tool.classpath")).strip().split(java.io.File.pathSeparator))
        {
            jars.add(Path.of(jar).toUri().toURL());
        }
        final Map<String, Boolean> kafka = new TreeMap<>();
        try (URLClassLoader loader = new URLClassLoader(jars.toArray(new URL[0]), getClass().getClassLoader()))
        {
            final Class<?> broker = Class.forName("org.apache.kafka.server.config.DynamicConfig$Broker", true, loader);
            ((Collection<?>)broker.getMethod("names").invoke(null)).forEach(n -> kafka.put((String)n, true));
            ((Collection<?>)broker.getMethod("nonDynamicProps").invoke(null)).forEach(n -> kafka.put((String)n, false));
        }
        assertEquals(382, kafka.size());
        assertEquals(kafka, new TreeMap<>(KafkaBrokerConfigNames.DYNAMIC_BY_NAME));
    }

    @Test
    void everyNameFerriteChangesAtRunTimeIsDynamicInKafka()
    {
        final Set<String> notDynamicInKafka = new TreeSet<>();
        for (final String name : DynamicBrokerConfigs.DYNAMIC)
        {
            if (!Boolean.TRUE.equals(KafkaBrokerConfigNames.DYNAMIC_BY_NAME.get(name)))
            {
                notDynamicInKafka.add(name);
            }
        }
        assertEquals(Set.of(), notDynamicInKafka);
        assertTrue(DynamicBrokerConfigs.DYNAMIC.contains("log.cleaner.threads"));
    }
}
