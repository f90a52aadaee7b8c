package io.ferrite.ecosystem.connect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferrite.testing.LoopbackPorts;

import java.io.IOException;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static io.ferrite.testing.Await.await;

/**
 * A Kafka Connect worker (4.3.1, as Kafka's {@code connect-distributed.sh} / {@code connect-standalone.sh} run it:
 * their main classes) in a child JVM, its REST API on a loopback port of its own, its log (INFO) in a file.
 */
final class ConnectWorker implements AutoCloseable
{
    private static final ObjectMapper JSON = new ObjectMapper();
    /** A start: the JVM, the plugins found by their service manifests, the herder joined (a dead member's 6 s session). */
    private static final Duration START = Duration.ofSeconds(60);

    private final ForkedJvm child;
    private final int restPort;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private ConnectWorker(final ForkedJvm child, final int restPort)
    {
        this.child = child;
        this.restPort = restPort;
    }

    /**
     * Starts {@code connect-distributed} ({@code standalone}: {@code connect-standalone} with {@code connectorFiles})
     * with {@code workerConfig} and a free REST port, and waits until its REST API answers.
     */
    static ConnectWorker start(final boolean standalone, final Map<String, String> workerConfig, final List<Path> connectorFiles,
        final Path dir, final String name) throws IOException
    {
        final int port = LoopbackPorts.take();
        final Properties p = new Properties();
        p.putAll(workerConfig);
        p.put("listeners", "http://127.0.0.1:" + port);
        // the FileStream connectors and the converters are found by their service manifests (KIP-898) instead of
        // a scan of every class on the class path, which takes seconds a start
        p.put("plugin.discovery", "service_load");
        final Path file = dir.resolve(name + ".properties");
        try (OutputStream out = Files.newOutputStream(file))
        {
            p.store(out, "Connect worker " + name);
        }
        final List<String> args = new ArrayList<>();
        args.add(file.toString());
        connectorFiles.forEach(f -> args.add(f.toString()));
        final ForkedJvm child = ForkedJvm.start(name, dir.resolve(name + ".log"),
            // INFO, the clients' at WARN but for the consumer coordinator's (the sink's committed offset found, or not)
            List.of("-Xmx384m", "-XX:TieredStopAtLevel=1", "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
                "-Dorg.slf4j.simpleLogger.showDateTime=true", "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients=warn",
                "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients.consumer.internals.ConsumerCoordinator=info"),
            standalone ? "org.apache.kafka.connect.cli.ConnectStandalone" : "org.apache.kafka.connect.cli.ConnectDistributed", args);
        final ConnectWorker worker = new ConnectWorker(child, port);
        await(() -> worker.answering("/health"), START, () -> "the worker's REST API: " + child.tail(30));
        return worker;
    }

    private boolean answering(final String path) throws Exception
    {
        if (!child.alive())
        {
            throw new AssertionError("the worker ended by itself: " + child.tail(60));
        }
        try
        {
            return get(path).statusCode() == 200;
        }
        catch (final ConnectException ex)
        {
            return false; // not listening yet
        }
    }

    private HttpResponse<String> get(final String path) throws IOException, InterruptedException
    {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + restPort + path)).timeout(Duration.ofSeconds(30))
            .GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** {@code PUT /connectors/<name>/config}: creates (or updates) a connector; fails unless the worker accepts it. */
    void putConnector(final String name, final Map<String, String> config) throws Exception
    {
        final HttpResponse<String> answer = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + restPort
                + "/connectors/" + name + "/config")).timeout(Duration.ofSeconds(60))
            .header("Content-Type", "application/json").PUT(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(config)))
            .build(), HttpResponse.BodyHandlers.ofString());
        if (answer.statusCode() != 200 && answer.statusCode() != 201)
        {
            throw new AssertionError("PUT connector " + name + ": " + answer.statusCode() + " " + answer.body());
        }
    }

    /** Waits until connector {@code name} and each of its {@code tasks} tasks are RUNNING on this worker. */
    void awaitRunning(final String name, final int tasks)
    {
        final String[] last = {"nothing"};
        await(() ->
        {
            if (!child.alive())
            {
                throw new AssertionError("the worker ended by itself: " + child.tail(60));
            }
            final HttpResponse<String> status = get("/connectors/" + name + "/status");
            last[0] = status.statusCode() + " " + status.body();
            if (status.statusCode() != 200)
            {
                return false;
            }
            final JsonNode s = JSON.readTree(status.body());
            if (s.path("tasks").toString().contains("\"FAILED\"") || "FAILED".equals(s.path("connector").path("state").asText()))
            {
                throw new AssertionError("connector " + name + " failed: " + s);
            }
            int running = 0;
            for (final JsonNode task : s.path("tasks"))
            {
                running += "RUNNING".equals(task.path("state").asText()) ? 1 : 0;
            }
            return "RUNNING".equals(s.path("connector").path("state").asText()) && running == tasks;
        }, START, () -> "connector " + name + " and its " + tasks + " task(s) RUNNING, last status " + last[0] + "; " + child.tail(30));
    }

    String tail(final int lines)
    {
        return child.tail(lines);
    }

    /** SIGKILL: nothing flushed, no offsets committed, no group left, no transaction ended. */
    void kill() throws InterruptedException
    {
        child.kill();
    }

    @Override
    public void close() throws InterruptedException
    {
        child.close();
    }
}
