package io.ferrite.codegen;

import java.util.Locale;

/** Naming rules shared by the generators and the tests that check them. */
public final class Names
{
    private Names()
    {
    }

    public static String lowerFirst(final String name)
    {
        return Character.toLowerCase(name.charAt(0)) + name.substring(1);
    }

    public static String upperFirst(final String name)
    {
        return Character.toUpperCase(name.charAt(0)) + name.substring(1);
    }

    /** {@code OffsetForLeaderEpoch} to {@code OFFSET_FOR_LEADER_EPOCH}. */
    public static String upperSnake(final String name)
    {
        final StringBuilder sb = new StringBuilder();
        for (int i = 0; i < name.length(); i++)
        {
            final char c = name.charAt(i);
            if (i > 0 && Character.isUpperCase(c) &&
                (Character.isLowerCase(name.charAt(i - 1)) ||
                    (i + 1 < name.length() && Character.isLowerCase(name.charAt(i + 1)))))
            {
                sb.append('_');
            }
            sb.append(c);
        }
        return sb.toString().toUpperCase(Locale.ROOT);
    }
}
