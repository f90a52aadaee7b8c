package io.ferrite.broker.config;

import io.ferrite.log.config.ConfigException;
import io.ferrite.log.config.ConfigKey;

import java.util.Collection;
import java.util.List;

/**
 * What to do with a property the broker does not know. Kafka warns about an unknown name and
 * carries on, because its property files are shared with plugins and tools that read their own
 * keys; Ferrite keeps that for every name except its own {@code ferrite.} namespace, which nothing
 * else reads, so that an unknown name there can only be a mistake, and a mistake that silently
 * leaves (say) durability at its default is worse than a refused start.
 */
public final class UnknownNames
{
    /** Ferrite's own namespace, for broker and topic settings alike. */
    public static final String FERRITE_PREFIX = "ferrite.";
    /** Where the user finds every setting (written from the catalogues by {@code ConfigDoc}). */
    public static final String DOC = "docs/configuration.md";

    private UnknownNames()
    {
    }

    /**
     * Refuses the first name under {@code ferrite.} that the broker catalogue does not hold.
     *
     * @throws ConfigException naming it, with the name likely meant when one is close
     */
    static void refuseUnknownFerrite(final Collection<String> names)
    {
        for (final String name : names)
        {
            if (name.startsWith(FERRITE_PREFIX) && BrokerConfig.CATALOGUE.key(name) == null)
            {
                final String hint = hint(name);
                throw new ConfigException("Unknown configuration " + name + ": "
                    + (hint == null ? "not one of Ferrite's settings (see " + DOC + ")" : hint));
            }
        }
    }

    /**
     * A hint for an unknown broker property, or null: a topic config given at broker level points
     * to the broker property behind it (Kafka's pattern: {@code cleanup.policy} is the topic's,
     * {@code log.cleanup.policy} the broker's default of it), else a known name a small edit away.
     */
    public static String hint(final String name)
    {
        final List<String> brokerNames = BrokerConfig.TOPIC_SYNONYMS.get(name);
        if (brokerNames != null && !brokerNames.isEmpty())
        {
            return "it is a topic config; the broker-wide default is " + brokerNames.get(0) + " (see " + DOC + ")";
        }
        final String closest = closest(name);
        return closest == null ? null : "did you mean " + closest + "? (see " + DOC + ")";
    }

    /** The known broker name nearest to {@code name}, if within a typo's reach (a quarter of its length, at least 2). */
    static String closest(final String name)
    {
        final int reach = Math.max(2, name.length() / 4);
        String best = null;
        int bestDistance = reach + 1;
        for (final ConfigKey key : BrokerConfig.CATALOGUE.keys())
        {
            final int d = distance(name, key.name(), bestDistance);
            if (d < bestDistance)
            {
                bestDistance = d;
                best = key.name();
            }
        }
        return best;
    }

    /** Levenshtein distance, or anything at least {@code limit} once it is sure to reach it. */
    static int distance(final String a, final String b, final int limit)
    {
        if (Math.abs(a.length() - b.length()) >= limit)
        {
            return limit;
        }
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++)
        {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++)
        {
            current[0] = i;
            int rowMin = i;
            for (int j = 1; j <= b.length(); j++)
            {
                final int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitute, Math.min(previous[j], current[j - 1]) + 1);
                rowMin = Math.min(rowMin, current[j]);
            }
            if (rowMin >= limit)
            {
                return limit;
            }
            final int[] t = previous;
            previous = current;
            current = t;
        }
        return previous[b.length()];
    }
}
