package io.ferrite.perf.sidebyside;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Issue 17's start-up measurement: starts Ferrite brokers as {@code bin/ferrite-server} does ({@code java
 * -XX:SharedArchiveFile=<jar's sibling ferrite-broker-<java.version>.jsa> --add-opens ... -jar JAR}, fresh data
 * directory, free port) N times per jar, the jars alternating within each round (A B, then B A, ...), and prints the
 * medians of spawn -> "Ferrite listening" on its standard output and spawn -> the first acknowledged acks=1 produce
 * ({@link Workloads#firstProduce}, the side-by-side runner's start-up figure), and the broker's CPU time up to that
 * acknowledgement, with the load average.
 * <pre>
 *   StartupTimes ROUNDS JAR [JAR ...]
 * </pre>
 * The first round is a warm-up of this JVM's clients and is not counted.
 */
public final class StartupTimes
{
    private StartupTimes()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        if (args.length < 2)
        {
            System.err.println("usage: StartupTimes ROUNDS JAR [JAR ...]");
            System.exit(2);
        }
        final int rounds = Integer.parseInt(args[0]);
        final List<Path> jars = Arrays.stream(args, 1, args.length).map(a -> Path.of(a).toAbsolutePath()).toList();
        final List<List<double[]>> samples = new ArrayList<>();
        jars.forEach(j -> samples.add(new ArrayList<>()));
        final List<String> loads = new ArrayList<>();
        for (int round = 0; round <= rounds; round++)
        {
            loads.add(Machine.loadAverage());
            for (int k = 0; k < jars.size(); k++)
            {
                final int i = round % 2 == 0 ? k : jars.size() - 1 - k;
                final double[] times = once(jars.get(i));
                System.out.printf(Locale.ROOT, "round %d %s: listening %.0f ms, first produce %.0f ms, broker CPU %.0f ms "
                    + "(%.0f at listening) (load %s)%n", round, jars.get(i), times[0], times[1], times[2], times[3], Machine.loadAverage());
                if (round > 0)
                {
                    samples.get(i).add(times);
                }
            }
        }
        System.out.printf(Locale.ROOT, "%nmedians over %d rounds, load averages at each round's start %s%n", rounds, loads);
        for (int i = 0; i < jars.size(); i++)
        {
            System.out.printf(Locale.ROOT, "%s: listening %.0f ms, first acknowledged produce %.0f ms, broker CPU to it %.0f ms "
                + "(%.0f ms at listening)%n", jars.get(i), median(samples.get(i), 0), median(samples.get(i), 1), median(samples.get(i), 2),
                median(samples.get(i), 3));
        }
    }

    private static double median(final List<double[]> samples, final int column)
    {
        final double[] v = samples.stream().mapToDouble(s -> s[column]).sorted().toArray();
        return v.length == 0 ? Double.NaN : v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    /**
     * One start: {ms to "Ferrite listening", ms to the first acknowledged produce, the broker's CPU time (user + system,
     * all threads, 10 ms ticks) at that produce's acknowledgement: on a loaded machine the steadier figure, and at
     * listening}.
     */
    private static double[] once(final Path jar) throws Exception
    {
        final Path dir = Files.createTempDirectory("startup-times");
        final int port = ChildPorts.take();
        final List<String> command = new ArrayList<>(List.of(BrokerProcess.javaBinary()));
        command.addAll(BrokerProcess.classDataOptions(jar));
        command.addAll(List.of("--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "--add-opens", "java.base/java.nio=ALL-UNNAMED",
            "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "-jar", jar.toString(),
            "--override", "listeners=PLAINTEXT://127.0.0.1:" + port, "--override", "log.dirs=" + dir.resolve("data")));
        final long spawned = System.nanoTime();
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try
        {
            final CompletableFuture<Long> listening = new CompletableFuture<>();
            final CompletableFuture<Long> cpuAtListening = new CompletableFuture<>();
            final Thread reader = new Thread(() -> readOutput(process, listening, cpuAtListening), "broker-output");
            reader.setDaemon(true);
            reader.start();
            final long acked = new Workloads("127.0.0.1:" + port, p -> System.out.println("PROBLEM " + p)).firstProduce("startup", 60_000);
            final long cpu = BrokerProcess.cpuNanos(process.pid());
            final long listened = listening.get(60, TimeUnit.SECONDS);
            return new double[] {(listened - spawned) / 1e6, (acked - spawned) / 1e6, cpu / 1e6, cpuAtListening.get() / 1e6};
        }
        finally
        {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS))
            {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            try (var files = Files.walk(dir))
            {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** Reads the broker's output, completing {@code listening} at its "Ferrite listening" line (nanoTime then). */
    private static void readOutput(final Process process, final CompletableFuture<Long> listening,
        final CompletableFuture<Long> cpuAtListening)
    {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while ((line = out.readLine()) != null)
            {
                if (!listening.isDone() && line.startsWith("Ferrite listening"))
                {
                    listening.complete(System.nanoTime());
                    cpuAtListening.complete(BrokerProcess.cpuNanos(process.pid()));
                }
                else if (!listening.isDone())
                {
                    System.out.println("broker: " + line);
                }
            }
            listening.completeExceptionally(new IllegalStateException("the broker exited without listening"));
        }
        catch (final IOException ex)
        {
            listening.completeExceptionally(ex);
        }
    }
}
