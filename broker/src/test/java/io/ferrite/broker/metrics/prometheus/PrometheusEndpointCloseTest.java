package io.ferrite.broker.metrics.prometheus;

import io.ferrite.broker.metrics.BrokerCounters;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The endpoint's close and the counters: a scrape reading them when the endpoint closes ends its reading before close
 * returns (the broker unmaps the counters file after), later ones read none; and the JVM's metrics are registered once
 * per JVM, not once per endpoint (Prometheus' JvmMetrics keeps every registry it was registered with).
 */
class PrometheusEndpointCloseTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    private static final InetSocketAddress ANY_PORT = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void aScrapeUnderWayEndsItsReadingBeforeCloseReturns() throws Exception
    {
        final BrokerCounters counters = BrokerCounters.inMemory(1, 4096);
        final AtomicBoolean block = new AtomicBoolean();
        final CountDownLatch reading = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        // Agrona's reader over the same buffers, stopping (once asked to) in the middle of a scrape's reading
        final CountersReader reader = new CountersReader(counters.reader().metaDataBuffer(), counters.reader().valuesBuffer())
        {
            @Override
            public void forEach(final MetaData metaData)
            {
                if (block.compareAndSet(true, false))
                {
                    reading.countDown();
                    await(() -> release.await(30, TimeUnit.SECONDS), DEADLINE, "released");
                }
                super.forEach(metaData);
            }
        };
        final PrometheusEndpoint endpoint = PrometheusEndpoint.start(ANY_PORT, reader, counters.latencies());
        final HttpRequest scrape = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + endpoint.port() + "/metrics"))
            .timeout(DEADLINE).build();
        final HttpResponse<String> before = http.send(scrape, HttpResponse.BodyHandlers.ofString());
        assertTrue(before.body().contains("kafka_server_brokertopicmetrics_messagesin_total 0.0"), before::body);

        block.set(true);
        final CompletableFuture<HttpResponse<String>> underWay = http.sendAsync(scrape, HttpResponse.BodyHandlers.ofString());
        assertTrue(reading.await(30, TimeUnit.SECONDS), "the scrape reads the counters");
        final Thread closer = new Thread(endpoint::close, "closer");
        closer.start();
        await(() -> closer.getState() == Thread.State.WAITING && Arrays.stream(closer.getStackTrace()).anyMatch(e ->
            e.getClassName().equals(CountersCollector.class.getName()) && e.getMethodName().equals("close")), DEADLINE,
            () -> "close waits for the scrape's reading: " + closer.getState() + " " + Arrays.toString(closer.getStackTrace()));
        release.countDown();
        closer.join(DEADLINE.toMillis());
        assertEquals(Thread.State.TERMINATED, closer.getState(), "close returned once the reading ended");
        underWay.handle((answer, failure) -> null).get(30, TimeUnit.SECONDS); // answered or cut off: either
        assertEquals(0, endpoint.counters().collect().size(), "no counter is read once closed");
    }

    @Test
    void theJvmsMetricsAreRegisteredOncePerJvm() throws Exception
    {
        final Field field = JvmMetrics.class.getDeclaredField("REGISTERED");
        field.setAccessible(true);
        final Set<?> registered = (Set<?>)field.get(null);
        final int before = registered.size();
        for (int i = 0; i < 3; i++)
        {
            final BrokerCounters counters = BrokerCounters.inMemory(1, 4096);
            final PrometheusEndpoint endpoint = PrometheusEndpoint.start(ANY_PORT, counters.reader(), counters.latencies());
            try
            {
                final HttpResponse<String> answer = http.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + endpoint.port() + "/metrics")).timeout(DEADLINE).build(),
                    HttpResponse.BodyHandlers.ofString());
                assertTrue(answer.body().contains("jvm_memory_used_bytes{area=\"heap\"}"), answer::body);
                assertTrue(answer.body().contains("kafka_server_brokertopicmetrics_messagesin_total"), answer::body);
            }
            finally
            {
                endpoint.close();
            }
        }
        assertTrue(registered.size() - before <= 1, "JvmMetrics' registries: " + before + " -> " + registered.size()
            + " after three endpoints (each would keep its registry and its broker's counters for good)");
    }
}
