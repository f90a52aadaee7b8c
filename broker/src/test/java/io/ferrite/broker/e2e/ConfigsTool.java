package io.ferrite.broker.e2e;

import io.ferrite.broker.e2e.KafkaTool.Run;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * kafka-configs.sh with {@code args} after {@code --bootstrap-server}, in a child JVM (the test class path and
 * {@code target/configs-tool.classpath}) that runs one command per line ({@link ConfigCommandChild}), started once
 * for the test: each command's output and exit status.
 */
final class ConfigsTool implements AutoCloseable
{
    private final Process child;
    private final java.io.BufferedWriter commands;
    private final java.io.BufferedReader answers;
    private final Path childErr;
    private final String bootstrap;

    ConfigsTool(final RunningBroker broker) throws Exception
    {
        final String classPath = System.getProperty("java.class.path") + File.pathSeparator
            + Files.readString(Path.of("target", "configs-tool.classpath")).strip();
        childErr = Files.createTempFile("configs-tool", ".err");
        child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp", classPath,
            ConfigCommandChild.class.getName()).redirectError(childErr.toFile()).start();
        commands = new java.io.BufferedWriter(new java.io.OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8));
        answers = new java.io.BufferedReader(new java.io.InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        bootstrap = broker.bootstrap();
    }

    Run run(final String... args) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of("--bootstrap-server", bootstrap));
        command.addAll(List.of(args));
        commands.write(String.join("\t", command));
        commands.newLine();
        commands.flush();
        // bounded: a hung command (or child) is killed and reported instead of blocking the read for ever
        final java.util.concurrent.CompletableFuture<String> answer = java.util.concurrent.CompletableFuture.supplyAsync(() ->
        {
            try
            {
                return answers.readLine();
            }
            catch (final java.io.IOException e)
            {
                throw new java.io.UncheckedIOException(e);
            }
        });
        final String line;
        try
        {
            line = answer.get(60, TimeUnit.SECONDS);
        }
        catch (final java.util.concurrent.TimeoutException e)
        {
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("kafka-configs did not end in 60 s: " + command + " " + Files.readString(childErr));
        }
        if (line == null)
        {
            throw new AssertionError("the kafka-configs child ended: " + Files.readString(childErr));
        }
        final String[] parts = line.split("\t", -1);
        final java.util.Base64.Decoder b64 = java.util.Base64.getDecoder();
        return new Run(Integer.parseInt(parts[0]), new String(b64.decode(parts[1]), StandardCharsets.UTF_8),
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
