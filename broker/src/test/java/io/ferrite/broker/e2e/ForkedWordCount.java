package io.ferrite.broker.e2e;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * {@link WordCountApplication} in a child JVM, so that it can be killed with SIGKILL mid-transaction. The child
 * prints {@code STATE <state>} at each state change of its Kafka Streams client, read here; its log (WARN and
 * above) goes to a file. Kafka Streams and RocksDB are on the child's class path only (the build writes them to
 * {@code target/streams.classpath}): the test JVM never loads them.
 */
final class ForkedWordCount
{
    /** By name: a class literal would have this JVM load a class whose code refers to Kafka Streams. */
    private static final String MAIN = "io.ferrite.broker.e2e.WordCountApplication";

    private final Process process;
    private final Path log;
    private volatile String state = "NONE";
    private volatile boolean failed;

    private ForkedWordCount(final Process process, final Path log)
    {
        this.process = process;
        this.log = log;
        final Thread reader = new Thread(this::read, "word-count-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts the word count as {@code applicationId} with its state under {@code stateDir} (kept across
     * restarts, as a restarted instance keeps its disk) and {@code guarantee} as processing.guarantee.
     */
    static ForkedWordCount start(final String bootstrap, final String applicationId, final String input, final String output,
        final Path stateDir, final String guarantee, final Path log) throws IOException
    {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final String streams = Files.readString(Path.of("target", "streams.classpath")).strip();
        final Process process = new ProcessBuilder(java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp",
            System.getProperty("java.class.path") + File.pathSeparator + streams, MAIN, bootstrap, applicationId, input, output,
            stateDir.toString(), guarantee)
            .redirectError(log.toFile())
            .start();
        return new ForkedWordCount(process, log);
    }

    private void read()
    {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while ((line = in.readLine()) != null)
            {
                if (line.startsWith("STATE "))
                {
                    state = line.substring("STATE ".length());
                }
                else if (line.startsWith("FAILED "))
                {
                    failed = true;
                }
            }
        }
        catch (final IOException ex)
        {
            // the process was killed
        }
    }

    /** Its last state as it printed it (RUNNING, REBALANCING, ...), or NONE before the first. */
    String state()
    {
        return state;
    }

    /** Whether it ended or failed by itself (before {@link #stop}: after it, it has ended). */
    boolean failed()
    {
        return failed || "ERROR".equals(state) || "PENDING_ERROR".equals(state) || !process.isAlive();
    }

    Path log()
    {
        return log;
    }

    /** SIGKILL: no commit, no abort, no LeaveGroup; its open transaction is left to the broker. */
    void kill() throws InterruptedException
    {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS))
        {
            throw new IllegalStateException("the word count did not die");
        }
    }

    /** SIGTERM: Kafka Streams closes cleanly and leaves the group (its shutdown hook); returns once the process has ended. */
    void stop() throws InterruptedException
    {
        // through the process handle: Process.destroy would also close the child's standard input, and the child
        // halts when that closes (ChildJvm.haltWithParent), before its shutdown hook could close Kafka Streams
        process.toHandle().destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS))
        {
            throw new IllegalStateException("the word count did not end within 60 s of SIGTERM");
        }
    }

    void close() throws InterruptedException
    {
        if (process.isAlive())
        {
            kill();
        }
    }
}
