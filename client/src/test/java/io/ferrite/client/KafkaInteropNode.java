package io.ferrite.client;

import io.ferrite.testing.BrokerNode;
import io.ferrite.testing.DroppingProxy;
import io.ferrite.testing.TestInternalTopics;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The Apache Kafka 4.4 node of {@link KafkaInteropTest}, spawned as soon as a test plan that holds that class starts,
 * so that Kafka's format and start (10-30 s of a two-core machine) run while the classes before it run (the client's
 * surefire runs its classes in alphabetical order: {@link FerriteInteropTest} first); the class then waits until the
 * node answers. Registered as a JUnit Platform listener (META-INF/services); a plan without the class starts nothing.
 * The node's directory ({@code target/kafka-interop-*}, its {@code broker.log} inside) is deleted when the plan ends
 * unless a test of the class failed. The node serves all of the client's cases against Kafka, those of
 * {@link IdempotentRetriesContract} too, whose {@link DroppingProxy} (started here, before the node) is in front of the
 * node's second listener, which advertises the proxy: one Kafka start for the module instead of one per class.
 */
public final class KafkaInteropNode implements TestExecutionListener
{
    /**
     * Kafka's time retention runs every 100 ms from the start (its defaults: first after 30 s, then every 5 min), so
     * records the broker would delete by {@code retention.ms} before the consumer reads them fail every case, not
     * the one that happens to be running 30 s after the start. Its internal topics have the test brokers' partition
     * counts ({@link TestInternalTopics}), as the Ferrite of {@link FerriteInteropTest}'s.
     */
    private static final Map<String, String> CONFIG = Map.copyOf(TestInternalTopics.withTestCounts(
        Map.of("log.initial.task.delay.ms", "0", "log.retention.check.interval.ms", "100")));

    private static BrokerNode node;
    private static DroppingProxy proxy;
    private static Path dir;
    private static boolean failed;

    /** The node, spawned now if the plan's start did not (the class run by a launcher without this listener). */
    static synchronized BrokerNode take() throws IOException, InterruptedException
    {
        if (node == null)
        {
            spawn();
        }
        return node;
    }

    /** The proxy in front of the node's second listener, which advertises it (after {@link #take}). */
    static synchronized DroppingProxy proxy()
    {
        return proxy;
    }

    /** Stops the node and its proxy (its directory stays until the plan ends). */
    static synchronized void stop() throws InterruptedException
    {
        if (node != null)
        {
            final BrokerNode stopping = node;
            node = null;
            stopping.close();
        }
        if (proxy != null)
        {
            try
            {
                proxy.close();
            }
            catch (final IOException e)
            {
                System.err.println("could not close the proxy: " + e);
            }
            proxy = null;
        }
    }

    private static void spawn() throws IOException, InterruptedException
    {
        dir = Files.createDirectories(Path.of("target")).resolve("kafka-interop-" + ProcessHandle.current().pid() + "-" + System.nanoTime());
        if (proxy == null)
        {
            proxy = IdempotentRetriesContract.newProxy();
        }
        node = BrokerNode.spawnWithProxiedListener("kafka", dir.resolve("kafka"), CONFIG, proxy.port());
        proxy.target(node.proxiedPort());
    }

    @Override
    public void testPlanExecutionStarted(final TestPlan plan)
    {
        final boolean holdsTheClass = plan.getRoots().stream().flatMap(root -> plan.getDescendants(root).stream())
            .anyMatch(KafkaInteropNode::ofTheClass);
        if (holdsTheClass)
        {
            synchronized (KafkaInteropNode.class)
            {
                try
                {
                    spawn();
                }
                catch (final IOException | InterruptedException e)
                {
                    node = null; // take() spawns again and fails the class with the cause
                    if (e instanceof InterruptedException)
                    {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        }
    }

    @Override
    public void executionFinished(final TestIdentifier id, final TestExecutionResult result)
    {
        if (result.getStatus() != TestExecutionResult.Status.SUCCESSFUL && ofTheClass(id))
        {
            synchronized (KafkaInteropNode.class)
            {
                failed = true;
            }
        }
    }

    @Override
    public void testPlanExecutionFinished(final TestPlan plan)
    {
        synchronized (KafkaInteropNode.class)
        {
            try
            {
                stop();
            }
            catch (final InterruptedException e)
            {
                Thread.currentThread().interrupt();
                return;
            }
            if (dir != null && !failed)
            {
                try (Stream<Path> files = Files.walk(dir))
                {
                    for (final Path p : (Iterable<Path>)files.sorted(Comparator.reverseOrder())::iterator)
                    {
                        Files.deleteIfExists(p);
                    }
                }
                catch (final IOException e)
                {
                    System.err.println("could not delete " + dir + ": " + e);
                }
            }
            dir = null;
        }
    }

    private static boolean ofTheClass(final TestIdentifier id)
    {
        final TestSource source = id.getSource().orElse(null);
        final String className = KafkaInteropTest.class.getName();
        return source instanceof ClassSource c && c.getClassName().equals(className) ||
            source instanceof MethodSource m && m.getClassName().equals(className);
    }
}
