package io.ferrite.broker.metrics.prometheus;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

/**
 * Collectors collected one after the other in the order given, their snapshots in that order. A Prometheus registry
 * keeps its collectors in a set with no order (1.10.0: {@code ConcurrentHashMap.newKeySet()}), so the order in which
 * they are registered is not the order of a scrape: a registry holding this one collector scrapes in the code's order.
 */
final class InOrderCollector implements MultiCollector
{
    private final MultiCollector[] collectors;

    InOrderCollector(final MultiCollector... collectors)
    {
        this.collectors = collectors.clone();
    }

    @Override
    public MetricSnapshots collect()
    {
        final MetricSnapshots.Builder all = MetricSnapshots.builder();
        for (final MultiCollector collector : collectors)
        {
            for (final MetricSnapshot snapshot : collector.collect())
            {
                all.metricSnapshot(snapshot);
            }
        }
        return all.build();
    }
}
