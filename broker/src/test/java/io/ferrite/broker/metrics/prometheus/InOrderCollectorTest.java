package io.ferrite.broker.metrics.prometheus;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The endpoint's collectors are collected in the code's order at each scrape: a registry keeps its collectors in a set
 * with no order (three collectors registered one by one were scraped as the identity hashes fell, often the last
 * registered first), so the endpoint registers one {@link InOrderCollector}.
 */
class InOrderCollectorTest
{
    @Test
    void aScrapeCollectsInTheGivenOrderWhateverTheCollectorsHashes()
    {
        // new collectors (new identity hashes) in new registries, many times: a set's order would differ in some
        for (int round = 0; round < 64; round++)
        {
            final List<String> collected = new ArrayList<>();
            final PrometheusRegistry registry = new PrometheusRegistry();
            registry.register(new InOrderCollector(probe("counters", collected), probe("latency", collected),
                probe("jvm", collected)));
            // what the order decides is when each is read; the snapshots come out sorted by name whatever it is
            assertEquals(3, registry.scrape().size());
            assertEquals(List.of("counters", "latency", "jvm"), collected, "round " + round);
        }
    }

    private static MultiCollector probe(final String name, final List<String> collected)
    {
        return () ->
        {
            collected.add(name);
            return MetricSnapshots.of(GaugeSnapshot.builder().name(name)
                .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().value(1).labels(Labels.EMPTY).build()).build());
        };
    }
}
