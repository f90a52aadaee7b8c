package io.ferrite.codegen;

/**
 * One field of a message or struct, as its schema declares it.
 *
 * @param name         the schema name, e.g. {@code PartitionIndex}
 * @param type         its type
 * @param versions     the versions in which the field exists
 * @param nullable     the versions in which it may be null
 * @param tag          the tag of a tagged field, or -1 for a regular field
 * @param defaultValue the schema's default as written ({@code "null"}, {@code "-1"}, ...), or null when none is given
 * @param ignorable    whether a non-default value may be dropped silently in versions without the field
 * @param flexible     the field's own flexible versions where it overrides the message's, else null
 * @param struct       the struct this field defines inline, else null
 */
public record FieldSpec(
    String name,
    FieldType type,
    Versions versions,
    Versions nullable,
    int tag,
    String defaultValue,
    boolean ignorable,
    Versions flexible,
    StructSpec struct,
    String about)
{
    public boolean isTagged()
    {
        return tag >= 0;
    }

    /** Kafka's JSON and accessor name: the schema name with its first letter in lower case. */
    public String camelName()
    {
        return Names.lowerFirst(name);
    }

    public boolean defaultIsNull()
    {
        return "null".equals(defaultValue);
    }

    /** The versions of {@code possible} in which this field is on the wire (regular or tagged). */
    public Versions presentIn(final Versions possible, final Versions messageFlexible)
    {
        final Versions in = versions.intersect(possible);
        return isTagged() ? in.intersect(messageFlexible) : in;
    }

    /** The versions in which a string/bytes/array prefix of this field is compact (unsigned varint). */
    public Versions compactIn(final Versions messageFlexible)
    {
        return flexible != null ? flexible : messageFlexible;
    }

    /**
     * The Java literal of the default value of a fixed-size field, as Kafka's generated classes
     * interpret the schema: missing means zero/false; decimal or {@code 0x} hexadecimal numbers.
     */
    public String defaultLiteral()
    {
        final String d = defaultValue == null || defaultValue.isEmpty() ? null : defaultValue.trim();
        switch (type.kind())
        {
            case BOOL:
                return d == null ? "false" : Boolean.toString(Boolean.parseBoolean(d));
            case INT8:
                return "(byte)" + (d == null ? 0 : parseLong(d, Byte.MIN_VALUE, Byte.MAX_VALUE));
            case INT16:
                return "(short)" + (d == null ? 0 : parseLong(d, Short.MIN_VALUE, Short.MAX_VALUE));
            case UINT16:
                return Long.toString(d == null ? 0 : parseLong(d, 0, 65535));
            case INT32:
                return Long.toString(d == null ? 0 : parseLong(d, Integer.MIN_VALUE, Integer.MAX_VALUE));
            case UINT32:
                return (d == null ? 0 : parseLong(d, 0, 0xFFFFFFFFL)) + "L";
            case INT64:
                return (d == null ? 0 : parseLong(d, Long.MIN_VALUE, Long.MAX_VALUE)) + "L";
            case FLOAT64:
                return d == null ? "0.0" : Double.toString(Double.parseDouble(d));
            default:
                throw new IllegalStateException("no literal default for " + type + " field " + name);
        }
    }

    private long parseLong(final String d, final long min, final long max)
    {
        final long value = d.startsWith("0x") || d.startsWith("0X") ?
            Long.parseLong(d.substring(2), 16) : Long.parseLong(d);
        if (value < min || value > max)
        {
            throw new IllegalArgumentException("default " + d + " of " + name + " out of range");
        }
        return value;
    }
}
