package io.ferrite.broker.e2e;

import java.io.IOException;

/** What the tests' child JVMs ({@link ForkedMember}, {@link WordCountApplication}) share. */
final class ChildJvm
{
    private ChildJvm()
    {
    }

    /**
     * Halts this JVM when its standard input closes — when the test JVM that started it goes away, even
     * killed — so that no child outlives its test. Nothing is ever sent on standard input.
     */
    static void haltWithParent()
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
