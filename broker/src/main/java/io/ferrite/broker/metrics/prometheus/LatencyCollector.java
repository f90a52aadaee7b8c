package io.ferrite.broker.metrics.prometheus;

import io.ferrite.broker.metrics.RequestKinds;
import io.ferrite.broker.metrics.RequestLatencies;
import io.ferrite.broker.metrics.RequestLatencies.Reading;
import io.ferrite.broker.metrics.RequestTimes.Stage;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.Quantile;
import io.prometheus.metrics.model.snapshots.Quantiles;
import io.prometheus.metrics.model.snapshots.SummarySnapshot;
import io.prometheus.metrics.model.snapshots.SummarySnapshot.SummaryDataPointSnapshot;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The request times ({@link RequestLatencies}) as Prometheus summaries, named as Prometheus' JMX exporter, with its
 * usual rules for Kafka, names Kafka's {@code RequestMetrics} histograms: {@code kafka_network_requestmetrics_totaltimems
 * {request="Produce",quantile="0.99"}} in milliseconds, with {@code _count} and {@code _sum}. Only the kinds of request
 * seen since the start have points (Kafka's exporter shows a histogram of every API, zeros included). The readings are
 * heap histograms: nothing here reads the counters file, so no gate is needed at close.
 */
final class LatencyCollector implements MultiCollector
{
    private final RequestLatencies latencies;

    LatencyCollector(final RequestLatencies latencies)
    {
        this.latencies = latencies;
    }

    @Override
    public MetricSnapshots collect()
    {
        final List<MetricSnapshot> snapshots = new ArrayList<>();
        for (final Stage stage : Stage.values())
        {
            final SummarySnapshot.Builder summary = SummarySnapshot.builder()
                .name("kafka_network_requestmetrics_" + stage.kafkaName.toLowerCase(Locale.ROOT))
                .help("Kafka's RequestMetrics " + stage.kafkaName + " per request, in milliseconds, since the start");
            for (int kind = 0; kind < RequestKinds.COUNT; kind++)
            {
                final String request = RequestKinds.name(kind);
                final Reading r = request == null ? null : latencies.read(kind, stage);
                if (r != null && r.count() > 0)
                {
                    summary.dataPoint(SummaryDataPointSnapshot.builder().labels(Labels.of("request", request))
                        .count(r.count()).sum(r.sumMs()).quantiles(Quantiles.of(new Quantile(0.5, r.p50()),
                            new Quantile(0.75, r.p75()), new Quantile(0.95, r.p95()), new Quantile(0.98, r.p98()),
                            new Quantile(0.99, r.p99()), new Quantile(0.999, r.p999()))).build());
                }
            }
            snapshots.add(summary.build());
        }
        return new MetricSnapshots(snapshots);
    }
}
