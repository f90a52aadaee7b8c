package io.ferrite.broker.metrics.jmx;

import io.ferrite.broker.metrics.BrokerCounters;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.testing.ChildJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A query that holds an MBean past {@link KafkaMBeans#close} (a JMX client that found it before the unregister) reads
 * nothing once close returned, not the counters file the broker unmaps right after nor a log it closes: without the
 * closed check the meter reads unmapped memory and the JVM dies (SIGSEGV). In a child JVM, so that such a death is this
 * test's failure and not the surefire fork's.
 */
class KafkaMBeansCloseTest
{
    private static final String TOPIC = "closing";
    private static final String MESSAGES_IN = "kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec";
    private static final String TOPIC_BYTES_IN = MESSAGES_IN.replace("MessagesIn", "BytesIn") + ",topic=" + TOPIC;
    private static final String SIZE = "kafka.log:type=Log,name=Size,topic=" + TOPIC + ",partition=0";

    @TempDir
    Path dir;

    @Test
    void aMeterAndAGaugeKeptPastCloseReadNothingAfterTheCountersAreUnmapped() throws Exception
    {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final Process process = new ProcessBuilder(java, "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:-CreateCoredumpOnCrash",
            "-XX:ErrorFile=" + dir.resolve("hs_err.log"), "-cp", System.getProperty("java.class.path"),
            KafkaMBeansCloseTest.class.getName(), dir.toString())
            .redirectErrorStream(true)
            .start();
        process.getOutputStream().close();
        final List<String> lines = new ArrayList<>();
        final Map<String, String> steps = ChildJvm.steps(process, lines);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "the child ended");
        assertEquals(0, process.exitValue(), "the child's exit status (not 0: it died, e.g. of a SIGSEGV reading the unmapped counters); its output: " + lines);
        assertEquals("1", steps.get("count-open"), "the meter counted while open " + steps);
        assertEquals("100", steps.get("topic-count-open"), steps.toString());
        assertEquals("0", steps.get("count-closed"), "closed: no read of the unmapped counters " + steps);
        assertEquals("0.0", steps.get("mean-rate-closed"), steps.toString());
        assertEquals("0", steps.get("topic-count-closed"), steps.toString());
        assertEquals("null", steps.get("size-closed"), "closed: no read of a closed log " + steps);
    }

    /** The child: a broker's counters, topics and MBeans without its network; one meter and one gauge kept past close. */
    public static void main(final String[] args) throws Exception
    {
        final Path dir = Path.of(args[0]);
        final BrokerCounters counters = BrokerCounters.create(Files.createDirectories(dir.resolve("counters")), 1);
        final LogManager logs = LogManager.open(LogManagerConfig.of(Files.createDirectories(dir.resolve("logs"))));
        final TopicRegistry topics = new TopicRegistry(logs, 1);
        topics.onChange(counters::topicsChanged);
        topics.load();
        topics.create(TOPIC, 1, Map.of());
        counters.network(0).produced(topics.topic(TOPIC).partition(0).counters(), 1, 100);
        final KafkaMBeans beans = KafkaMBeans.register(counters, topics, true);
        final Meter messagesIn = (Meter)beans.bean(MESSAGES_IN);
        final Meter topicBytesIn = (Meter)beans.bean(TOPIC_BYTES_IN);
        final Gauge size = (Gauge)beans.bean(SIZE);
        System.out.println("STEP count-open " + messagesIn.getCount());
        System.out.println("STEP topic-count-open " + topicBytesIn.getCount());
        beans.close();
        counters.close(); // the broker's close unmaps the counters file after the MBeans' close
        logs.close();
        System.out.println("STEP count-closed " + messagesIn.getCount());
        System.out.println("STEP mean-rate-closed " + messagesIn.getMeanRate());
        System.out.println("STEP topic-count-closed " + topicBytesIn.getCount());
        System.out.println("STEP size-closed " + size.getValue());
        System.out.flush();
    }
}
