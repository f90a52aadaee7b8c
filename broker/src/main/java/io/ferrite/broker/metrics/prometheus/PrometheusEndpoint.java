package io.ferrite.broker.metrics.prometheus;

import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.agrona.concurrent.status.CountersReader;

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
    private final HTTPServer server;
    private final ExecutorService executor;

    private PrometheusEndpoint(final HTTPServer server, final ExecutorService executor)
    {
        this.server = server;
        this.executor = executor;
    }

    /** Listens at {@code address} (port 0: a free one), serving the counters {@code reader} reads. */
    public static PrometheusEndpoint start(final InetSocketAddress address, final CountersReader reader) throws IOException
    {
        final PrometheusRegistry registry = new PrometheusRegistry();
        JvmMetrics.builder().register(registry);
        registry.register(new CountersCollector(reader));
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
            return new PrometheusEndpoint(server, executor);
        }
        catch (final IOException | RuntimeException ex)
        {
            executor.shutdownNow();
            throw ex;
        }
    }

    /** The port it listens on. */
    public int port()
    {
        return server.getPort();
    }

    /** Stops listening and waits (up to 5 s) for a scrape under way: none reads a counter after this returns. */
    @Override
    public void close()
    {
        server.close();
        try
        {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
