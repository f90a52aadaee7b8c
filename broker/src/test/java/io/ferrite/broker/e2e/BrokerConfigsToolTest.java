package io.ferrite.broker.e2e;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code kafka-configs.sh --entity-type brokers} (Kafka 4.4's ConfigCommand, in a child JVM) against a running broker:
 * {@code --alter --add-config}, {@code --describe} and {@code --delete-config} for this node and for
 * {@code --entity-default}, printing what a real Kafka 4.4 prints for the same commands (taken from one), and a
 * config that cannot change at run time refused with Kafka's exception, the tool exiting 1.
 */
class BrokerConfigsToolTest
{
    @TempDir
    Path dir;

    /** What the tool printed and its exit status. */
    private record Run(int status, String out, String err)
    {
        List<String> lines()
        {
            return out.lines().filter(l -> !l.startsWith("SLF4J")).toList();
        }
    }

    @Test
    void alterDescribeAndDeleteAsKafka() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); ConfigsTool tool = new ConfigsTool(broker))
        {
            Run run = tool.run("--entity-type", "brokers", "--entity-name", "1", "--alter", "--add-config",
                "log.cleaner.threads=2,log.retention.ms=600000");
            assertEquals(List.of("Completed updating config for broker 1."), run.lines(), run.err());
            run = tool.run("--entity-type", "brokers", "--entity-default", "--alter", "--add-config",
                "log.cleaner.io.max.bytes.per.second=1000000,log.segment.bytes=2000000");
            assertEquals(List.of("Completed updating default config for brokers in the cluster."), run.lines(), run.err());

            run = tool.run("--entity-type", "brokers", "--entity-name", "1", "--describe");
            assertEquals(List.of("Dynamic configs for broker 1 are:",
                "  log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.cleaner.threads=2, "
                    + "DEFAULT_CONFIG:log.cleaner.threads=1}",
                "  log.retention.ms=600000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=600000, "
                    + "DEFAULT_CONFIG:log.retention.hours=168}"), run.lines(), run.err());
            run = tool.run("--entity-type", "brokers", "--entity-default", "--describe");
            assertEquals(List.of("Default configs for brokers in the cluster are:",
                "  log.cleaner.io.max.bytes.per.second=1000000 sensitive=false "
                    + "synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.io.max.bytes.per.second=1000000}",
                "  log.segment.bytes=2000000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.segment.bytes=2000000}"),
                run.lines(), run.err());
            run = tool.run("--entity-type", "brokers", "--entity-name", "1", "--describe", "--all");
            assertTrue(run.lines().contains("  log.segment.bytes=2000000 sensitive=false "
                + "synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.segment.bytes=2000000, DEFAULT_CONFIG:log.segment.bytes=1073741824}"),
                run.out());
            assertTrue(run.lines().contains("  log.cleaner.io.max.bytes.per.second=1000000.0 sensitive=false "
                + "synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.io.max.bytes.per.second=1000000, "
                + "DEFAULT_CONFIG:log.cleaner.io.max.bytes.per.second=1.7976931348623157E308}"), run.out());

            run = tool.run("--entity-type", "brokers", "--entity-name", "1", "--alter", "--add-config", "num.partitions=3");
            assertEquals(1, run.status(), run.out());
            assertTrue(run.err().contains("InvalidRequestException: Cannot update these configs dynamically: [num.partitions]"), run.err());

            run = tool.run("--entity-type", "brokers", "--entity-name", "1", "--alter", "--delete-config",
                "log.cleaner.threads,log.retention.ms");
            assertEquals(List.of("Completed updating config for broker 1."), run.lines(), run.err());
            run = tool.run("--entity-type", "brokers", "--entity-name", "1", "--describe");
            assertEquals(List.of("Dynamic configs for broker 1 are:"), run.lines(), run.err());
        }
    }

    /**
     * kafka-configs.sh with {@code args} after {@code --bootstrap-server}, in a child JVM (the test class path and
     * {@code target/configs-tool.classpath}) that runs one command per line ({@link ConfigCommandChild}), started once
     * for the test: each command's output and exit status.
     */
    private static final class ConfigsTool implements AutoCloseable
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
}
