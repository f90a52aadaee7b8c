package io.ferrite.testing;

import java.io.IOException;

/** What the tests' child JVMs (the broker's ForkedMember and WordCountApplication, ecosystem's GuardedMain) share. */
public final class ChildJvm
{
    private ChildJvm()
    {
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
