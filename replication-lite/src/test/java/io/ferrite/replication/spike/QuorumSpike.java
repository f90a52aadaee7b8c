package io.ferrite.replication.spike;

import io.ferrite.testing.LoopbackPorts;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * SPIKE driver (issue 14): a 3-voter quorum of {@link KraftSpikeNode} or {@link JraftSpikeNode} child
 * JVMs on loopback. Measures start-up to the first leader and its first committed record, the leader's
 * one-record commit latency (1000 sequential appends after 100 warm-up), per-node threads / listening
 * ports / RSS, and failover: SIGKILL the leader, time until a new leader committed a record, restart the
 * killed voter, wait until it has that record, repeat. Run by hand (not a test):
 * {@code java -cp <test classpath> io.ferrite.replication.spike.QuorumSpike kraft|jraft trials}.
 */
public final class QuorumSpike
{
    private static final Pattern FIELD = Pattern.compile("(\\w+)=(\\S+)");

    private final String library;
    private final Class<?> nodeMain;
    private final Path root;
    private final String voters;
    private final Process[] nodes = new Process[3];
    private final BlockingQueue<String> events = new LinkedBlockingQueue<>();
    private final PrintStream log;

    private QuorumSpike(final String library) throws IOException
    {
        this.library = library;
        this.nodeMain = library.equals("kraft") ? KraftSpikeNode.class : JraftSpikeNode.class;
        this.root = Files.createTempDirectory("quorum-spike-" + library);
        final StringBuilder v = new StringBuilder();
        final int[] ports = LoopbackPorts.take(3);
        for (int id = 1; id <= 3; id++)
        {
            v.append(id == 1 ? "" : ",").append(id).append("@127.0.0.1:").append(ports[id - 1]);
        }
        this.voters = v.toString();
        this.log = new PrintStream(Files.newOutputStream(root.resolve("events.log")), true, StandardCharsets.UTF_8);
    }

    public static void main(final String[] args) throws Exception
    {
        final QuorumSpike spike = new QuorumSpike(args[0]);
        try
        {
            spike.run(Integer.parseInt(args[1]));
        }
        finally
        {
            for (final Process p : spike.nodes)
            {
                if (p != null)
                {
                    p.destroyForcibly();
                }
            }
        }
    }

    private void run(final int trials) throws Exception
    {
        say("library=" + library + " voters=" + voters + " dir=" + root + " jdk=" + System.getProperty("java.version"));
        final long launched = System.currentTimeMillis();
        for (int id = 1; id <= 3; id++)
        {
            launch(id, true);
        }
        final var firstLeader = await(e -> e.startsWith("LEADER") && field(e, "node").equals(field(e, "leader")), 60);
        final var firstMark = await(e -> e.startsWith("MARK") && field(e, "record").startsWith("mark:" + field(e, "node") + ":"), 60);
        say("startup launch->leader ms=" + (wall(firstLeader) - launched) + " launch->first commit ms=" + (wall(firstMark) - launched));
        final String bench = await(e -> e.startsWith("BENCH"), 120);
        say("commit latency " + bench);
        say(await(e -> e.startsWith("FOOTPRINT"), 30));
        for (int id = 1; id <= 3; id++)
        {
            say("node " + id + " pid=" + nodes[id - 1].pid() + " " + processFootprint(nodes[id - 1].pid()));
        }
        int leader = Integer.parseInt(field(firstLeader, "leader"));
        final long[] failovers = new long[trials];
        for (int t = 0; t < trials; t++)
        {
            final int killed = leader;
            final long killedAt = System.currentTimeMillis();
            nodes[killed - 1].destroyForcibly().waitFor();
            final String mark = await(e -> e.startsWith("MARK") && !field(e, "node").equals(Integer.toString(killed)) &&
                field(e, "record").startsWith("mark:" + field(e, "node") + ":"), 60);
            failovers[t] = wall(mark) - killedAt;
            leader = Integer.parseInt(field(mark, "node"));
            say("failover " + t + ": killed " + killed + ", new leader " + leader + " committed " +
                field(mark, "record") + " after ms=" + failovers[t]);
            launch(killed, false);
            final String record = field(mark, "record");
            await(e -> e.startsWith("MARK") && field(e, "node").equals(Integer.toString(killed)) &&
                field(e, "record").equals(record), 60);
        }
        Arrays.sort(failovers);
        say("failover ms sorted=" + Arrays.toString(failovers) + " median=" + failovers[trials / 2]);
    }

    private void launch(final int id, final boolean bench) throws IOException
    {
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m", "-Xms32m"));
        command.addAll(Arrays.asList(System.getProperty("spike.jvm.opens", "").split(" ")));
        command.removeIf(String::isEmpty);
        for (final String knob : List.of("spike.linger.ms", "spike.election.ms"))
        {
            if (System.getProperty(knob) != null)
            {
                command.add("-D" + knob + "=" + System.getProperty(knob));
            }
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), nodeMain.getName(),
            Integer.toString(id), root.resolve("node-" + id).toString(), voters, Boolean.toString(bench)));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        nodes[id - 1] = process;
        final Thread reader = new Thread(() ->
        {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
            {
                String line;
                while ((line = in.readLine()) != null)
                {
                    log.println(id + "| " + line);
                    if (line.matches("^[A-Z_]+ wall=.*"))
                    {
                        events.add(line);
                        if (line.startsWith("STARTED") || line.startsWith("FATAL") || line.startsWith("APPEND_FAILED"))
                        {
                            say(line);
                        }
                    }
                }
            }
            catch (final IOException ex)
            {
                // the child died
            }
        }, "spike-out-" + id);
        reader.setDaemon(true);
        reader.start();
    }

    private String await(final Predicate<String> wanted, final int seconds) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true)
        {
            final String event = events.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (event == null)
            {
                throw new IllegalStateException("no such event within " + seconds + " s; see " + root.resolve("events.log"));
            }
            if (wanted.test(event))
            {
                return event;
            }
        }
    }

    /** Threads and RSS from /proc, TCP ports the process listens on from ss. */
    private static String processFootprint(final long pid) throws Exception
    {
        String threads = "?";
        String rss = "?";
        for (final String line : Files.readAllLines(Path.of("/proc/" + pid + "/status")))
        {
            if (line.startsWith("Threads:"))
            {
                threads = line.replaceAll("[^0-9]", "");
            }
            if (line.startsWith("VmRSS:"))
            {
                rss = Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024 + "MiB";
            }
        }
        final Process ss = new ProcessBuilder("ss", "-ltnpH").redirectErrorStream(true).start();
        final List<String> ports = new ArrayList<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(ss.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while ((line = in.readLine()) != null)
            {
                if (line.contains("pid=" + pid + ","))
                {
                    ports.add(line.trim().split("\\s+")[3]);
                }
            }
        }
        return "osThreads=" + threads + " rss=" + rss + " listening=" + ports;
    }

    private static String field(final String event, final String name)
    {
        final Matcher m = FIELD.matcher(event);
        while (m.find())
        {
            if (m.group(1).equals(name))
            {
                return m.group(2);
            }
        }
        return "";
    }

    private static long wall(final String event)
    {
        return Long.parseLong(field(event, "wall"));
    }

    private void say(final String line)
    {
        System.out.println("[" + library + "] " + line);
        log.println("DRIVER " + line);
    }
}
