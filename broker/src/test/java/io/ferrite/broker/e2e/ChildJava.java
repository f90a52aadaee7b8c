package io.ferrite.broker.e2e;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code java} command line of the child JVMs that run this module's own main classes ({@code ferrite-server} as
 * {@link ServerCommand} runs it, {@code ferrite-stat}): the test JVM's class path and the start script's module option,
 * and for a child that lives a second or two ({@link #SHORT_LIVED}: a start expected to be refused, one {@code
 * ferrite-stat --once}) {@code -XX:TieredStopAtLevel=1}, the client compiler alone: the server compiler's work for such
 * a child is thrown away at its exit, on two cores the test JVMs share. That changes how soon it is done, never what it
 * does. Measured 2026-12-07 (build17, load 27 to 54, 8 runs each, median CPU of the child): a {@code ferrite-stat --once}
 * 0.87 s, 0.65 s with it; a refused start 0.19 s, 0.17 s.
 *
 * <p>Never for a broker that serves ({@link #SERVING}): it runs as production runs, with the server compiler's escape
 * analysis (without it its request paths allocate what production's do not, which a child's GC log, read by
 * DirectMemoryBudgetTest, would show) and at production's speed, which the crash tests' windows were set against.
 * A class-data archive of the test class path's jars (the broker's own classes are a directory there, which the JDK
 * cannot archive) saved 0.07 s of a {@code ferrite-stat} and cost 0.05 s of a refused start, for a 3 s dump: left out.
 * {@code -Dferrite.test.shortLivedC1=false} starts the short-lived children as the serving ones (to measure this).
 */
final class ChildJava
{
    /** A child that ends within a second or two: the client compiler alone. */
    static final boolean SHORT_LIVED = true;
    /** A child that serves (a broker): the JVM's default compilers, as production runs. */
    static final boolean SERVING = false;

    private static final boolean SHORT_LIVED_C1 = Boolean.parseBoolean(System.getProperty("ferrite.test.shortLivedC1", "true"));

    private ChildJava()
    {
    }

    /** {@code java [options] -cp <the test JVM's class path> mainClass}: the main class's arguments go after it. */
    static List<String> command(final boolean shortLived, final String mainClass)
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (shortLived && SHORT_LIVED_C1)
        {
            command.add("-XX:TieredStopAtLevel=1");
        }
        command.addAll(List.of("--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp",
            System.getProperty("java.class.path"), mainClass));
        return command;
    }
}
