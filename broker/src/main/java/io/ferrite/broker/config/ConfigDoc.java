package io.ferrite.broker.config;

import io.ferrite.log.LogConfig;
import io.ferrite.log.config.ConfigKey;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes the tables of {@code docs/configuration.md} from the catalogues ({@link BrokerConfig#CATALOGUE},
 * {@link LogConfig#CATALOGUE}), between {@code <!-- BEGIN GENERATED: name -->} and
 * {@code <!-- END GENERATED: name -->} markers, leaving the prose around them as it is. The catalogues
 * are the one home of every setting: the broker's refusal of unknown {@code ferrite.} names reads the
 * same table, and {@code ConfigDocTest} fails when the document is not what this class writes.
 *
 * <p>{@code java -cp broker/target/ferrite-broker.jar io.ferrite.broker.config.ConfigDoc docs/configuration.md}
 */
public final class ConfigDoc
{
    static final String FERRITE_BROKER = "ferrite-broker";
    static final String FERRITE_TOPIC = "ferrite-topic";
    static final String KAFKA_BROKER = "kafka-broker";
    static final String KAFKA_TOPIC = "kafka-topic";

    private ConfigDoc()
    {
    }

    public static void main(final String[] args) throws IOException
    {
        if (args.length != 1)
        {
            System.err.println("usage: ConfigDoc docs/configuration.md");
            System.exit(2);
        }
        final Path file = Path.of(args[0]);
        Files.writeString(file, render(Files.readString(file, StandardCharsets.UTF_8)), StandardCharsets.UTF_8);
    }

    /** {@code doc} with every generated section written afresh. */
    public static String render(final String doc)
    {
        String out = doc;
        out = replaceSection(out, FERRITE_BROKER, brokerTable(true));
        out = replaceSection(out, FERRITE_TOPIC, topicTable(true));
        out = replaceSection(out, KAFKA_BROKER, brokerTable(false));
        return replaceSection(out, KAFKA_TOPIC, topicTable(false));
    }

    private static String replaceSection(final String doc, final String name, final String table)
    {
        final String begin = "<!-- BEGIN GENERATED: " + name + " -->\n";
        final String end = "<!-- END GENERATED: " + name + " -->";
        final int b = doc.indexOf(begin);
        final int e = doc.indexOf(end);
        if (b < 0 || e < b)
        {
            throw new IllegalArgumentException("no section " + name + " (" + begin.trim() + " ... " + end + ")");
        }
        return doc.substring(0, b + begin.length()) + table + doc.substring(e);
    }

    private static String brokerTable(final boolean ferrite)
    {
        final Map<String, String> topicOf = new HashMap<>();
        for (final Map.Entry<String, List<String>> e : BrokerConfig.TOPIC_SYNONYMS.entrySet())
        {
            for (final String brokerName : e.getValue())
            {
                topicOf.put(brokerName, e.getKey());
            }
        }
        final StringBuilder t = new StringBuilder(ferrite ? "| name | default | valid values | what it does |\n|---|---|---|---|\n"
            : "| name | default | valid values | Ferrite | what it does |\n|---|---|---|---|---|\n");
        for (final ConfigKey key : BrokerConfig.CATALOGUE.keys())
        {
            if (key.name().startsWith(UnknownNames.FERRITE_PREFIX) != ferrite)
            {
                continue;
            }
            final String topic = topicOf.get(key.name());
            final String doc = topic == null ? key.doc()
                : "default of the topic config `" + topic + "` for every topic without its own: " + LogConfig.CATALOGUE.key(topic).doc();
            row(t, code(key.name()), defaultOf(key), valid(key), ferrite ? null : honoured(key), doc);
        }
        return t.toString();
    }

    private static String topicTable(final boolean ferrite)
    {
        final StringBuilder t = new StringBuilder(ferrite
            ? "| name | default | valid values | broker-wide default | what it does |\n|---|---|---|---|---|\n"
            : "| name | default | valid values | Ferrite | broker-wide default | what it does |\n|---|---|---|---|---|---|\n");
        for (final ConfigKey key : LogConfig.CATALOGUE.keys())
        {
            if (key.name().startsWith(UnknownNames.FERRITE_PREFIX) != ferrite)
            {
                continue;
            }
            final List<String> brokerNames = BrokerConfig.TOPIC_SYNONYMS.get(key.name());
            final StringBuilder synonyms = new StringBuilder();
            if (brokerNames != null)
            {
                for (final String n : brokerNames)
                {
                    synonyms.append(synonyms.length() == 0 ? "" : ", then ").append(code(n));
                }
            }
            row(t, code(key.name()), defaultOf(key), valid(key), ferrite ? null : honoured(key), synonyms.length() == 0 ? "—" : synonyms.toString(),
                key.doc());
        }
        return t.toString();
    }

    private static void row(final StringBuilder t, final String... cells)
    {
        t.append('|');
        for (final String cell : cells)
        {
            if (cell != null)
            {
                t.append(' ').append(cell.replace("|", "\\|").replace('\n', ' ')).append(" |");
            }
        }
        t.append('\n');
    }

    private static String code(final String text)
    {
        return "`" + text + "`";
    }

    private static String defaultOf(final ConfigKey key)
    {
        if (key.defaultValue() == null)
        {
            return "(unset)";
        }
        return key.defaultValue().isEmpty() ? "`\"\"`" : code(key.defaultValue());
    }

    private static String honoured(final ConfigKey key)
    {
        return key.implemented() ? "acts on it" : "accepted, no effect yet";
    }

    /** The type in words, then the validator's bounds or choices. */
    static String valid(final ConfigKey key)
    {
        final String bounds = key.validator().describe();
        final String type = switch (key.type())
        {
            case BOOLEAN -> "true or false";
            case INT -> "int";
            case LONG -> "long";
            case DOUBLE -> "number";
            case LIST -> "comma-separated list";
            case PASSWORD -> "password";
            case STRING -> bounds.isEmpty() ? "string" : "";
        };
        if (bounds.isEmpty())
        {
            return type;
        }
        if (type.isEmpty())
        {
            return bounds;
        }
        if (key.type() == ConfigKey.Type.LIST)
        {
            return type + "; " + (bounds.startsWith("one of") ? "each " : "") + bounds;
        }
        return type + ", " + bounds;
    }
}
