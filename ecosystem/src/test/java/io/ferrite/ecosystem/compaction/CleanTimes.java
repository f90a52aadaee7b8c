package io.ferrite.ecosystem.compaction;

import io.ferrite.testing.BrokerNode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * {@link CleanerSideBySideRun}'s times of one clean, read the same way from both brokers: the clean's start from the
 * broker's own INFO line where its cleaner begins a log (Kafka 4.4's {@code Cleaner}: "Beginning cleaning of log
 * <topic-partition>"; Ferrite's {@code CleanerAgent}: "beginning the clean of <topic-partition>", logged at the same
 * point: the log chosen, before its offset map), its end from the {@code cleaner-offset-checkpoint} file's mtime (the
 * event the run's 10 ms poll waits for, read without the poll's period); the cleaner thread's CPU and run-queue wait
 * over the run's window from {@code /proc/<pid>/task/<tid>/schedstat} (the thread found by its name); and, from a
 * Ferrite started with {@code -Dferrite.cleaner.stageTiming=true}, its {@code CleanerTiming} line: the clean stage by
 * stage. Both brokers get the same JVM options ({@link #JVM_ARGS}): their log lines with a wall-clock time to the
 * millisecond, the cleaner's loggers at INFO. The times: {@code releasedUs}, {@code alteredUs}, {@code seenUs} the run's
 * (the release, the alter's answer, the poll that saw the checkpoint; wall clock, us); {@code startLineUs} the broker's
 * start line (ms precision; -1 when not found); {@code checkpointUs} the checkpoint's mtime; {@code cleaner} the cleaner
 * thread's CPU and run-queue wait over the window (null when not read); {@code stagesStartUs}, {@code stagesTotalMs}
 * (wall, CPU, wait) and {@code stages} Ferrite's stage line (-1, null and empty without one).
 */
record CleanTimes(long releasedUs, long alteredUs, long seenUs, long startLineUs, long checkpointUs, ThreadTimes cleaner,
    long stagesStartUs, double[] stagesTotalMs, List<Stage> stages)
{
    /** {@code -Dferrite.cleaner.perf.stages=false}: Ferrite's broker without its stage timing. */
    private static final boolean STAGES = !"false".equals(System.getProperty("ferrite.cleaner.perf.stages"));
    private static final String DATE_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSZ";
    static final List<String> JVM_ARGS = List.of(
        "-Dorg.slf4j.simpleLogger.showDateTime=true",
        "-Dorg.slf4j.simpleLogger.dateTimeFormat=" + DATE_FORMAT,
        "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.storage.internals.log=info",
        "-Dorg.slf4j.simpleLogger.log.io.ferrite.log.CleanerAgent=info",
        "-Dorg.slf4j.simpleLogger.log.io.ferrite.log.CleanerTiming=info",
        "-Dferrite.cleaner.stageTiming=" + STAGES);
    private static final DateTimeFormatter LINE_TIME = DateTimeFormatter.ofPattern(DATE_FORMAT);
    private static final Pattern TIMED_LINE = Pattern.compile("^(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}[+-]\\d{4}) (.*)$");
    private static final Pattern STAGE_LINE = Pattern.compile("clean stages of (\\S+): start (\\d+) us, wall ([-\\d.]+) cpu ([-\\d.]+) "
        + "wait ([-\\d.]+);(.*)$");
    private static final Pattern STAGE = Pattern.compile("(\\w+)=([-\\d.]+)/([-\\d.]+)/([-\\d.]+)/(\\d+)");
    /** The cleaner thread's name as the kernel keeps it (15 characters): Kafka's {@code kafka-log-cleaner-thread-0}, Ferrite's {@code ferrite-log-cleaner-0}. */
    private static final List<String> CLEANER_THREADS = List.of("kafka-log-clean", "ferrite-log-cle");

    /** A thread's CPU time and run-queue wait, ns. */
    record ThreadTimes(long cpuNs, long waitNs)
    {
    }

    /** One stage of Ferrite's clean: wall, CPU and run-queue wait, ms, and how many intervals. */
    record Stage(String name, double wallMs, double cpuMs, double waitMs, int count)
    {
    }

    /**
     * The times of the first clean of {@code partition} that began after {@code releasedUs} (the wall clock, us, just
     * before the lag's release); {@code before} and {@code after} the cleaner thread's times at the window's ends.
     */
    static CleanTimes read(final BrokerNode broker, final String partition, final Path checkpoint, final long releasedUs,
        final long alteredUs, final long seenUs, final ThreadTimes before, final ThreadTimes after) throws IOException, InterruptedException
    {
        // Ferrite logs its stages after the checkpoint, which the run may have seen first: a few seconds for the line
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        CleanTimes times = readOnce(broker, partition, checkpoint, releasedUs, alteredUs, seenUs, before, after);
        while (STAGES && broker.kind == BrokerNode.Kind.FERRITE && times.stagesTotalMs == null && System.nanoTime() - deadline < 0)
        {
            Thread.sleep(20);
            times = readOnce(broker, partition, checkpoint, releasedUs, alteredUs, seenUs, before, after);
        }
        return times;
    }

    private static CleanTimes readOnce(final BrokerNode broker, final String partition, final Path checkpoint, final long releasedUs,
        final long alteredUs, final long seenUs, final ThreadTimes before, final ThreadTimes after) throws IOException
    {
        long startLineUs = -1;
        long stagesStartUs = -1;
        double[] totals = null;
        final List<Stage> stages = new ArrayList<>();
        final String kafkaStart = "Beginning cleaning of log " + partition;
        final String ferriteStart = "beginning the clean of " + partition + " ";
        for (final String line : Files.readAllLines(broker.logFile(), StandardCharsets.UTF_8))
        {
            final Matcher timed = TIMED_LINE.matcher(line);
            if (!timed.matches())
            {
                continue;
            }
            final OffsetDateTime at = OffsetDateTime.parse(timed.group(1), LINE_TIME);
            final long atUs = TimeUnit.SECONDS.toMicros(at.toEpochSecond()) + at.getNano() / 1_000;
            final String text = timed.group(2);
            // the line's time is cut to the ms: one that began within the release's ms counts
            if (startLineUs < 0 && atUs >= releasedUs - 1_000 && (text.endsWith(kafkaStart) || text.contains(ferriteStart)))
            {
                startLineUs = atUs;
            }
            final Matcher stageLine = STAGE_LINE.matcher(text);
            if (totals == null && stageLine.find() && stageLine.group(1).equals(partition) && Long.parseLong(stageLine.group(2)) >= releasedUs)
            {
                stagesStartUs = Long.parseLong(stageLine.group(2));
                totals = new double[] {Double.parseDouble(stageLine.group(3)), Double.parseDouble(stageLine.group(4)),
                    Double.parseDouble(stageLine.group(5))};
                final Matcher stage = STAGE.matcher(stageLine.group(6));
                while (stage.find())
                {
                    stages.add(new Stage(stage.group(1), Double.parseDouble(stage.group(2)), Double.parseDouble(stage.group(3)),
                        Double.parseDouble(stage.group(4)), Integer.parseInt(stage.group(5))));
                }
            }
        }
        final long checkpointUs = Files.getLastModifiedTime(checkpoint).to(TimeUnit.MICROSECONDS);
        final ThreadTimes cleaner = before == null || after == null ? null
            : new ThreadTimes(after.cpuNs - before.cpuNs, after.waitNs - before.waitNs);
        return new CleanTimes(releasedUs, alteredUs, seenUs, startLineUs, checkpointUs, cleaner, stagesStartUs, totals, stages);
    }

    /** The clean's own time: from the broker's start line to the checkpoint's mtime; NaN without the line. */
    double cleanSeconds()
    {
        return startLineUs < 0 ? Double.NaN : (checkpointUs - startLineUs) / 1e6;
    }

    /** What the run prints: the window's parts, the cleaner thread's times, and Ferrite's stages. */
    String describe(final String broker, final long dirtyBytes)
    {
        final StringBuilder sb = new StringBuilder(String.format(Locale.ROOT,
            "%s: release -> alter answered %.1f ms -> clean's start line %s -> checkpoint's mtime %.1f ms -> seen by the poll %.1f ms; "
                + "the clean (start line -> checkpoint): %.1f ms, %.1f MB/s; cleaner thread over the window: %s",
            broker, (alteredUs - releasedUs) / 1e3, startLineUs < 0 ? "(not found)" : String.format(Locale.ROOT, "%.1f ms", (startLineUs - releasedUs) / 1e3),
            (checkpointUs - releasedUs) / 1e3, (seenUs - checkpointUs) / 1e3, cleanSeconds() * 1e3, dirtyBytes / 1e6 / cleanSeconds(),
            cleaner == null ? "(not found)" : String.format(Locale.ROOT, "cpu %.1f ms, run-queue wait %.1f ms", cleaner.cpuNs / 1e6,
                cleaner.waitNs / 1e6)));
        if (stagesTotalMs != null)
        {
            sb.append(String.format(Locale.ROOT, "%n%s stages, duty cycle from +%.1f ms after the release: wall %.1f ms, cpu %.1f, "
                + "run-queue wait %.1f, blocked %.1f%n  %-15s %9s %6s %9s %9s %9s %5s", broker, (stagesStartUs - releasedUs) / 1e3,
                stagesTotalMs[0], stagesTotalMs[1], stagesTotalMs[2], stagesTotalMs[0] - stagesTotalMs[1] - stagesTotalMs[2],
                "stage", "wall ms", "share", "cpu ms", "wait ms", "blocked", "count"));
            for (final Stage s : stages)
            {
                sb.append(String.format(Locale.ROOT, "%n  %-15s %9.2f %5.1f%% %9.2f %9.2f %9.2f %5d", s.name, s.wallMs,
                    100 * s.wallMs / stagesTotalMs[0], s.cpuMs, s.waitMs, s.wallMs - s.cpuMs - s.waitMs, s.count));
            }
        }
        return sb.toString();
    }

    /** The JSON fields of these times (no braces). */
    String json(final long dirtyBytes)
    {
        final StringBuilder sb = new StringBuilder(String.format(Locale.ROOT,
            "\"alterMs\": %.1f, \"releaseToCleanStartMs\": %s, \"releaseToCheckpointMs\": %.1f, \"checkpointToSeenMs\": %.1f, "
                + "\"cleanSeconds\": %s, \"cleanMbPerSecond\": %s, \"cleanerCpuMs\": %s, \"cleanerRunQueueWaitMs\": %s",
            (alteredUs - releasedUs) / 1e3, startLineUs < 0 ? "null" : String.format(Locale.ROOT, "%.1f", (startLineUs - releasedUs) / 1e3),
            (checkpointUs - releasedUs) / 1e3, (seenUs - checkpointUs) / 1e3,
            startLineUs < 0 ? "null" : String.format(Locale.ROOT, "%.3f", cleanSeconds()),
            startLineUs < 0 ? "null" : String.format(Locale.ROOT, "%.2f", dirtyBytes / 1e6 / cleanSeconds()),
            cleaner == null ? "null" : String.format(Locale.ROOT, "%.1f", cleaner.cpuNs / 1e6),
            cleaner == null ? "null" : String.format(Locale.ROOT, "%.1f", cleaner.waitNs / 1e6)));
        if (stagesTotalMs != null)
        {
            sb.append(String.format(Locale.ROOT, ", \"stages\": {\"dutyCycleAfterReleaseMs\": %.1f, \"wallMs\": %.3f, \"cpuMs\": %.3f, "
                + "\"runQueueWaitMs\": %.3f", (stagesStartUs - releasedUs) / 1e3, stagesTotalMs[0], stagesTotalMs[1], stagesTotalMs[2]));
            for (final Stage s : stages)
            {
                sb.append(String.format(Locale.ROOT, ", \"%s\": [%.3f, %.3f, %.3f, %d]", s.name, s.wallMs, s.cpuMs, s.waitMs, s.count));
            }
            sb.append('}');
        }
        return sb.toString();
    }

    /** The broker's cleaner thread's times now (the first thread of a cleaner's name), or null when it cannot be read. */
    static ThreadTimes cleanerThread(final BrokerNode broker)
    {
        final Path tasks = Path.of("/proc", Long.toString(broker.pid()), "task");
        try (Stream<Path> threads = Files.list(tasks))
        {
            for (final Path task : (Iterable<Path>) threads.sorted()::iterator)
            {
                final String name;
                try
                {
                    name = Files.readString(task.resolve("comm"), StandardCharsets.UTF_8).strip();
                }
                catch (final IOException gone)
                {
                    continue; // a thread that ended meanwhile
                }
                if (CLEANER_THREADS.contains(name))
                {
                    final String[] fields = Files.readString(task.resolve("schedstat"), StandardCharsets.UTF_8).strip().split(" ");
                    return new ThreadTimes(Long.parseLong(fields[0]), Long.parseLong(fields[1]));
                }
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            return null; // not Linux, or the process gone
        }
        return null;
    }

    /** The machine's load averages (1, 5, 15 min), as {@code /proc/loadavg} says them, or "?". */
    static String loadAverage()
    {
        try
        {
            final String[] fields = Files.readString(Path.of("/proc/loadavg"), StandardCharsets.UTF_8).split(" ");
            return fields[0] + " " + fields[1] + " " + fields[2];
        }
        catch (final IOException | RuntimeException ex)
        {
            return "?";
        }
    }
}
