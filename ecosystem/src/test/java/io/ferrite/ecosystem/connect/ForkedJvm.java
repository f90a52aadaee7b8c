package io.ferrite.ecosystem.connect;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM on this test JVM's class path ({@link GuardedMain} running {@code mainClass}), its standard output
 * and error in one log file. {@link #kill} is SIGKILL: no shutdown hook, no flush, no goodbye to the broker.
 */
final class ForkedJvm implements AutoCloseable
{
    private final String name;
    private final Process process;
    private final Path log;

    private ForkedJvm(final String name, final Process process, final Path log)
    {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    static ForkedJvm start(final String name, final Path log, final List<String> jvmOptions, final String mainClass, final List<String> args)
        throws IOException
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), GuardedMain.class.getName(), mainClass));
        command.addAll(args);
        Files.createDirectories(log.toAbsolutePath().getParent());
        // standard input stays a pipe that this JVM never closes: GuardedMain halts the child when it closes
        final Process process = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        return new ForkedJvm(name, process, log);
    }

    boolean alive()
    {
        return process.isAlive();
    }

    Path log()
    {
        return log;
    }

    /** What the child wrote, or a note that it could not be read. */
    String output()
    {
        try
        {
            return Files.readString(log, StandardCharsets.UTF_8);
        }
        catch (final IOException ex)
        {
            return "(" + log + " unreadable: " + ex + ")";
        }
    }

    /** The last {@code lines} lines of what the child wrote, for a failure message. */
    String tail(final int lines)
    {
        final List<String> all = output().lines().toList();
        return name + " (" + log + "), last lines:\n" + String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    }

    /** SIGKILL, and wait until the process is gone. */
    void kill() throws InterruptedException
    {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS))
        {
            throw new IllegalStateException(name + " did not die of SIGKILL within 30 s");
        }
    }

    /** SIGTERM (a clean stop through the shutdown hooks); SIGKILL if it has not ended within 30 s. */
    @Override
    public void close() throws InterruptedException
    {
        // through the process handle: Process.destroy would also close the child's standard input, and GuardedMain
        // halts the child when that closes, before its shutdown hooks ran
        process.toHandle().destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS))
        {
            kill();
        }
    }
}
