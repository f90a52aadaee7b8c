package io.ferrite.broker.e2e;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code ferrite-server} as a user runs it: a child JVM with the start script's main class and
 * options, without {@code -ea} (as production runs). Its standard error goes to a file so that a
 * test can read everything the user would have seen.
 */
final class ServerCommand
{
    private static final int KEPT_LINES = 1_000;
    private static final Pattern LISTENING = Pattern.compile("Ferrite listening on PLAINTEXT://127\\.0\\.0\\.1:(\\d+)");

    /** A process that ended by itself: its exit status and what it wrote. */
    record Ended(int exit, List<String> stdout, String stderr)
    {
        /** The lines of standard error that say something. */
        List<String> stderrLines()
        {
            final List<String> lines = new ArrayList<>();
            for (final String line : stderr.split("\n"))
            {
                if (!line.isBlank())
                {
                    lines.add(line);
                }
            }
            return lines;
        }
    }

    /**
     * A server that said where it listens (its {@code listening} line); {@link #stop} ends it with SIGTERM. Its later lines
     * of standard output are kept in {@code stdout} (the first 1 000 kept; the rest are read and dropped).
     */
    record Running(Process process, int port, Path stderrFile, String listening, BlockingQueue<String> stdout)
    {
        String stderr() throws IOException
        {
            return Files.readString(stderrFile, StandardCharsets.UTF_8);
        }

        /** The next kept line of standard output that starts with {@code prefix} (earlier ones skipped), within {@code bound}. */
        String awaitLine(final String prefix, final Duration bound) throws InterruptedException
        {
            final long deadline = System.nanoTime() + bound.toNanos();
            for (long left = bound.toNanos(); left > 0; left = deadline - System.nanoTime())
            {
                final String line = stdout.poll(left, TimeUnit.NANOSECONDS);
                if (line != null && line.startsWith(prefix))
                {
                    return line;
                }
            }
            throw new AssertionError("no line starting with \"" + prefix + "\" on the server's standard output within " + bound
                + (process.isAlive() ? "" : " (exited " + process.exitValue() + ")"));
        }

        int stop() throws InterruptedException
        {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
                process.waitFor(30, TimeUnit.SECONDS);
                return -1;
            }
            return process.exitValue();
        }
    }

    private ServerCommand()
    {
    }

    /**
     * The server's JVM ({@link ChildJava}: the test JVM's class path); {@code shortLived} for a start expected to be
     * refused (the client compiler alone), not for a server that serves.
     */
    private static Process launch(final Path stderrFile, final java.util.Map<String, String> environment, final String mainClass,
        final boolean shortLived, final List<String> args) throws IOException
    {
        final List<String> command = ChildJava.command(shortLived, mainClass);
        command.addAll(args);
        final ProcessBuilder builder = new ProcessBuilder(command).redirectError(stderrFile.toFile()).redirectInput(ProcessBuilder.Redirect.PIPE);
        builder.environment().putAll(environment);
        return builder.start();
    }

    /**
     * Runs the server with {@code args} expecting it to end by itself (a refused start); a server
     * that starts instead is stopped and reported with exit status 0 and its listening line.
     */
    static Ended runToEnd(final Path workDir, final String... args) throws IOException, InterruptedException
    {
        final Path stderrFile = Files.createTempFile(workDir, "stderr", ".txt");
        final Process process = launch(stderrFile, java.util.Map.of(), "io.ferrite.broker.FerriteServer", ChildJava.SHORT_LIVED,
            List.of(args));
        final List<String> stdout = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while ((line = out.readLine()) != null) // ends when the process ends, or when it says it listens
            {
                stdout.add(line);
                if (LISTENING.matcher(line).find())
                {
                    process.destroy();
                    break;
                }
            }
        }
        if (!process.waitFor(60, TimeUnit.SECONDS))
        {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
            throw new IllegalStateException("the server neither started nor ended within 60 s: " + stdout);
        }
        return new Ended(process.exitValue(), stdout, Files.readString(stderrFile, StandardCharsets.UTF_8));
    }

    /** Runs the server with {@code args} and waits until it says where it listens. */
    static Running start(final Path workDir, final String... args) throws IOException, InterruptedException
    {
        return start(workDir, java.util.Map.of(), args);
    }

    /** {@link #start(Path, String...)} with {@code environment} added to the child's (LD_PRELOAD, say). */
    static Running start(final Path workDir, final java.util.Map<String, String> environment, final String... args)
        throws IOException, InterruptedException
    {
        return startMain(workDir, environment, "io.ferrite.broker.FerriteServer", args);
    }

    /** {@link #start(Path, java.util.Map, String...)} of another main class that says where it listens as the server does. */
    static Running startMain(final Path workDir, final java.util.Map<String, String> environment, final String mainClass,
        final String... args) throws IOException, InterruptedException
    {
        final Path stderrFile = Files.createTempFile(workDir, "stderr", ".txt");
        final Process process = launch(stderrFile, environment, mainClass, ChildJava.SERVING, List.of(args));
        final BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = out.readLine()) != null)
        {
            final Matcher m = LISTENING.matcher(line);
            if (m.find())
            {
                final int port = Integer.parseInt(m.group(1));
                // keep draining standard output so that the server never blocks on a full pipe
                final BlockingQueue<String> kept = new LinkedBlockingQueue<>(KEPT_LINES);
                final Thread drain = new Thread(() ->
                {
                    try (out)
                    {
                        String next;
                        while ((next = out.readLine()) != null)
                        {
                            kept.offer(next); // dropped once full: only a stepped child's few lines are awaited
                        }
                    }
                    catch (final IOException ignored)
                    {
                        // the process ended
                    }
                }, "server-stdout");
                drain.setDaemon(true);
                drain.start();
                return new Running(process, port, stderrFile, line, kept);
            }
        }
        process.waitFor(30, TimeUnit.SECONDS);
        throw new IllegalStateException("the server ended without saying where it listens, exit "
            + (process.isAlive() ? "none" : process.exitValue()) + ", stderr: " + Files.readString(stderrFile, StandardCharsets.UTF_8));
    }
}
