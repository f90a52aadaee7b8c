package io.ferrite.broker.metrics.prometheus;

import io.ferrite.broker.metrics.RequestLatencies;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.agrona.concurrent.status.CountersReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The Prometheus endpoint ({@code ferrite.metrics.listener}): Prometheus' Java client's HTTP server serving, at
 * {@code /metrics}, the broker's counters ({@link CountersCollector}, read at each scrape) and the JVM's metrics. Scrapes
 * are answered one at a time on its own daemon thread ({@code ferrite-metrics-http}); started after the broker's
 * threads, stopped first at its close.
 */
public final class PrometheusEndpoint implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(PrometheusEndpoint.class);

    private final HTTPServer server;
    private final ExecutorService executor;
    private final CountersCollector counters;

    private PrometheusEndpoint(final HTTPServer server, final ExecutorService executor, final CountersCollector counters)
    {
        this.server = server;
        this.executor = executor;
        this.counters = counters;
    }

    /**
     * The JVM's metrics, registered once per JVM ({@link #jvm}): Prometheus' JvmMetrics keeps every registry it was
     * registered with in a static set for good, so registering them with each endpoint's registry would keep each
     * broker's registry, and its counters, as long as the JVM runs.
     */
    private static PrometheusRegistry jvmRegistry; // guarded by PrometheusEndpoint.class

    /** Listens at {@code address} (resolved; port 0: a free one), serving the counters {@code reader} reads and the request times. */
    public static PrometheusEndpoint start(final InetSocketAddress address, final CountersReader reader,
        final RequestLatencies latencies) throws IOException
    {
        final PrometheusRegistry registry = new PrometheusRegistry();
        // collected in this order at each scrape (one collector: a registry's own order is none): the counters first,
        // so that they are read as near as can be to the scrape's start, the time Prometheus gives the samples (the
        // JVM's metrics — threads, memory pools, GC — collected before them would move their reading later by their
        // collection's time, longer on a loaded machine)
        final CountersCollector counters = new CountersCollector(reader);
        final PrometheusRegistry jvm = jvm();
        registry.register(new InOrderCollector(counters, new LatencyCollector(latencies), (MultiCollector)jvm::scrape));
        // one thread: a second scrape at once waits for the first
        final ExecutorService executor = Executors.newSingleThreadExecutor(r ->
        {
            final Thread t = new Thread(r, "ferrite-metrics-http");
            t.setDaemon(true);
            return t;
        });
        try
        {
            final HTTPServer server = HTTPServer.builder().inetAddress(address.getAddress()).port(address.getPort())
                .registry(registry).executorService(executor).buildAndStart();
            LOG.info("Prometheus endpoint on http://{}:{}/metrics", address.getHostString(), server.getPort());
            return new PrometheusEndpoint(server, executor, counters);
        }
        catch (final IOException | RuntimeException ex)
        {
            executor.shutdownNow();
            throw ex;
        }
    }

    private static synchronized PrometheusRegistry jvm()
    {
        if (jvmRegistry == null)
        {
            final PrometheusRegistry registry = new PrometheusRegistry();
            JvmMetrics.builder().register(registry);
            jvmRegistry = registry;
        }
        return jvmRegistry;
    }

    /** The port it listens on. */
    public int port()
    {
        return server.getPort();
    }

    /** For tests: the collector of the counters. */
    CountersCollector counters()
    {
        return counters;
    }

    /**
     * Stops listening and waits for a scrape reading the counters: none reads a counter after this returns (a scrape
     * still answering then reads nothing more). Waits up to 5 s more for the scrape's answer to be sent.
     */
    @Override
    public void close()
    {
        server.close();
        counters.close();
        try
        {
            if (!executor.awaitTermination(5, TimeUnit.SECONDS))
            {
                LOG.warn("a scrape of the Prometheus endpoint is still answering after 5 s (it reads no counter any more)");
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
