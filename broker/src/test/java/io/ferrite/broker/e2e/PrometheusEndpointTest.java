package io.ferrite.broker.e2e;

import io.ferrite.broker.StartupException;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.log.config.ConfigException;
import io.ferrite.testing.LoopbackPorts;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Prometheus endpoint ({@code ferrite.metrics.listener}) scraped every second by a real Prometheus server (a child
 * process, {@link PrometheusServer}) while kafka-clients produce, read as a consumer group and meet an unknown topic;
 * the figures are then read back through Prometheus' query API, as a dashboard reads them.
 */
class PrometheusEndpointTest
{
    private static final int RECORDS = 500;
    private static final String TOPIC = "scraped";
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @Test
    void aRealPrometheusScrapesTheCountersKafkasNamesAndTheJvm() throws Exception
    {
        final int metricsPort = LoopbackPorts.take();
        final Path data = Files.createDirectories(dir.resolve("data"));
        try (RunningBroker broker = new RunningBroker(data, Map.of(BrokerConfig.METRICS_LISTENER,
            "http://127.0.0.1:" + metricsPort, BrokerConfig.AUTO_CREATE_TOPICS, "false"));
             PrometheusServer prometheus = new PrometheusServer(Files.createDirectories(dir.resolve("prometheus")),
                 "127.0.0.1:" + metricsPort))
        {
            await(prometheus::ready, DEADLINE, () -> "prometheus ready; its log:\n" + prometheus.log());
            await(() -> Double.valueOf(1).equals(prometheus.value("sum(up{job=\"ferrite\"})")), DEADLINE,
                () -> "the endpoint scraped (up == 1); prometheus' log:\n" + prometheus.log());
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short)1))).all().get(30, TimeUnit.SECONDS);
            }
            final double producedBytes;
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true, ProducerConfig.LINGER_MS_CONFIG, 5)))
            {
                for (int i = 0; i < RECORDS; i++)
                {
                    producer.send(new ProducerRecord<>(TOPIC, ("key-" + i).getBytes(StandardCharsets.UTF_8),
                        ("value of record " + i + " " + "x".repeat(i % 100)).getBytes(StandardCharsets.UTF_8)));
                }
                producer.flush();
                // the bytes of the batches the producer sent, by its own count (kafka-clients' producer-topic-metrics);
                // a retried batch is counted again there but appended once (idempotence): the comparison needs none
                assertEquals(0, producerMetric(producer, "record-retry-total", TOPIC),
                    "no batch was retried (a retry is counted twice by the producer, once by the broker: not comparable)");
                producedBytes = producerMetric(producer, "byte-total", TOPIC);
                assertEquals(RECORDS, producerMetric(producer, "record-send-total", TOPIC), "every record sent once");
            }
            // every read is of the last sample within a minute (last_over_time): a scrape that failed (too slow on a
            // loaded machine) marks the series stale, and an instant query would find nothing until the next one
            final String messagesIn = "kafka_server_brokertopicmetrics_messagesin_total";
            awaitValue(prometheus, last(messagesIn + "{topic=\"" + TOPIC + "\"}"), v -> v == RECORDS, "messages in == " + RECORDS);
            awaitValue(prometheus, last(messagesIn + "{topic=\"\"}"), v -> v == RECORDS, "the broker's figure (no topic label)");
            final double bytesIn = awaitValue(prometheus, last("kafka_server_brokertopicmetrics_bytesin_total{topic=\"" + TOPIC
                + "\"}"), v -> Math.abs(v - producedBytes) <= producedBytes / 100,
                "bytes in within 1% of the " + producedBytes + " bytes the producer sent");
            awaitValue(prometheus, last("kafka_server_brokertopicmetrics_bytesin_total{topic=\"\"}"), v -> v == bytesIn,
                "the broker's bytes in == the topic's");
            awaitValue(prometheus, last("kafka_server_brokertopicmetrics_bytesout_total{topic=\"" + TOPIC + "\"}"), v -> v == 0,
                "nothing read yet");

            // a consumer group reads every record
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG, "scrapers")))
            {
                consumer.subscribe(List.of(TOPIC));
                final int[] consumed = {0};
                await(() ->
                {
                    for (final ConsumerRecord<byte[], byte[]> ignored : consumer.poll(Duration.ofMillis(200)))
                    {
                        consumed[0]++;
                    }
                    return consumed[0] >= RECORDS;
                }, DEADLINE, () -> "the group read " + RECORDS + " records, read " + consumed[0]);
                consumer.commitSync();
            }
            // every batch went out at least once: bytes out reach bytes in
            awaitValue(prometheus, last("kafka_server_brokertopicmetrics_bytesout_total{topic=\"" + TOPIC + "\"}"),
                v -> v >= bytesIn, "bytes out >= bytes in (" + bytesIn + ")");
            awaitValue(prometheus, last("kafka_server_brokertopicmetrics_bytesout_total{topic=\"\"}"), v -> v >= bytesIn,
                "the broker's bytes out >= bytes in");

            // an induced error: a topic that does not exist (auto-creation off)
            final String unknownTopicErrors = last("ferrite_network_errors_total{error=\"UNKNOWN_TOPIC_OR_PARTITION\",code=\"3\"}");
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(UnknownTopicSends.producerConfig()))
            {
                UnknownTopicSends.untilCounted(producer, "no-such-topic", () ->
                {
                    final Double errors = prometheus.value(unknownTopicErrors);
                    return errors != null && errors > 0;
                }, "UNKNOWN_TOPIC_OR_PARTITION counted");
            }
            awaitValue(prometheus, last("kafka_network_requestmetrics_errors_total{request=\"Metadata\"}"), v -> v > 0,
                "Metadata errors counted");
            awaitValue(prometheus, last("kafka_network_requestmetrics_errors_total{request=\"Produce\"}"), v -> v == 0,
                "no Produce partition was refused");
            awaitValue(prometheus, last("kafka_network_requestmetrics_requests_total{request=\"Produce\"}"), v -> v >= 1,
                "Produce requests counted");
            awaitValue(prometheus, last("kafka_network_requestmetrics_requests_total{request=\"JoinGroup\"}"), v -> v >= 1,
                "JoinGroup requests counted");
            // the request times: every Produce answered is timed (the producers are closed: no more come)
            final double produces = awaitValue(prometheus, last("kafka_network_requestmetrics_requests_total{request=\"Produce\"}"),
                v -> v >= 1, "Produce requests counted");
            awaitValue(prometheus, last("kafka_network_requestmetrics_totaltimems_count{request=\"Produce\"}"),
                v -> v == produces, "every Produce timed (" + produces + ")");
            awaitValue(prometheus, last("kafka_network_requestmetrics_totaltimems{request=\"Produce\",quantile=\"0.99\"}"),
                v -> v > 0, "a Produce's p99 TotalTimeMs");
            awaitValue(prometheus, last("kafka_network_requestmetrics_requests_total{request=\"FetchConsumer\"}"), v -> v >= 1,
                "the group's fetches are a consumer's (Kafka's FetchConsumer)");
            awaitValue(prometheus, last("kafka_network_requestmetrics_requests_total{request=\"Fetch\"}") + " - "
                + last("kafka_network_requestmetrics_requests_total{request=~\"FetchConsumer|FetchFollower\"}"), v -> v == 0, "Kafka's Fetch: every fetch, FetchConsumer + FetchFollower");
            awaitValue(prometheus, last("kafka_network_requestmetrics_requests_total{request=\"FetchFollower\"}"), v -> v == 0,
                "no follower fetched");
            awaitValue(prometheus, last("kafka_server_socket_server_metrics_connection_creation_total"), v -> v >= 3,
                "connections counted");
            // the JVM's own metrics beside them
            awaitValue(prometheus, last("jvm_memory_used_bytes{area=\"heap\"}"), v -> v > 0, "the JVM's heap");
            awaitValue(prometheus, last("jvm_threads_current"), v -> v > 0, "the JVM's threads");
            dashboardQueriesAnswer(prometheus);
        }
    }

    @Test
    void theEndpointIsOffUnlessConfiguredAndAnswersTheTextFormat() throws Exception
    {
        final int metricsPort = LoopbackPorts.take();
        final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        final HttpRequest scrape = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metricsPort + "/metrics"))
            .timeout(Duration.ofSeconds(10)).build();
        try (RunningBroker ignored = new RunningBroker(dir.resolve("off"), Map.of()))
        {
            assertThrows(IOException.class, () -> http.send(scrape, HttpResponse.BodyHandlers.ofString()), "nothing listens");
        }
        try (RunningBroker ignored = new RunningBroker(dir.resolve("on"), Map.of(BrokerConfig.METRICS_LISTENER,
            "http://127.0.0.1:" + metricsPort)))
        {
            final HttpResponse<String> answer = http.send(scrape, HttpResponse.BodyHandlers.ofString());
            assertEquals(200, answer.statusCode());
            assertTrue(answer.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"),
                answer.headers()::toString);
            assertTrue(answer.body().contains("# TYPE kafka_server_brokertopicmetrics_messagesin_total counter"), answer::body);
            assertTrue(answer.body().contains("kafka_server_brokertopicmetrics_messagesin_total 0.0"), answer::body);
            assertTrue(answer.body().contains(
                "kafka_server_socket_server_metrics_connection_count{listener=\"PLAINTEXT\",networkProcessor=\"1\"} 0.0"),
                answer::body);
        }
        // stopped with the broker
        assertThrows(IOException.class, () -> http.send(scrape, HttpResponse.BodyHandlers.ofString()), "closed with the broker");
        // an address in use: the start fails naming the setting, and what the broker had opened is let go (the same
        // directory starts again: its lock was released)
        try (ServerSocket taken = new ServerSocket(metricsPort, 1, InetAddress.getLoopbackAddress()))
        {
            final StartupException refused = assertThrows(StartupException.class, () -> new RunningBroker(dir.resolve("taken"),
                Map.of(BrokerConfig.METRICS_LISTENER, "http://127.0.0.1:" + taken.getLocalPort())));
            assertTrue(refused.getMessage().startsWith(BrokerConfig.METRICS_LISTENER + "=http://127.0.0.1:" + metricsPort
                + ": cannot listen"), refused::getMessage);
        }
        try (RunningBroker again = new RunningBroker(dir.resolve("taken"), Map.of()))
        {
            assertTrue(again.broker.address().getPort() > 0);
        }
        // an unknown host: the config takes it (no DNS lookup at each dynamic config change), the start refuses it
        final String unknownHost = "http://no-such-host.invalid:" + metricsPort;
        BrokerConfig.of(Map.of(BrokerConfig.METRICS_LISTENER, unknownHost));
        final StartupException unknown = assertThrows(StartupException.class, () -> new RunningBroker(dir.resolve("taken"),
            Map.of(BrokerConfig.METRICS_LISTENER, unknownHost)));
        assertEquals(BrokerConfig.METRICS_LISTENER + "=" + unknownHost + ": cannot listen: unknown host no-such-host.invalid",
            unknown.getMessage());
        try (RunningBroker again = new RunningBroker(dir.resolve("taken"), Map.of()))
        {
            assertTrue(again.broker.address().getPort() > 0, "the failed start let the directory go");
        }
        // a value that is not http://host:port is refused, naming the setting
        final ConfigException bad = assertThrows(ConfigException.class, () -> BrokerConfig.of(Map.of(
            BrokerConfig.METRICS_LISTENER, "127.0.0.1:9404")));
        assertTrue(bad.getMessage().contains(BrokerConfig.METRICS_LISTENER), bad::getMessage);
    }

    /** Every query of the Grafana dashboard (docs/grafana/ferrite.json) is valid PromQL and answers data. */
    private static void dashboardQueriesAnswer(final PrometheusServer prometheus) throws IOException
    {
        // the repository root: surefire runs in the module's directory
        final String dashboard = Files.readString(Path.of("").toAbsolutePath().getParent().resolve("docs/grafana/ferrite.json"));
        final Matcher expr = Pattern.compile("\"expr\": \"((?:[^\"\\\\]|\\\\.)*)\"").matcher(dashboard);
        int queries = 0;
        while (expr.find())
        {
            final String query = expr.group(1).replace("\\\"", "\"").replace("$instance", ".*").replace("$__rate_interval", "1m");
            awaitValue(prometheus, query, v -> true, "the dashboard's query answers data (once a scrape after a failed one is in)");
            queries++;
        }
        assertTrue(queries >= 15, "the dashboard's queries found: " + queries);
    }

    private static double producerMetric(final KafkaProducer<?, ?> producer, final String name, final String topic)
    {
        for (final Map.Entry<MetricName, ? extends Metric> e : producer.metrics().entrySet())
        {
            if (e.getKey().group().equals("producer-topic-metrics") && e.getKey().name().equals(name)
                && topic.equals(e.getKey().tags().get("topic")))
            {
                return ((Number)e.getValue().metricValue()).doubleValue();
            }
        }
        throw new AssertionError("no producer metric " + name + " for " + topic + ": " + producer.metrics().keySet());
    }

    /** The sum of the last samples of {@code selector}'s series within a minute: stale markers do not hide them. */
    private static String last(final String selector)
    {
        return "sum(last_over_time(" + selector + "[1m]))";
    }

    /** Awaits an answer of {@code query} that {@code accept}s (none: not scraped yet, or stale), and returns it. */
    private static double awaitValue(final PrometheusServer prometheus, final String query,
        final java.util.function.DoublePredicate accept, final String what)
    {
        final Double[] last = {null};
        await(() ->
        {
            last[0] = prometheus.value(query);
            return last[0] != null && accept.test(last[0]);
        }, DEADLINE, () -> what + ": " + query + " was " + last[0]);
        return last[0];
    }
}
