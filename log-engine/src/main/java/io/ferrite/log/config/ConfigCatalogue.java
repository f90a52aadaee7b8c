package io.ferrite.log.config;

import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/** An ordered set of {@link ConfigKey}s: the one home of a module's knobs. */
public final class ConfigCatalogue
{
    private final Map<String, ConfigKey> keys = new LinkedHashMap<>();

    public ConfigCatalogue define(final ConfigKey key)
    {
        if (keys.put(key.name(), key) != null)
        {
            throw new IllegalArgumentException("defined twice: " + key.name());
        }
        return this;
    }

    public ConfigCatalogue define(
        final String name, final ConfigKey.Type type, final String defaultValue, final ConfigKey.Validator validator,
        final boolean implemented, final String doc)
    {
        return define(new ConfigKey(name, type, defaultValue, validator, implemented, doc));
    }

    public ConfigKey key(final String name)
    {
        return keys.get(name);
    }

    public Collection<ConfigKey> keys()
    {
        return Collections.unmodifiableCollection(keys.values());
    }

    /**
     * Parses and validates every entry of {@code values} against the catalogue.
     *
     * @throws ConfigException for an unknown name or an invalid value
     */
    public Map<String, Object> parse(final Map<String, String> values)
    {
        final Map<String, Object> parsed = new HashMap<>();
        for (final Map.Entry<String, String> e : values.entrySet())
        {
            final ConfigKey key = keys.get(e.getKey());
            if (key == null)
            {
                throw new ConfigException("Unknown topic config name: " + e.getKey());
            }
            parsed.put(e.getKey(), key.parse(e.getValue()));
        }
        return parsed;
    }
}
