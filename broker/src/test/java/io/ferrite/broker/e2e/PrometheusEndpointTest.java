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
import org.apache.kafka.common.errors.TimeoutException;
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
import java.util.concurrent.ExecutionException;
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
                ProducerConfig.LINGER_MS_CONFIG, 5)))
            {
                for (int i = 0; i < RECORDS; i++)
                {
                    producer.send(new ProducerRecord<>(TOPIC, ("key-" + i).getBytes(StandardCharsets.UTF_8),
                        ("value of record " + i + " " + "x".repeat(i % 100)).getBytes(StandardCharsets.UTF_8)));
                }
                producer.flush();
                // the bytes of the batches the producer sent, by its own count (kafka-clients' producer-topic-metrics)
                producedBytes = producerMetric(producer, "byte-total", TOPIC);
                assertEquals(RECORDS, producerMetric(producer, "record-send-total", TOPIC), "every record sent once");
            }
            final String messagesIn = "kafka_server_brokertopicmetrics_messagesin_total";
            awaitValue(prometheus, "sum(" + messagesIn + "{topic=\"" + TOPIC + "\"})", v -> v == RECORDS, "messages in == " + RECORDS);
            assertEquals(RECORDS, prometheus.value("sum(" + messagesIn + "{topic=\"\"})"), "the broker's figure (no topic label)");
            final double bytesIn = prometheus.value("sum(kafka_server_brokertopicmetrics_bytesin_total{topic=\"" + TOPIC + "\"})");
            assertTrue(Math.abs(bytesIn - producedBytes) <= producedBytes / 100,
                "bytes in " + bytesIn + " within 1% of the " + producedBytes + " bytes the producer sent");
            assertEquals(bytesIn, prometheus.value("sum(kafka_server_brokertopicmetrics_bytesin_total{topic=\"\"})"));
            assertEquals(null, prometheus.value("sum(kafka_server_brokertopicmetrics_bytesout_total{topic=\"" + TOPIC + "\"} > 0)"),
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
            awaitValue(prometheus, "sum(kafka_server_brokertopicmetrics_bytesout_total{topic=\"" + TOPIC + "\"})",
                v -> v >= bytesIn, "bytes out >= bytes in (" + bytesIn + ")");
            awaitValue(prometheus, "sum(kafka_server_brokertopicmetrics_bytesout_total{topic=\"\"})", v -> v >= bytesIn,
                "the broker's bytes out >= bytes in");

            // an induced error: a topic that does not exist (auto-creation off)
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000)))
            {
                final ExecutionException failed = assertThrows(ExecutionException.class,
                    () -> producer.send(new ProducerRecord<>("no-such-topic", new byte[10])).get(30, TimeUnit.SECONDS));
                assertTrue(failed.getCause() instanceof TimeoutException, failed::toString);
            }
            awaitValue(prometheus, "sum(ferrite_network_errors_total{error=\"UNKNOWN_TOPIC_OR_PARTITION\",code=\"3\"})",
                v -> v > 0, "UNKNOWN_TOPIC_OR_PARTITION counted");
            awaitValue(prometheus, "sum(kafka_network_requestmetrics_errors_total{request=\"Metadata\"})", v -> v > 0,
                "Metadata errors counted");
            assertEquals(null, prometheus.value("sum(kafka_network_requestmetrics_errors_total{request=\"Produce\"} > 0)"),
                "no Produce partition was refused");
            assertTrue(prometheus.value("sum(kafka_network_requestmetrics_requests_total{request=\"Produce\"})") >= 1);
            assertTrue(prometheus.value("sum(kafka_network_requestmetrics_requests_total{request=\"JoinGroup\"})") >= 1);
            assertTrue(prometheus.value("sum(kafka_server_socket_server_metrics_connection_creation_total)") >= 3);
            // the JVM's own metrics beside them
            assertTrue(prometheus.value("sum(jvm_memory_used_bytes{area=\"heap\"})") > 0);
            assertTrue(prometheus.value("sum(jvm_threads_current)") > 0);
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
                "kafka_server_socket_server_metrics_connection_count{listener=\"PLAINTEXT\",network_processor=\"1\"} 0.0"),
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
            assertTrue(prometheus.value(query) != null, "the dashboard's query answers data: " + query);
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

    private static void awaitValue(final PrometheusServer prometheus, final String query,
        final java.util.function.DoublePredicate accept, final String what)
    {
        final Double[] last = {null};
        await(() ->
        {
            last[0] = prometheus.value(query);
            return last[0] != null && accept.test(last[0]);
        }, DEADLINE, () -> what + ": " + query + " was " + last[0]);
    }
}
