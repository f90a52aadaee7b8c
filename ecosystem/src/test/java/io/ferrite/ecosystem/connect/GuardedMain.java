package io.ferrite.ecosystem.connect;

import io.ferrite.testing.ChildJvm;

import java.lang.reflect.InvocationTargetException;
import java.util.Arrays;

/**
 * The main class of every child JVM these tests start: halts the JVM when the test JVM that started it goes
 * away ({@link ChildJvm#haltWithParent}), so that no broker or worker outlives its test, then runs
 * {@code args[0]}'s main with the rest of the arguments (FerriteServer, ConnectDistributed, ...).
 */
public final class GuardedMain
{
    private GuardedMain()
    {
    }

    public static void main(final String[] args) throws Throwable
    {
        ChildJvm.haltWithParent();
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
