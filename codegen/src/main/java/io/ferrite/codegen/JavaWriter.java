package io.ferrite.codegen;

/** Accumulates Java source with indentation; {@code line()} takes format arguments. */
final class JavaWriter
{
    private final StringBuilder sb = new StringBuilder(64 * 1024);
    private int indent;

    JavaWriter line(final String format, final Object... args)
    {
        final String text = args.length == 0 ? format : String.format(format, args);
        if (text.startsWith("}"))
        {
            indent--;
        }
        if (!text.isEmpty())
        {
            sb.append("    ".repeat(Math.max(indent, 0)));
        }
        sb.append(text).append('\n');
        if (text.endsWith("{"))
        {
            indent++;
        }
        return this;
    }

    JavaWriter blank()
    {
        sb.append('\n');
        return this;
    }

    /** A javadoc comment of one paragraph. */
    JavaWriter doc(final String text)
    {
        if (text != null && !text.isBlank())
        {
            line("/** %s */", text.replace("*/", "* /").replace("%", "%%").replace("\n", " "));
        }
        return this;
    }

    @Override
    public String toString()
    {
        return sb.toString();
    }
}
