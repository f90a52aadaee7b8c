package io.ferrite.broker.metrics;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code ferrite-stat [--dir LOG_DIR] [--once] [--filter TEXT] [--group GROUP] [--all] [--per-thread]}: reads a broker's counters
 * file from another process (as Aeron's AeronStat reads {@code cnc.dat}) and prints them as a table, every second
 * until interrupted, or once. It reads what the broker wrote last, whether the broker runs or died; a restarted
 * broker's new file is picked up at the next refresh (the file is mapped again each time; a refresh that finds none,
 * or one not written yet, prints a waiting line and tries again at the next).
 */
@Command(name = "ferrite-stat", mixinStandardHelpOptions = true, version = "Ferrite 0.1.0",
    description = "Shows a Ferrite broker's counters (its log directory's " + CountersFile.NAME + ").")
public final class FerriteStat implements Callable<Integer>
{
    @Option(names = "--dir", paramLabel = "LOG_DIR", description = "the broker's first log directory (default: ./data)")
    Path dir = Path.of("data");

    @Option(names = "--once", description = "print once and exit")
    boolean once;

    @Option(names = "--filter", paramLabel = "TEXT", description = "only the counters whose label contains TEXT")
    String filter;

    @Option(names = "--group", paramLabel = "GROUP", description = "only consumer group GROUP's lag, per partition")
    String group;

    @Option(names = "--all", description = "also the counters still at 0")
    boolean all;

    @Option(names = "--per-thread", description = "one row per network thread instead of their sum")
    boolean perThread;

    @Option(names = "--interval", paramLabel = "MS", description = "refresh interval in ms (default: 1000)")
    long intervalMs = 1000;

    private final PrintStream out = System.out;
    private final Map<String, Long> previous = new HashMap<>();
    private long previousNs;

    public static void main(final String[] args)
    {
        System.exit(new CommandLine(new FerriteStat()).execute(args));
    }

    @Override
    public Integer call() throws Exception
    {
        if (!Files.exists(dir.resolve(CountersFile.NAME)))
        {
            System.err.println("ferrite-stat: no " + CountersFile.NAME + " in " + dir.toAbsolutePath() +
                " (is it the broker's first log directory, and has the broker started there?)");
            return 1;
        }
        if (once)
        {
            print(false);
            return 0;
        }
        while (!Thread.currentThread().isInterrupted())
        {
            out.print("\u001b[H\u001b[2J"); // home, clear screen
            try
            {
                print(true);
            }
            catch (final java.io.IOException | IllegalStateException ex)
            {
                // a broker starting: its file unlinked and not made yet, or made and its header not written yet
                out.printf("%s  waiting for %s: %s%n", Instant.now(), dir.resolve(CountersFile.NAME), ex.getMessage());
            }
            out.flush();
            Thread.sleep(intervalMs);
        }
        return 0;
    }

    /**
     * Whether process {@code pid} runs and is the one that made the file at {@code fileStartMs}: a process of that id
     * started after it (a reused id) is not (a second of slack: Linux gives a process's start to the boot's second).
     */
    static boolean running(final long pid, final long fileStartMs)
    {
        return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
            .map(p -> p.info().startInstant().map(s -> s.toEpochMilli() <= fileStartMs + 1000).orElse(true))
            .orElse(false);
    }

    private void print(final boolean rates) throws java.io.IOException
    {
        final CountersFile file = CountersFile.open(dir);
        try
        {
            final long pid = file.pid();
            final boolean alive = running(pid, file.startTimeMs());
            final List<CounterTable.Row> rows = CounterTable.read(file.reader(), perThread, filter, group);
            // the header's time is the reading's, as the rates' interval is: stamped before the process check and the
            // reading (as it was), it ran ahead of the values by their time, which a loaded machine stretches
            final Instant readAt = Instant.now();
            final long nowNs = System.nanoTime();
            out.printf("%s  broker pid %d (%s), started %s%n", readAt, pid, alive ? "running" : "not running",
                Instant.ofEpochMilli(file.startTimeMs()));
            final double seconds = previousNs == 0 ? 0 : (nowNs - previousNs) / 1e9; // the real interval, not the asked one
            previousNs = nowNs;
            int width = 5;
            for (final CounterTable.Row row : rows)
            {
                width = Math.max(width, row.label().length());
            }
            out.printf(rates ? "%-" + width + "s %20s %14s%n" : "%-" + width + "s %20s%n", "label", "value", "per second");
            for (final CounterTable.Row row : rows)
            {
                if (row.value() == 0 && !all && !row.shownAtZero())
                {
                    continue;
                }
                if (rates)
                {
                    final Long before = previous.put(row.label(), row.value());
                    final String perSecond = row.isGauge() || seconds == 0 ? "" :
                        String.format("%,.0f", (row.value() - (before == null ? 0 : before)) / seconds);
                    out.printf("%-" + width + "s %,20d %14s%n", row.label(), row.value(), perSecond);
                }
                else
                {
                    out.printf("%-" + width + "s %20d%n", row.label(), row.value());
                }
            }
        }
        finally
        {
            file.close();
        }
    }
}
