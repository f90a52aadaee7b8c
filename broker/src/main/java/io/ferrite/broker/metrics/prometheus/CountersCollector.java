package io.ferrite.broker.metrics.prometheus;

import io.ferrite.broker.metrics.CounterReadGate;
import io.ferrite.broker.metrics.CounterReadings;
import io.ferrite.broker.metrics.CounterReadings.Figure;
import io.ferrite.broker.metrics.CounterTypes;
import io.ferrite.broker.metrics.GroupCounters;
import io.ferrite.broker.metrics.RequestKinds;
import io.ferrite.wire.message.ApiKeys;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import org.agrona.concurrent.status.CountersReader;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The broker's counters as Prometheus metrics, read at each scrape ({@link CounterReadings}): nothing is kept between
 * scrapes and nothing is added to the request paths. A scrape reads through a {@link CounterReadGate}: once the
 * endpoint is closed it reads nothing (the counters file may be unmapped), and close waits for a reading under way. The names are what Prometheus' JMX exporter, with its usual
 * configuration for Kafka, makes of Kafka's MBeans where Kafka has the figure ({@code BrokerTopicMetrics},
 * {@code RequestMetrics}, {@code socket-server-metrics}), {@code ferrite_} where it has not; docs/operations.md lists them.
 */
final class CountersCollector implements MultiCollector
{
    private static final String TOPIC_METRICS = "kafka_server_brokertopicmetrics_";
    private static final String SOCKET_METRICS = "kafka_server_socket_server_metrics_";
    private static final String GROUP_METRICS = "kafka_server_group_coordinator_metrics_";
    private static final String REQUESTS = "kafka_network_requestmetrics_requests";
    private static final String REQUESTS_HELP = "Requests received, per API, fetches as FetchConsumer and FetchFollower and "
        + "all as Fetch (Kafka's RequestsPerSec, without its version label)";
    private static final Labels FETCH = Labels.of("request", RequestKinds.name(RequestKinds.FETCH_ALL));

    private final CountersReader reader;
    private final CounterReadGate reads = new CounterReadGate();

    CountersCollector(final CountersReader reader)
    {
        this.reader = reader;
    }

    /** Waits for a scrape reading the counters now; later scrapes read none. */
    void close()
    {
        reads.close();
    }

    /** A metric: its name (without {@code _total} for a counter) and help, whether it is a gauge, its points. */
    private record Metric(String name, String help, boolean gauge, Map<Labels, Long> points)
    {
    }

    @Override
    public MetricSnapshots collect()
    {
        final Map<String, Metric> metrics = reads.read(this::read, Map.of());
        final List<MetricSnapshot> snapshots = new ArrayList<>(metrics.size());
        for (final Metric m : metrics.values())
        {
            snapshots.add(m.gauge() ? gauge(m) : counter(m));
        }
        return new MetricSnapshots(snapshots);
    }

    private Map<String, Metric> read()
    {
        final Map<String, Metric> metrics = new LinkedHashMap<>();
        CounterReadings.summed(reader).forEach((figure, value) -> summed(metrics, figure, value));
        CounterReadings.perThread(reader).forEach((figure, value) -> perThread(metrics, figure, value));
        for (final CounterReadings.Lag lag : CounterReadings.lags(reader))
        {
            // kafka_exporter's name and labels, which the usual consumer-lag dashboards and alerts read
            gauge(metrics, "kafka_consumergroup_lag", "A consumer group's lag on a partition: the high watermark (the "
                + "log end kafka-consumer-groups.sh shows) minus the group's committed offset", Labels.of("consumergroup",
                lag.group(), "topic", lag.topic(), "partition", Integer.toString(lag.partition())), lag.value());
        }
        return metrics;
    }

    /** The figures of the broker (summed over network threads), per topic, per API and per error code. */
    private static void summed(final Map<String, Metric> metrics, final Figure f, final long value)
    {
        final Labels topic = f.topic() == null ? Labels.EMPTY : Labels.of("topic", f.topic());
        switch (f.typeId())
        {
            case CounterTypes.RECORDS_IN, CounterTypes.TOPIC_RECORDS_IN -> add(metrics, TOPIC_METRICS + "messagesin",
                "Records appended by produce requests (Kafka's MessagesInPerSec); no topic label: the broker's", topic, value);
            case CounterTypes.BYTES_IN, CounterTypes.TOPIC_BYTES_IN -> add(metrics, TOPIC_METRICS + "bytesin",
                "Bytes of record batches appended by produce requests (BytesInPerSec); no topic label: the broker's", topic, value);
            case CounterTypes.BYTES_OUT, CounterTypes.TOPIC_BYTES_OUT -> add(metrics, TOPIC_METRICS + "bytesout",
                "Bytes of record batches sent to consumers (BytesOutPerSec); no topic label: the broker's", topic, value);
            case CounterTypes.REPLICATION_BYTES_OUT -> add(metrics, TOPIC_METRICS + "replicationbytesout",
                "Bytes of record batches sent to followers (ReplicationBytesOutPerSec)", topic, value);
            case CounterTypes.REQUESTS ->
            {
                add(metrics, REQUESTS, REQUESTS_HELP, request(f), value);
                if (f.code() == ApiKeys.FETCH.id || f.code() == RequestKinds.FETCH_FOLLOWER)
                {
                    add(metrics, REQUESTS, REQUESTS_HELP, FETCH, value); // Kafka's Fetch: every fetch, both kinds summed
                }
            }
            case CounterTypes.REQUEST_ERRORS -> add(metrics, "kafka_network_requestmetrics_errors",
                "Partitions (Produce, Fetch) or topics (Metadata) answered with an error, per request and code (Kafka's "
                    + "ErrorsPerSec; NONE not counted; OTHER: the codes not counted one by one)",
                Labels.of("request", RequestKinds.name(CounterTypes.errorKind(f.code())), "error",
                    CounterReadings.errorName(CounterTypes.errorCode(f.code()))), value);
            case CounterTypes.GROUPS ->
            {
                gauge(metrics, GROUP_METRICS + "classic_group_count", "Classic groups per state (classic-group-count)",
                    Labels.of("state", GroupCounters.STATES[f.code()]), value);
                gauge(metrics, GROUP_METRICS + "group_count", "Groups per protocol, classic only (group-count)",
                    Labels.of("protocol", "classic"), value);
            }
            case CounterTypes.OFFSETS -> gauge(metrics, GROUP_METRICS + "offset_count",
                "Committed offsets the group coordinator holds (offset-count)", Labels.EMPTY, value);
            case CounterTypes.OFFSET_COMMITS -> gauge(metrics, GROUP_METRICS + "offset_commit_count",
                "Offsets committed, one per partition, since the start (offset-commit-count: a count, as the JMX exporter "
                    + "names it)", Labels.EMPTY, value);
            case CounterTypes.OFFSETS_EXPIRED -> gauge(metrics, GROUP_METRICS + "offset_expiration_count",
                "Offsets expired by retention since the start (offset-expiration-count)", Labels.EMPTY, value);
            case CounterTypes.OFFSETS_DELETED -> gauge(metrics, GROUP_METRICS + "offset_deletion_count",
                "Offsets deleted by OffsetDelete since the start (offset-deletion-count)", Labels.EMPTY, value);
            case CounterTypes.REBALANCES_COMPLETED -> gauge(metrics, GROUP_METRICS + "group_completed_rebalance_count",
                "Classic groups' rebalances completed since the start (group-completed-rebalance-count)", Labels.EMPTY, value);
            case CounterTypes.LAG_NOT_COUNTED -> gauge(metrics, "ferrite_consumergroup_lag_not_counted",
                "Committed offsets whose lag has no counter (beyond the counters file's room for lag)", Labels.EMPTY, value);
            case CounterTypes.ERROR_CODES -> add(metrics, "ferrite_network_errors",
                "Errors answered by Produce, Fetch and Metadata, per error code (OTHER: the codes not counted one by one)",
                Labels.of("error", CounterReadings.errorName(f.code()), "code", Integer.toString(f.code())), value);
            default ->
            {
                // per network thread (below), or a type this reader does not know
            }
        }
    }

    /** The figures Kafka gives per network processor: connections, and Ferrite's duty cycles. */
    private static void perThread(final Map<String, Metric> metrics, final Figure f, final long value)
    {
        final Labels processor = Labels.of("listener", "PLAINTEXT", "networkProcessor", Integer.toString(f.thread()));
        switch (f.typeId())
        {
            case CounterTypes.CONNECTIONS_ACCEPTED -> add(metrics, SOCKET_METRICS + "connection_creation",
                "Connections a network processor took over (Kafka's connection-creation-total)", processor, value);
            case CounterTypes.CONNECTIONS_CLOSED -> add(metrics, SOCKET_METRICS + "connection_close",
                "Connections a network processor closed, for any reason (connection-close-total)", processor, value);
            case CounterTypes.CONNECTIONS_OPEN -> gauge(metrics, SOCKET_METRICS + "connection_count",
                "Connections open on a network processor (connection-count)", processor, value);
            case CounterTypes.DUTY_CYCLES -> add(metrics, "ferrite_network_duty_cycles",
                "Passes of a network thread's duty cycle", Labels.of("networkProcessor", Integer.toString(f.thread())), value);
            default ->
            {
                // summed (above)
            }
        }
    }

    private static Labels request(final Figure f)
    {
        final String name = RequestKinds.name(f.code());
        return Labels.of("request", name == null ? Integer.toString(f.code()) : name);
    }

    private static void add(final Map<String, Metric> metrics, final String name, final String help, final Labels labels,
        final long value)
    {
        metrics.computeIfAbsent(name, n -> new Metric(n, help, false, new LinkedHashMap<>())).points()
            .merge(labels, value, Long::sum);
    }

    private static void gauge(final Map<String, Metric> metrics, final String name, final String help, final Labels labels,
        final long value)
    {
        metrics.computeIfAbsent(name, n -> new Metric(n, help, true, new LinkedHashMap<>())).points()
            .merge(labels, value, Long::sum);
    }

    private static CounterSnapshot counter(final Metric m)
    {
        final CounterSnapshot.Builder b = CounterSnapshot.builder().name(m.name()).help(m.help());
        m.points().forEach((labels, value) -> b.dataPoint(CounterDataPointSnapshot.builder().labels(labels).value(value).build()));
        return b.build();
    }

    private static GaugeSnapshot gauge(final Metric m)
    {
        final GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(m.name()).help(m.help());
        m.points().forEach((labels, value) -> b.dataPoint(GaugeDataPointSnapshot.builder().labels(labels).value(value).build()));
        return b.build();
    }
}
