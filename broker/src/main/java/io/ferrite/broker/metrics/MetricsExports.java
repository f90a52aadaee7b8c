package io.ferrite.broker.metrics;

import io.ferrite.broker.metrics.jmx.KafkaMBeans;
import io.ferrite.broker.metrics.prometheus.PrometheusEndpoint;
import io.ferrite.broker.topic.TopicRegistry;

import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * What the broker exports to readers outside it, over its counters and logs: Kafka's MBeans ({@link KafkaMBeans},
 * always) and the Prometheus endpoint ({@link PrometheusEndpoint}, when {@code ferrite.metrics.listener} is set).
 * Started once the broker serves; closed first at its close, before the logs close and the counters file is unmapped:
 * each export waits for the readings under way at its close and reads nothing after it.
 */
public final class MetricsExports implements AutoCloseable
{
    private final KafkaMBeans mbeans;
    private final PrometheusEndpoint prometheus; // null: not configured

    private MetricsExports(final KafkaMBeans mbeans, final PrometheusEndpoint prometheus)
    {
        this.mbeans = mbeans;
        this.prometheus = prometheus;
    }

    /**
     * Registers the MBeans ({@code aloneController}: the controller's too, see {@link KafkaMBeans#register}) and starts
     * the Prometheus endpoint at {@code prometheusAddress} (resolved; null: none). What it started is closed again if
     * a part fails.
     */
    public static MetricsExports start(final BrokerCounters counters, final TopicRegistry topics, final boolean aloneController,
        final InetSocketAddress prometheusAddress) throws IOException
    {
        final KafkaMBeans mbeans = KafkaMBeans.register(counters, topics, aloneController);
        try
        {
            return new MetricsExports(mbeans,
                prometheusAddress == null ? null : PrometheusEndpoint.start(prometheusAddress, counters.reader(),
                    counters.latencies()));
        }
        catch (final IOException | RuntimeException | Error ex)
        {
            mbeans.close();
            throw ex;
        }
    }

    /** The Prometheus endpoint, or null when it is not configured. */
    public PrometheusEndpoint prometheus()
    {
        return prometheus;
    }

    /** Closes the Prometheus endpoint, then the MBeans: after this, nothing outside reads a counter or a log. */
    @Override
    public void close()
    {
        if (prometheus != null)
        {
            prometheus.close();
        }
        mbeans.close();
    }
}
