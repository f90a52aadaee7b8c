package io.ferrite.broker.e2e;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Kafka 4.4's command-line tools run one after another in one child JVM ({@link KafkaToolChild}: the test class path
 * and {@code target/configs-tool.classpath}, as {@link KafkaTool#run} runs each in a JVM of its own), started once for
 * a test: each command's exit status and output, as {@link KafkaTool.Run}. A JVM start of Kafka's tools class path
 * took 1.5-2 s of a quiet two-core machine's build each time; the commands of a test share one.
 */
final class KafkaToolSession implements AutoCloseable
{
    private static final int COMMAND_SECONDS = 90;

    private final Process child;
    private final BufferedWriter commands;
    private final BufferedReader answers;
    private final Path childErr;

    KafkaToolSession() throws IOException
    {
        final String classPath = System.getProperty("java.class.path") + File.pathSeparator
            + Files.readString(Path.of("target", "configs-tool.classpath")).strip();
        childErr = Files.createTempFile("kafka-tools", ".err");
        child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m", "-cp", classPath,
            KafkaToolChild.class.getName()).redirectError(childErr.toFile()).start();
        commands = new BufferedWriter(new OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8));
        answers = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    }

    /** Runs {@code mainClass} with {@code args} in the child, ended (with the child) after 90 s. */
    KafkaTool.Run run(final String mainClass, final String... args) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of(mainClass));
        command.addAll(List.of(args));
        for (final String field : command)
        {
            if (field.isEmpty() || field.contains("\t") || field.contains("\n"))
            {
                throw new IllegalArgumentException("an argument a command line cannot carry: \"" + field + "\" in " + command);
            }
        }
        commands.write(String.join("\t", command));
        commands.newLine();
        commands.flush();
        // bounded: a hung command (or child) is killed and reported instead of blocking the read for ever
        final CompletableFuture<String> answer = CompletableFuture.supplyAsync(() ->
        {
            try
            {
                return answers.readLine();
            }
            catch (final IOException e)
            {
                throw new UncheckedIOException(e);
            }
        });
        final String line;
        try
        {
            line = answer.get(COMMAND_SECONDS, TimeUnit.SECONDS);
        }
        catch (final TimeoutException e)
        {
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError(String.join(" ", command) + " did not end in " + COMMAND_SECONDS + " s: " + Files.readString(childErr));
        }
        if (line == null)
        {
            throw new AssertionError("the Kafka tools' child ended: " + Files.readString(childErr));
        }
        final String[] parts = line.split("\t", -1);
        final Base64.Decoder b64 = Base64.getDecoder();
        return new KafkaTool.Run(Integer.parseInt(parts[0]), new String(b64.decode(parts[1]), StandardCharsets.UTF_8),
            new String(b64.decode(parts[2]), StandardCharsets.UTF_8));
    }

    @Override
    public void close() throws Exception
    {
        commands.close(); // the child ends at the end of its standard input
        if (!child.waitFor(30, TimeUnit.SECONDS))
        {
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        Files.deleteIfExists(childErr);
    }
}
