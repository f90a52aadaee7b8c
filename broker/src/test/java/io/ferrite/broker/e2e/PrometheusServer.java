package io.ferrite.broker.e2e;

import io.ferrite.testing.LoopbackPorts;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real Prometheus server (Debian's {@code prometheus} package, {@value #BINARY}; .ci/run installs it) in a child
 * process, scraping one target every second, with its own storage in a temporary directory and its web API on a
 * loopback port; queried through its HTTP API ({@code /api/v1/query}). Stopped with SIGTERM at {@link #close}
 * (SIGKILL if it does not end within 10 s).
 */
final class PrometheusServer implements AutoCloseable
{
    static final String BINARY = "/usr/bin/prometheus";
    /** One sample of an instant vector: {@code "value":[<time>,"<value>"]}. */
    private static final Pattern VALUE = Pattern.compile("\"value\":\\[[0-9.e+-]+,\"([^\"]+)\"\\]");
    /** The samples of a range vector's series: {@code "values":[[<time>,"<value>"],...]}. */
    private static final Pattern VALUES = Pattern.compile("\"values\":\\[([^\\]]*\\](,\\[[^\\]]*\\])*)\\]");
    /** One sample within {@link #VALUES}. */
    private static final Pattern SAMPLE = Pattern.compile("\\[([0-9.e+-]+),\"([^\"]+)\"\\]");

    private final Process process;
    private final Path log;
    private final int port;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** Starts Prometheus in {@code dir}, scraping {@code target} ({@code host:port}, path /metrics) as job "ferrite". */
    PrometheusServer(final Path dir, final String target) throws IOException
    {
        if (!Files.isExecutable(Path.of(BINARY)))
        {
            throw new AssertionError(BINARY + " is missing: install Debian's prometheus package "
                + "(apt-get install prometheus; .ci/run does) — this test needs a real Prometheus server");
        }
        this.port = LoopbackPorts.take();
        final Path config = dir.resolve("prometheus.yml");
        Files.writeString(config, String.join("\n",
            "global:",
            "  scrape_interval: 1s",
            "  scrape_timeout: 1s",
            "  evaluation_interval: 1s",
            "scrape_configs:",
            "  - job_name: ferrite",
            "    static_configs:",
            "      - targets: ['" + target + "']",
            ""));
        this.log = dir.resolve("prometheus.log");
        this.process = new ProcessBuilder(BINARY, "--config.file=" + config, "--storage.tsdb.path=" + dir.resolve("tsdb"),
            "--web.listen-address=127.0.0.1:" + port, "--storage.tsdb.retention.time=1h")
            .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    /** Whether it answers ready ({@code /-/ready}). */
    boolean ready()
    {
        try
        {
            return get("/-/ready").statusCode() == 200;
        }
        catch (final IOException ex)
        {
            return false; // not listening yet
        }
    }

    /**
     * The value of {@code query} (PromQL, one series or none expected: wrap it in {@code sum(...)}), or null when the
     * result is empty (not scraped yet).
     */
    Double value(final String query) throws IOException
    {
        final Matcher m = VALUE.matcher(success(query).body());
        return m.find() ? Double.valueOf(m.group(1)) : null;
    }

    private HttpResponse<String> success(final String query) throws IOException
    {
        final HttpResponse<String> answer = get("/api/v1/query?query=" + URLEncoder.encode(query, StandardCharsets.UTF_8));
        if (answer.statusCode() != 200 || !answer.body().contains("\"status\":\"success\""))
        {
            throw new AssertionError("query " + query + " answered " + answer.statusCode() + ": " + answer.body());
        }
        return answer;
    }

    /**
     * The raw samples Prometheus stored for {@code selector} (a range selector of exactly one series, e.g.
     * {@code metric[50000ms] @ 1765071234.567}): {epoch seconds, value} each, oldest first.
     */
    List<double[]> samples(final String selector) throws IOException
    {
        final String body = success(selector).body();
        final Matcher series = VALUES.matcher(body);
        if (!series.find())
        {
            throw new AssertionError("no series for " + selector + ": " + body);
        }
        final List<double[]> samples = new ArrayList<>();
        for (final Matcher m = SAMPLE.matcher(series.group(1)); m.find(); )
        {
            samples.add(new double[] {Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2))});
        }
        if (series.find())
        {
            throw new AssertionError("more than one series for " + selector + ": " + body);
        }
        return samples;
    }

    /** What Prometheus logged, for a failure's message. */
    String log()
    {
        try
        {
            return Files.readString(log, StandardCharsets.UTF_8);
        }
        catch (final IOException ex)
        {
            return "(its log cannot be read: " + ex + ")";
        }
    }

    private HttpResponse<String> get(final String path) throws IOException
    {
        if (!process.isAlive())
        {
            throw new AssertionError("prometheus exited with " + process.exitValue() + ":\n" + log());
        }
        try
        {
            return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IOException(ex);
        }
    }

    @Override
    public void close() throws InterruptedException
    {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS))
        {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
