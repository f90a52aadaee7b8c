package io.ferrite.broker.e2e;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One of Kafka 4.4's command-line tools (its main class from kafka-tools, as {@code bin/kafka-*.sh} runs it) in a
 * child JVM on the test class path plus {@code target/configs-tool.classpath}, with its output and error output
 * written to files: a tool that hangs is ended at the deadline and fails the test, never the build's timeout.
 */
final class KafkaTool
{
    /** What the tool printed and its exit status. */
    record Run(int status, String out, String err)
    {
        /** Its output lines, without SLF4J's notes (Kafka's tools log through SLF4J 1.x, absent here). */
        List<String> lines()
        {
            return out.lines().filter(l -> !l.startsWith("SLF4J")).toList();
        }

        @Override
        public String toString()
        {
            return "exit " + status + "\n--- out\n" + out + "--- err\n" + err;
        }
    }

    private KafkaTool()
    {
    }

    /** Runs {@code mainClass} with {@code args} and {@code input} on its stdin (null: none), ended after {@code seconds}. */
    static Run run(final int seconds, final String input, final String mainClass, final String... args)
        throws IOException, InterruptedException
    {
        final String classPath = System.getProperty("java.class.path") + File.pathSeparator
            + Files.readString(Path.of("target", "configs-tool.classpath")).strip();
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m", "-cp", classPath, mainClass));
        command.addAll(List.of(args));
        final Path in = Files.createTempFile("kafka-tool", ".in");
        final Path out = Files.createTempFile("kafka-tool", ".out");
        final Path err = Files.createTempFile("kafka-tool", ".err");
        try
        {
            Files.writeString(in, input == null ? "" : input);
            final Process p = new ProcessBuilder(command).redirectInput(in.toFile()).redirectOutput(out.toFile())
                .redirectError(err.toFile()).start();
            if (!p.waitFor(seconds, TimeUnit.SECONDS))
            {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError(mainClass + " " + String.join(" ", args) + " did not end in " + seconds + " s:\n"
                    + Files.readString(out) + Files.readString(err));
            }
            return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err));
        }
        finally
        {
            Files.deleteIfExists(in);
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }
}
