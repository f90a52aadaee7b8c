package io.ferrite.perf.sidebyside;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferrite.perf.sidebyside.BrokerProcess.Kind;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The failover time of the latest kill-the-leader record ({@code perf/bin/kill-the-leader}'s JSON in
 * {@code jmh-results/kill-the-leader/}, named by its UTC start so the last name is the latest): for each system, each
 * acks=all case's time from the leader's SIGKILL to the first acknowledgement of a record sent after it
 * ({@code killToFirstAckMs}), in seconds. Not measured by the runner that reads it: the record says when, at which
 * commit and under which load it was taken ({@link #describe}).
 *
 * @param file      the record's file name
 * @param meta      the record's {@code meta} (date, commit, rate, seconds, rounds)
 * @param seconds   per system, the acks=all cases' figures (a case without a first acknowledgement has none)
 * @param load      per system, the load averages the record gives before and after it
 */
record FailoverRecord(String file, JsonNode meta, Map<Kind, List<Double>> seconds, Map<Kind, String> load)
{
    /** The latest kill-the-leader record in {@code dir}, or null when there is none (or no such folder). */
    static FailoverRecord latest(final Path dir) throws IOException
    {
        if (!Files.isDirectory(dir))
        {
            return null;
        }
        final List<Path> files;
        try (Stream<Path> list = Files.list(dir))
        {
            files = list.filter(p -> p.getFileName().toString().endsWith(".json")).sorted().toList();
        }
        final ObjectMapper mapper = new ObjectMapper();
        for (int i = files.size() - 1; i >= 0; i--)
        {
            final JsonNode run = mapper.readTree(files.get(i).toFile());
            if (KillTheLeaderReport.isKillTheLeader(run))
            {
                return of(files.get(i).getFileName().toString(), run);
            }
        }
        return null;
    }

    static FailoverRecord of(final String file, final JsonNode run)
    {
        final Map<Kind, List<Double>> seconds = new EnumMap<>(Kind.class);
        final Map<Kind, String> load = new EnumMap<>(Kind.class);
        for (final JsonNode system : run.path("systems"))
        {
            final Kind kind = Kind.valueOf(system.path("system").asText().toUpperCase(Locale.ROOT));
            load.put(kind, system.path("load").asText());
            final List<Double> figures = new ArrayList<>();
            for (final JsonNode c : system.path("cases"))
            {
                final long ms = c.path("killToFirstAckMs").asLong(-1);
                if ("all".equals(c.path("acks").asText()) && ms >= 0)
                {
                    figures.add(ms / 1000.0);
                }
            }
            seconds.put(kind, figures);
        }
        return new FailoverRecord(file, run.path("meta"), seconds, load);
    }

    /** The settings line a run that puts these figures beside its own writes. */
    String describe()
    {
        final StringBuilder s = new StringBuilder("failover: not measured by this run but read from the latest kill-the-leader "
            + "record, jmh-results/kill-the-leader/").append(file).append(" (").append(meta.path("date").asText())
            .append(", commit ").append(meta.path("commit").asText()).append(", ").append(meta.path("rate").asInt())
            .append(" records/s for ").append(meta.path("seconds").asInt()).append(" s, ").append(meta.path("rounds").asInt())
            .append(" round(s); 1-, 5-, 15-minute load averages");
        load.forEach((kind, l) -> s.append(' ').append(kind.label).append(' ').append(l).append(';'));
        return s.append(" see kill-the-leader.md): per acks=all case, the time from the leader's SIGKILL to the first "
            + "acknowledgement of a record sent after it").toString();
    }
}
