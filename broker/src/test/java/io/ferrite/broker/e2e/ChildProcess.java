package io.ferrite.broker.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Another client's command-line tool run as a child process (kcat, node with KafkaJS, python3 with
 * confluent-kafka). A tool that is not installed fails the test naming the package to install (CI's
 * {@code .ci/run} installs them): a test that skipped silently would prove nothing.
 */
final class ChildProcess
{
    private ChildProcess()
    {
    }

    /**
     * Runs {@code command} in {@code workDir} (null: the current one) with {@code input} on its stdin
     * (null: none); returns its output and error output, checked it exited 0 within {@code timeoutSeconds}.
     */
    static String run(final Path workDir, final String input, final int timeoutSeconds, final String needs, final String... command)
        throws IOException, InterruptedException
    {
        final Process process;
        try
        {
            final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            if (workDir != null)
            {
                builder.directory(workDir.toFile());
            }
            process = builder.start();
        }
        catch (final IOException ex)
        {
            throw new IOException(command[0] + " is needed for this test (" + needs + "; .ci/run installs it)", ex);
        }
        if (input != null)
        {
            process.getOutputStream().write(input.getBytes(StandardCharsets.UTF_8));
        }
        process.getOutputStream().close();
        final StringBuilder out = new StringBuilder();
        final Thread reader = new Thread(() ->
        {
            try
            {
                out.append(new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            }
            catch (final IOException ex)
            {
                out.append("(output unreadable: ").append(ex).append(')');
            }
        }, "child-output");
        reader.start();
        final boolean finished = process.waitFor(timeoutSeconds, TimeUnit.SECONDS);
        if (!finished)
        {
            process.destroyForcibly().waitFor();
        }
        reader.join();
        assertTrue(finished, String.join(" ", command) + " did not finish in " + timeoutSeconds + " s:\n" + out);
        assertEquals(0, process.exitValue(), String.join(" ", command) + " failed:\n" + out);
        return out.toString();
    }

    /** The lines of {@code out} that start with {@code prefix}, whitespace removed (the JSON lines the scripts print). */
    static List<String> linesStartingWith(final String out, final String prefix)
    {
        return out.lines().map(l -> l.replaceAll("\\s", "")).filter(l -> l.startsWith(prefix)).toList();
    }
}
