package io.ferrite.perf.soak;

import io.ferrite.perf.sidebyside.BrokerProcess.Kind;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The soak's command line:
 * <pre>
 * Soak [--system ferrite|kafka] [--seconds 600] [--seed N] [--faults kill,pause,partition,delay]
 *      [--producers 3] [--rate 100] [--consumers 2] [--partitions 3] [--gap 3000:10000] [--hold 3000:15000]
 *      [--heap 512m] [--override k=v]... [--deadline 240] [--out FILE.json] [--markdown FILE.md]
 * </pre>
 * {@code --rate} is per producer (records per second); {@code --gap} and {@code --hold} are ms ranges: the quiet
 * time before each fault and how long it is held; the seed is drawn at random when not given (and printed).
 */
final class SoakOptions
{
    Kind system = Kind.FERRITE;
    int seconds = 600;
    long seed = System.nanoTime() ^ System.currentTimeMillis();
    Set<String> faults = new LinkedHashSet<>(Nemesis.ALL);
    int producers = 3;
    int rate = 100;
    int consumers = 2;
    int partitions = 3;
    long[] gapMs = {3_000, 10_000};
    long[] holdMs = {3_000, 15_000};
    String heap = "512m";
    final List<String> overrides = new ArrayList<>();
    int deadlineSeconds = 240;
    Path out;
    Path markdown;
    String classPath = System.getProperty("java.class.path");
    String command = "";

    static SoakOptions parse(final String... args)
    {
        final SoakOptions o = new SoakOptions();
        o.command = "soak " + String.join(" ", args);
        for (int i = 0; i < args.length; i++)
        {
            switch (args[i])
            {
                case "--system" -> o.system = Kind.valueOf(args[++i].toUpperCase(java.util.Locale.ROOT));
                case "--seconds" -> o.seconds = Integer.parseInt(args[++i]);
                case "--seed" -> o.seed = Long.parseLong(args[++i]);
                case "--faults" ->
                {
                    o.faults = new LinkedHashSet<>(List.of(args[++i].split(",")));
                    Nemesis.known(o.faults);
                }
                case "--producers" -> o.producers = Integer.parseInt(args[++i]);
                case "--rate" -> o.rate = Integer.parseInt(args[++i]);
                case "--consumers" -> o.consumers = Integer.parseInt(args[++i]);
                case "--partitions" -> o.partitions = Integer.parseInt(args[++i]);
                case "--gap" -> o.gapMs = range(args[++i]);
                case "--hold" -> o.holdMs = range(args[++i]);
                case "--heap" -> o.heap = args[++i];
                case "--override" -> o.overrides.add(args[++i]);
                case "--deadline" -> o.deadlineSeconds = Integer.parseInt(args[++i]);
                case "--out" -> o.out = Path.of(args[++i]);
                case "--markdown" -> o.markdown = Path.of(args[++i]);
                case "--classpath" -> o.classPath = args[++i];
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        return o;
    }

    private static long[] range(final String s)
    {
        final String[] f = s.split(":");
        final long low = Long.parseLong(f[0]);
        return new long[] {low, f.length > 1 ? Long.parseLong(f[1]) : low};
    }
}
