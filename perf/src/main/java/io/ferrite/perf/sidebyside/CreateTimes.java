package io.ferrite.perf.sidebyside;

import io.ferrite.perf.sidebyside.BrokerProcess.Kind;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * How long Ferrite takes to answer CreateTopics, builds alternated: for each round, each jar given in turn starts a
 * fresh Ferrite (a child JVM as it ships, {@link BrokerProcess}, a fresh data directory), creates {@code --partitions}
 * partitions as topics of {@code --per-topic}, {@code --batch} topics a request ({@link ScaleWorkload#create}, timed to
 * the last answer, as partition-scale times its create step), and stops; one line per run with the load average before
 * and after. Only the create step of {@code partition-scale}, without Kafka or the later steps, so a before and an
 * after build can be interleaved on a shared machine whose load moves between runs.
 * <pre>
 *   java -cp perf/target/classes:$(cat perf/target/runner.classpath) io.ferrite.perf.sidebyside.CreateTimes \
 *     --partitions 1000 --rounds 3 --jars before=/tmp/before/ferrite-broker.jar,after=broker/target/ferrite-broker.jar
 * </pre>
 */
public final class CreateTimes
{
    private CreateTimes()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        int partitions = 1000;
        int perTopic = 10;
        int batch = 100;
        int rounds = 3;
        final List<String[]> jars = new ArrayList<>();
        for (int i = 0; i < args.length; i++)
        {
            switch (args[i])
            {
                case "--partitions" -> partitions = Integer.parseInt(args[++i]);
                case "--per-topic" -> perTopic = Integer.parseInt(args[++i]);
                case "--batch" -> batch = Integer.parseInt(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--jars" ->
                {
                    for (final String labelled : args[++i].split(","))
                    {
                        jars.add(labelled.split("=", 2));
                    }
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (jars.isEmpty())
        {
            throw new IllegalArgumentException("--jars label=path[,label=path...] is required");
        }
        final int topics = partitions / perTopic;
        System.out.printf(Locale.ROOT, "%d partitions as %d topics of %d, %d topics a request, %d rounds, %d cores%n",
            topics * perTopic, topics, perTopic, batch, rounds, Runtime.getRuntime().availableProcessors());
        for (int round = 1; round <= rounds; round++)
        {
            for (final String[] jar : jars)
            {
                System.setProperty("sidebyside.ferrite.jar", jar[1]);
                final String loadBefore = Machine.loadAverages();
                try (BrokerProcess broker = BrokerProcess.start(Kind.FERRITE, "1g", System.getProperty("java.class.path"),
                    List.of(), List.of()))
                {
                    final ScaleWorkload w = new ScaleWorkload(broker.bootstrap(), perTopic, broker.process::isAlive);
                    if (w.awaitUp(System.nanoTime() + TimeUnit.SECONDS.toNanos(120)) < 0)
                    {
                        System.out.printf(Locale.ROOT, "round %d %s: did not start: %s%n", round, jar[0], broker.logTail("broker.log", 20));
                        continue;
                    }
                    final ScaleWorkload.Outcome created = w.create(topics, batch, System.nanoTime() + TimeUnit.SECONDS.toNanos(600));
                    System.out.printf(Locale.ROOT, "round %d %-8s created %d of %d partitions in %.2f s (%.2f ms a partition)%s; load %s -> %s%n",
                        round, jar[0], created.done(), created.wanted(), created.elapsedNanos() / 1e9,
                        created.elapsedNanos() / 1e6 / Math.max(1, created.done()),
                        created.error() == null ? "" : ": " + created.error(), loadBefore, Machine.loadAverages());
                }
            }
        }
    }
}
