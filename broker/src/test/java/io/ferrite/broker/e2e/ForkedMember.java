package io.ferrite.broker.e2e;

import io.ferrite.testing.ChildJvm;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A group member in a child JVM, so that it can die without a word: {@link #kill()} destroys the process
 * forcibly, no LeaveGroup is sent and its heartbeats just stop, and the coordinator has to notice by
 * session.timeout.ms. The child prints its view of the group ("VIEW generation memberId partitions")
 * every time it changes; this side reads it.
 */
final class ForkedMember implements Members.Member, AutoCloseable
{
    private final String name;
    private final Process process;
    private final Thread reader;
    private volatile Members.View view = Members.View.NONE;
    private volatile Throwable failure;

    private ForkedMember(final String name, final Process process)
    {
        this.name = name;
        this.process = process;
        reader = new Thread(this::read, "forked-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts a child JVM whose consumer joins the group with the given assignor class and session timeout. */
    static ForkedMember start(final RunningBroker broker, final String name, final String group, final String topic,
        final String assignorClass, final int sessionTimeoutMs) throws IOException
    {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final Process process = new ProcessBuilder(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp",
            System.getProperty("java.class.path"), ForkedMember.class.getName(), broker.bootstrap(), group, topic, name,
            assignorClass, Integer.toString(sessionTimeoutMs))
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
        return new ForkedMember(name, process);
    }

    private void read()
    {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while ((line = in.readLine()) != null)
            {
                if (line.startsWith("VIEW "))
                {
                    view = parse(line);
                }
                else if (line.startsWith("FAILED "))
                {
                    failure = new AssertionError(name + " (child JVM): " + line);
                }
            }
        }
        catch (final IOException ex)
        {
            // the process was killed
        }
    }

    static Members.View parse(final String line)
    {
        final String[] parts = line.split(" ", 4);
        final Set<TopicPartition> assignment = parts.length < 4 || parts[3].isEmpty() ? Set.of()
            : Arrays.stream(parts[3].split(",")).map(s ->
            {
                final int dash = s.lastIndexOf('-');
                return new TopicPartition(s.substring(0, dash), Integer.parseInt(s.substring(dash + 1)));
            }).collect(Collectors.toUnmodifiableSet());
        return new Members.View(Integer.parseInt(parts[1]), parts[2], assignment);
    }

    @Override
    public String name()
    {
        return name;
    }

    @Override
    public Members.View view()
    {
        return view;
    }

    @Override
    public Throwable failure()
    {
        return failure;
    }

    /** Kills the child JVM (SIGKILL): its consumer neither leaves the group nor heartbeats again. */
    void kill()
    {
        process.destroyForcibly();
        try
        {
            if (!process.waitFor(20, TimeUnit.SECONDS))
            {
                throw new IllegalStateException(name + " did not die");
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(name + " interrupted while dying", ex);
        }
    }

    @Override
    public void close()
    {
        if (process.isAlive())
        {
            kill();
        }
    }

    /** The child side: args bootstrap group topic clientId assignorClass sessionTimeoutMs. */
    public static void main(final String[] args)
    {
        ChildJvm.haltWithParent();

        final Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        config.put(ConsumerConfig.GROUP_ID_CONFIG, args[1]);
        config.put(ConsumerConfig.CLIENT_ID_CONFIG, args[3]);
        config.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, args[4]);
        config.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, Integer.parseInt(args[5]));
        config.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, Math.min(500, Integer.parseInt(args[5]) / 4));
        config.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config))
        {
            consumer.subscribe(List.of(args[2]));
            String last = "";
            while (true)
            {
                consumer.poll(Duration.ofMillis(100));
                final ConsumerGroupMetadata metadata = consumer.groupMetadata();
                final String line = "VIEW " + metadata.generationId() + " " + metadata.memberId() + " "
                    + consumer.assignment().stream().map(TopicPartition::toString).collect(Collectors.toCollection(TreeSet::new))
                        .stream().collect(Collectors.joining(","));
                if (!line.equals(last))
                {
                    System.out.println(line);
                    System.out.flush();
                    last = line;
                }
            }
        }
        catch (final Throwable ex)
        {
            System.out.println("FAILED " + ex);
            System.out.flush();
            System.exit(1);
        }
    }
}
