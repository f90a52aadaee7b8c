package io.ferrite.ecosystem.connect;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.ferrite.testing.Await.awaitValue;

/**
 * The broker a test points Kafka's frameworks at: Ferrite in a child JVM (its main class, FerriteServer, as
 * {@code bin/ferrite-server} runs it, without {@code -ea}) on an ephemeral loopback port, or — for finding out
 * what Apache Kafka does in the same test — the broker at {@code -Dferrite.connect.bootstrap=host:port}
 * (Kafka 4.4 from {@code /work/shared/kafka-ref}). A broker kept between runs gets names of this run's own
 * ({@link #suffix}).
 */
final class TestBroker implements AutoCloseable
{
    static final String BOOTSTRAP_PROPERTY = "ferrite.connect.bootstrap";
    private static final Pattern LISTENING = Pattern.compile("Ferrite listening on PLAINTEXT://127\\.0\\.0\\.1:(\\d+)");

    private final ForkedJvm child;
    private final String bootstrap;
    private final String suffix;

    private TestBroker(final ForkedJvm child, final String bootstrap, final String suffix)
    {
        this.child = child;
        this.bootstrap = bootstrap;
        this.suffix = suffix;
    }

    /** Ferrite with its data in {@code dataDir} and its log in {@code log}, or the external broker if one is named. */
    static TestBroker start(final Path dataDir, final Path log) throws IOException
    {
        final String external = System.getProperty(BOOTSTRAP_PROPERTY);
        if (external != null)
        {
            return new TestBroker(null, external, "-" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16));
        }
        final ForkedJvm child = ForkedJvm.start("ferrite", log, List.of("-Xmx512m",
            "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "--add-opens", "java.base/java.nio=ALL-UNNAMED",
            "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "-Dorg.slf4j.simpleLogger.defaultLogLevel=info"),
            "io.ferrite.broker.FerriteServer",
            List.of("--override", "log.dir=" + dataDir, "--override", "listeners=PLAINTEXT://127.0.0.1:0"));
        final Matcher listening = awaitValue(() ->
        {
            if (!child.alive())
            {
                throw new AssertionError("the broker ended at its start: " + child.tail(40));
            }
            return LISTENING.matcher(child.output());
        }, Matcher::find, Duration.ofSeconds(60), () -> "the broker saying where it listens: " + child.tail(20));
        return new TestBroker(child, "127.0.0.1:" + listening.group(1), "");
    }

    String bootstrap()
    {
        return bootstrap;
    }

    /** Appended to every topic, group and connector name: empty on a broker of the test's own. */
    String suffix()
    {
        return suffix;
    }

    /** "Ferrite" or the external broker's address, for what the test prints. */
    String describe()
    {
        return child == null ? "the broker at " + bootstrap : "Ferrite at " + bootstrap;
    }

    @Override
    public void close() throws InterruptedException
    {
        if (child != null)
        {
            child.close();
        }
    }
}
