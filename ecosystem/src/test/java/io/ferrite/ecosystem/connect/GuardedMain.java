package io.ferrite.ecosystem.connect;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.util.Arrays;

/**
 * The main class of every child JVM these tests start: halts the JVM when its standard input closes — when
 * the test JVM that started it goes away, even killed — so that no broker or worker outlives its test, then
 * runs {@code args[0]}'s main with the rest of the arguments (FerriteServer, ConnectDistributed, ...).
 */
public final class GuardedMain
{
    private GuardedMain()
    {
    }

    public static void main(final String[] args) throws Throwable
    {
        final Thread orphanGuard = new Thread(() ->
        {
            try
            {
                while (System.in.read() >= 0)
                {
                    // nothing is ever sent on standard input
                }
            }
            catch (final IOException ex)
            {
                // fall through: the parent is gone
            }
            Runtime.getRuntime().halt(0);
        }, "orphan-guard");
        orphanGuard.setDaemon(true);
        orphanGuard.start();
        try
        {
            Class.forName(args[0]).getMethod("main", String[].class).invoke(null, (Object)Arrays.copyOfRange(args, 1, args.length));
        }
        catch (final InvocationTargetException ex)
        {
            throw ex.getCause();
        }
    }
}
