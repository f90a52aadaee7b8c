package io.ferrite.log.config;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One configuration: its Kafka name, type, default (as Kafka prints it), documentation and
 * validation. {@code implemented} says whether Ferrite acts on it; the others are accepted and
 * stored, and described as such, so that tools that set them keep working.
 */
public record ConfigKey(String name, Type type, String defaultValue, Validator validator, boolean implemented, String doc)
{
    public enum Type
    {
        BOOLEAN, INT, LONG, DOUBLE, STRING, LIST, PASSWORD
    }

    /** Checks a parsed value; throws {@link ConfigException}. */
    @FunctionalInterface
    public interface Validator
    {
        void check(String name, Object value);

        /** The values allowed beyond the type, in words for the configuration document ("" when any). */
        default String describe()
        {
            return "";
        }

        Validator NONE = (n, v) -> { };

        /** {@code check} with the words that {@link #describe} gives for it. */
        static Validator described(final String description, final Validator check)
        {
            return new Validator()
            {
                @Override
                public void check(final String name, final Object value)
                {
                    check.check(name, value);
                }

                @Override
                public String describe()
                {
                    return description;
                }
            };
        }

        static Validator atLeast(final long min)
        {
            return described("at least " + min, (n, v) ->
            {
                if (v != null && ((Number)v).doubleValue() < min)
                {
                    throw new ConfigException(n, v, "Value must be at least " + min);
                }
            });
        }

        /**
         * Kafka's {@code Range.between}: the message names the bound crossed ("at least" the
         * minimum, "no more than" the maximum), as Kafka's ConfigDef words it.
         */
        static Validator between(final long min, final long max)
        {
            return described(min + " to " + max, (n, v) ->
            {
                if (v != null && ((Number)v).doubleValue() < min)
                {
                    throw new ConfigException(n, v, "Value must be at least " + min);
                }
                if (v != null && ((Number)v).doubleValue() > max)
                {
                    throw new ConfigException(n, v, "Value must be no more than " + max);
                }
            });
        }

        /** Kafka's range with one extra allowed value (compression.gzip.level: 1 to 9, or -1 for the codec's default). */
        static Validator betweenOr(final long min, final long max, final long or)
        {
            return described(min + " to " + max + ", or " + or, (n, v) ->
            {
                if (v != null && ((Number)v).longValue() != or && (((Number)v).doubleValue() < min || ((Number)v).doubleValue() > max))
                {
                    throw new ConfigException(n, v, "Value must be between " + min + " and " + max + " or equal to " + or);
                }
            });
        }

        /**
         * One of the allowed strings; for a list, each element (Kafka's ValidList names the
         * offending element, not the whole list).
         */
        static Validator in(final String... allowed)
        {
            final List<String> list = Arrays.asList(allowed);
            return described("one of: " + String.join(", ", list), (n, v) ->
            {
                if (v instanceof List<?> values)
                {
                    for (final Object e : values)
                    {
                        if (!list.contains(String.valueOf(e)))
                        {
                            throw new ConfigException(n, e, "String must be one of: " + String.join(", ", list));
                        }
                    }
                }
                else if (v != null && !list.contains(String.valueOf(v)))
                {
                    throw new ConfigException(n, v, "String must be one of: " + String.join(", ", list));
                }
            });
        }
    }

    /**
     * Parses {@code text} to this key's type and validates it.
     *
     * @throws ConfigException naming this key
     */
    public Object parse(final String text)
    {
        final Object value;
        try
        {
            value = parseRaw(text == null ? null : text.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw new ConfigException(name, text, "Not a number of type " + type);
        }
        validator.check(name, value);
        return value;
    }

    private Object parseRaw(final String t)
    {
        if (t == null)
        {
            return null;
        }
        switch (type)
        {
            case BOOLEAN:
                if (t.equalsIgnoreCase("true") || t.equalsIgnoreCase("false"))
                {
                    return Boolean.parseBoolean(t);
                }
                throw new ConfigException(name, t, "Expected value to be either true or false");
            case INT:
                return Integer.parseInt(t);
            case LONG:
                return Long.parseLong(t);
            case DOUBLE:
                return Double.parseDouble(t);
            case LIST:
                final List<String> list = new ArrayList<>();
                for (final String part : t.split(","))
                {
                    if (!part.isBlank())
                    {
                        list.add(part.trim());
                    }
                }
                return List.copyOf(list);
            default:
                return t;
        }
    }

    public Object defaultParsed()
    {
        return parse(defaultValue);
    }

    /**
     * A parsed value as Kafka prints it (its {@code ConfigDef.convertToString}): a list joined
     * with commas, anything else by {@code toString}, null as null. DescribeConfigs reports
     * values this way, so {@code " 1000 "} is described as {@code 1000} and
     * {@code "compact, delete"} as {@code compact,delete}.
     */
    public String print(final Object parsed)
    {
        if (parsed == null)
        {
            return null;
        }
        if (parsed instanceof List<?> list)
        {
            final StringBuilder b = new StringBuilder();
            for (final Object e : list)
            {
                if (b.length() > 0)
                {
                    b.append(',');
                }
                b.append(e);
            }
            return b.toString();
        }
        return parsed.toString();
    }

    /**
     * {@code text} parsed and printed back ({@link #print}).
     *
     * @throws ConfigException when it is not a valid value of this key
     */
    public String canonical(final String text)
    {
        return print(parse(text));
    }
}
