package io.ferrite.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** What the tests' child JVMs (the broker's ForkedMember and WordCountApplication, ecosystem's GuardedMain) share. */
public final class ChildJvm
{
    private ChildJvm()
    {
    }

    /**
     * Reads a child's standard output to its end: its lines {@code STEP name value}, by name (in order); every line is
     * added to {@code lines} (for a failure's message).
     */
    public static Map<String, String> steps(final Process process, final List<String> lines) throws IOException
    {
        final Map<String, String> steps = new LinkedHashMap<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while ((line = out.readLine()) != null)
            {
                lines.add(line);
                final String[] parts = line.split(" ", 3);
                if (parts.length == 3 && parts[0].equals("STEP"))
                {
                    steps.put(parts[1], parts[2]);
                }
            }
        }
        return steps;
    }

    /**
     * Halts this JVM when its standard input closes — when the test JVM that started it goes away, even
     * killed — so that no child outlives its test. Nothing is ever sent on standard input. The parent stops
     * a child with SIGTERM through {@code process.toHandle().destroy()}: {@code Process.destroy()} also closes
     * the child's standard input, and the halt would then overtake the child's shutdown hooks.
     */
    public static void haltWithParent()
    {
        final Thread orphanGuard = new Thread(() ->
        {
            try
            {
                while (System.in.read() >= 0)
                {
                    // nothing is sent on stdin
                }
            }
            catch (final IOException ex)
            {
                // fall through
            }
            Runtime.getRuntime().halt(0);
        }, "orphan-guard");
        orphanGuard.setDaemon(true);
        orphanGuard.start();
    }
}
