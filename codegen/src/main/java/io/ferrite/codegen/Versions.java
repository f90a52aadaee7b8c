package io.ferrite.codegen;

/**
 * An inclusive range of protocol versions as the schemas write it: {@code "3+"}, {@code "0-12"},
 * {@code "5"} or {@code "none"}.
 */
public record Versions(short lowest, short highest)
{
    public static final short OPEN_END = Short.MAX_VALUE;
    public static final Versions NONE = new Versions((short)0, (short)-1);
    public static final Versions ALL = new Versions((short)0, OPEN_END);

    public static Versions parse(final String text, final Versions whenMissing)
    {
        if (text == null)
        {
            return whenMissing;
        }
        final String t = text.trim();
        if (t.equals("none"))
        {
            return NONE;
        }
        if (t.endsWith("+"))
        {
            return new Versions(Short.parseShort(t.substring(0, t.length() - 1)), OPEN_END);
        }
        final int dash = t.indexOf('-');
        if (dash > 0)
        {
            return new Versions(Short.parseShort(t.substring(0, dash)), Short.parseShort(t.substring(dash + 1)));
        }
        final short v = Short.parseShort(t);
        return new Versions(v, v);
    }

    public boolean isEmpty()
    {
        return highest < lowest;
    }

    public boolean contains(final int version)
    {
        return version >= lowest && version <= highest;
    }

    public boolean containsAll(final Versions other)
    {
        return other.isEmpty() || (contains(other.lowest) && contains(other.highest));
    }

    public Versions intersect(final Versions other)
    {
        final short lo = (short)Math.max(lowest, other.lowest);
        final short hi = (short)Math.min(highest, other.highest);
        return hi < lo ? NONE : new Versions(lo, hi);
    }

    /**
     * A Java boolean expression over {@code variable} that is true for the versions in this range,
     * simplified knowing the variable only takes values in {@code possible}: {@code "true"},
     * {@code "false"}, {@code "v >= 9"}, {@code "v <= 12"} or {@code "v >= 3 && v <= 12"}.
     */
    public String condition(final String variable, final Versions possible)
    {
        final Versions in = intersect(possible);
        if (in.isEmpty())
        {
            return "false";
        }
        final boolean needLow = in.lowest > possible.lowest;
        final boolean needHigh = in.highest < possible.highest;
        if (needLow && needHigh)
        {
            return in.lowest == in.highest ?
                variable + " == " + in.lowest :
                "(" + variable + " >= " + in.lowest + " && " + variable + " <= " + in.highest + ")";
        }
        if (needLow)
        {
            return variable + " >= " + in.lowest;
        }
        if (needHigh)
        {
            return variable + " <= " + in.highest;
        }
        return "true";
    }

    @Override
    public String toString()
    {
        if (isEmpty())
        {
            return "none";
        }
        if (highest == OPEN_END)
        {
            return lowest + "+";
        }
        return lowest == highest ? Short.toString(lowest) : lowest + "-" + highest;
    }
}
