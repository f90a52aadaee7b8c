package io.ferrite.log.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes a {@code .properties} file as {@link java.util.Properties#store(java.io.Writer, String)} does
 * (same escaping, readable by {@link java.util.Properties#load}), keys sorted, but without the date
 * line {@code store} always adds: formatting that date is the first use of the time zone and
 * locale data in a broker's life, some tens of milliseconds of class loading on its start-up path.
 * Replaced whole and made durable ({@link DurableFile}).
 */
public final class PropertiesFile
{
    private PropertiesFile()
    {
    }

    /** Writes {@code values} to {@code file}, with {@code comment} (one line, or null) first; durable on return. */
    public static void write(final Path file, final Map<String, String> values, final String comment) throws IOException
    {
        DurableFile.write(file, text(values, comment));
    }

    /**
     * Writes a file that does not exist yet, straight under its name and not fsynced: for a new
     * partition's directory, whose creation fsyncs the file and the directory later, several
     * partitions at a time (until then, a crash finds the file complete or the creation unanswered).
     */
    public static void writeNew(final Path file, final Map<String, String> values, final String comment)
        throws IOException
    {
        Files.write(file, text(values, comment), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    }

    private static byte[] text(final Map<String, String> values, final String comment)
    {
        final StringBuilder out = new StringBuilder();
        if (comment != null)
        {
            out.append('#').append(comment).append('\n');
        }
        for (final Map.Entry<String, String> e : new TreeMap<>(values).entrySet())
        {
            escape(out, e.getKey(), true);
            out.append('=');
            escape(out, e.getValue(), false);
            out.append('\n');
        }
        return out.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Properties' escaping for a character stream: backslash, control characters, separators, comment marks, spaces. */
    static void escape(final StringBuilder out, final String s, final boolean key)
    {
        for (int i = 0; i < s.length(); i++)
        {
            final char c = s.charAt(i);
            switch (c)
            {
                case '\\' -> out.append("\\\\");
                case ' ' -> out.append(i == 0 || key ? "\\ " : " ");
                case '\t' -> out.append("\\t");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\f' -> out.append("\\f");
                case '=', ':', '#', '!' -> out.append('\\').append(c);
                default -> out.append(c);
            }
        }
    }
}
