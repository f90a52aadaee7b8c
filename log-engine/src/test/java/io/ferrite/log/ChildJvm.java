package io.ferrite.log;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Runs a race in a child JVM, so that a crash there (SIGSEGV or SIGBUS on an unmapped page) shows as
 * a non-zero exit and a failed test, not as a dead build: the child gets this JVM's class path and
 * assertion setting (the {@code -da} run must cover production's case), Agrona's opens, and writes
 * any crash report into {@code errorDir}. A child that runs longer than five minutes is killed.
 */
final class ChildJvm
{
    /** What the child printed (lines of progress, SLF4J's and INFO lines left out) and how it ended. */
    record Result(int exitCode, List<String> output)
    {
        String report(final long seed)
        {
            return "seed " + seed + ", child exit " + exitCode + ":\n" + String.join("\n", output);
        }
    }

    private ChildJvm()
    {
    }

    /** One round of a child's race: what went wrong, or null. */
    interface Round
    {
        String run(int round) throws Exception;
    }

    /**
     * The child's side: runs the rounds; on the first failure prints {@code FAIL round <n>: <why>} and
     * exits 1, else prints {@code DONE}.
     */
    static void runRounds(final int rounds, final Round round) throws Exception
    {
        for (int i = 0; i < rounds; i++)
        {
            final String failure = round.run(i);
            if (failure != null)
            {
                System.out.println("FAIL round " + i + ": " + failure);
                System.out.flush();
                System.exit(1);
            }
        }
        System.out.println("DONE");
        System.out.flush();
    }

    static Result run(final Class<?> main, final Path errorDir, final List<String> jvmOptions, final String... args)
        throws IOException, InterruptedException
    {
        return run(main, errorDir, jvmOptions, Map.of(), args);
    }

    /** {@link #run(Class, Path, List, String...)} with {@code environment} added to the child's (an LD_PRELOAD). */
    static Result run(final Class<?> main, final Path errorDir, final List<String> jvmOptions,
        final Map<String, String> environment, final String... args) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add(ChildJvm.class.desiredAssertionStatus() ? "-ea" : "-da");
        command.add("--add-opens");
        command.add("java.base/jdk.internal.misc=ALL-UNNAMED");
        command.add("-XX:ErrorFile=" + errorDir.resolve("hs_err_pid%p.log")); // a crash report stays out of the module
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(main.getName());
        command.addAll(List.of(args));
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(environment);
        final Process child = builder.start();
        final Thread watchdog = new Thread(() ->
        {
            try
            {
                if (!child.waitFor(5, TimeUnit.MINUTES))
                {
                    child.destroyForcibly(); // a hung child: its output then ends without DONE
                }
            }
            catch (final InterruptedException ignored)
            {
                child.destroyForcibly();
            }
        });
        watchdog.setDaemon(true);
        watchdog.start();
        final List<String> output = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while ((line = out.readLine()) != null)
            {
                if (!line.startsWith("ROUND ") && !line.contains("SLF4J") && !line.contains(" INFO "))
                {
                    output.add(line);
                }
            }
            if (!child.waitFor(60, TimeUnit.SECONDS))
            {
                output.add("(the child ended its output but not its process)");
            }
        }
        finally
        {
            child.destroyForcibly();
        }
        return new Result(child.waitFor(), output);
    }

    /**
     * A directory on tmpfs when there is one: there fsync costs nothing, so a close reaches its
     * unmapping within microseconds of its start, while the other side of the race is still at work.
     * {@code null} when there is none ({@link #deleteRecursively} it afterwards).
     */
    static Path shmDir(final String prefix) throws IOException
    {
        final Path shm = Path.of("/dev/shm");
        if (Files.isDirectory(shm) && Files.isWritable(shm))
        {
            return Files.createTempDirectory(shm, prefix);
        }
        return null;
    }

    static void deleteRecursively(final Path dir) throws IOException
    {
        if (dir == null || !Files.exists(dir))
        {
            return;
        }
        try (Stream<Path> files = Files.walk(dir))
        {
            for (final Path p : (Iterable<Path>)files.sorted(Comparator.reverseOrder())::iterator)
            {
                Files.deleteIfExists(p);
            }
        }
    }
}
