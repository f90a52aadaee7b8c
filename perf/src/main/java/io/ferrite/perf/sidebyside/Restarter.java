package io.ferrite.perf.sidebyside;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Stops a {@link BrokerProcess} and starts it again on the same data directory and ports: the same
 * command line as the first start (read back from /proc, so Kafka and Ferrite restart exactly as
 * {@link BrokerProcess} launched them), its output appended to the same broker.log. The broker's
 * own {@link BrokerProcess#close} still removes the directory; {@link #stop} ends a restarted
 * process first.
 */
final class Restarter
{
    private final BrokerProcess broker;
    private final List<String> command;
    private Process current;
    private long logOffsetAtStart;

    Restarter(final BrokerProcess broker, final List<String> command)
    {
        this.broker = broker;
        this.command = command;
        this.current = broker.process;
    }

    long pid()
    {
        return current.pid();
    }

    boolean alive()
    {
        return current.isAlive();
    }

    /** SIGKILL or SIGTERM, then waits for the exit: {ms to exit, exit code}; exit code -2 when it had to be killed after the timeout. */
    long[] stopWith(final boolean kill, final int timeoutSeconds) throws InterruptedException
    {
        final long start = System.nanoTime();
        if (!current.isAlive())
        {
            return new long[] {-1, current.exitValue()}; // nothing to stop: -1, not a stop that took no time
        }
        if (kill)
        {
            current.destroyForcibly(); // SIGKILL on Linux
        }
        else
        {
            current.destroy(); // SIGTERM: both brokers shut down cleanly on it
        }
        if (!current.waitFor(timeoutSeconds, TimeUnit.SECONDS))
        {
            current.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            return new long[] {TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), -2};
        }
        return new long[] {TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), current.exitValue()};
    }

    /** Starts the broker again; answers the spawn time (nanoTime). */
    long start() throws IOException
    {
        logOffsetAtStart = Files.size(broker.dir.resolve("broker.log"));
        final long spawned = System.nanoTime();
        final Process p = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(broker.dir.resolve("broker.log").toFile())).start();
        Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly, "stop-restarted-" + broker.kind.name().toLowerCase()));
        current = p;
        return spawned;
    }

    String logTail(final int lines)
    {
        return broker.logTail(lines);
    }

    /** Why the last start went wrong: its exit code (or "running") and the first error lines it logged. */
    String startFailure(final int maxLines)
    {
        final StringBuilder out = new StringBuilder(current.isAlive() ? "still running" : "exited with code " + current.exitValue());
        try
        {
            final byte[] all = Files.readAllBytes(broker.dir.resolve("broker.log"));
            final String since = new String(all, (int) Math.min(all.length, logOffsetAtStart),
                (int) Math.max(0, all.length - logOffsetAtStart), StandardCharsets.UTF_8);
            int n = 0;
            for (final String line : since.split("\n"))
            {
                // the exception's own line and its causes, not the stack frames under them
                if (n < maxLines && (line.contains("ERROR") || line.contains("Exception") || line.startsWith("Caused by")))
                {
                    out.append("\n").append(line);
                    n++;
                }
            }
        }
        catch (final IOException ex)
        {
            out.append(" (no log: ").append(ex).append(')');
        }
        return out.toString();
    }

    /** Ends a restarted broker (SIGTERM, then SIGKILL after 60 s); the first one is ended by {@link BrokerProcess#close}. */
    void stop() throws InterruptedException
    {
        if (current != broker.process && current.isAlive())
        {
            current.destroy();
            if (!current.waitFor(60, TimeUnit.SECONDS))
            {
                current.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
