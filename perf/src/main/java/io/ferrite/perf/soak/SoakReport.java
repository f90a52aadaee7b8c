package io.ferrite.perf.soak;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.Iterator;
import java.util.Map;

/** The markdown of one soak run's JSON ({@link Soak}): the verdict, what was injected, the clients' counts, problems. */
public final class SoakReport
{
    static final String KIND = "ferrite-soak";

    private SoakReport()
    {
    }

    public static boolean isSoak(final JsonNode json)
    {
        return KIND.equals(json.path("kind").asText());
    }

    public static String render(final JsonNode json)
    {
        final JsonNode meta = json.path("meta");
        final JsonNode check = json.path("check");
        final StringBuilder md = new StringBuilder();
        md.append("# Soak: ").append(meta.path("system").asText()).append(", seed ").append(meta.path("seed").asText())
            .append("\n\n");
        md.append(meta.path("date").asText()).append(", commit ").append(meta.path("commit").asText()).append(", ")
            .append(meta.path("cpu").asText()).append(" (").append(meta.path("cores").asText()).append(" cores), load ")
            .append(json.path("load").asText()).append(" (1/5/15-minute averages before -> after; the machine is shared)\n\n");
        md.append("`").append(meta.path("command").asText()).append("`: ").append(meta.path("seconds").asText())
            .append(" s of faults (").append(meta.path("faults").asText()).append("; gap ").append(meta.path("gapMs").asText())
            .append(" ms, hold ").append(meta.path("holdMs").asText()).append(" ms), ").append(meta.path("producers").asText())
            .append(" idempotent acks=all producers at ").append(meta.path("ratePerProducer").asText())
            .append(" records/s each, ").append(meta.path("consumers").asText()).append(" consumers, ")
            .append(meta.path("partitions").asText()).append(" partitions, RF 3, min.insync.replicas 2\n\n");
        if (check.isMissingNode())
        {
            md.append("**No check ran** (see the problems below).\n\n");
        }
        else
        {
            md.append("| verdict | acknowledged | of them without offset | consumed | lost | duplicated | reordered | "
                + "divergent partitions | replicas behind | consumer offset backwards | consumed then disappeared |\n"
                + "|---|---|---|---|---|---|---|---|---|---|---|\n");
            md.append("| ").append(check.path("ok").asBoolean() ? "**ok**" : "**VIOLATED**");
            for (final String f : new String[] {"acknowledged", "acknowledgedOffsetUnknown", "consumed", "lost", "duplicated",
                "reordered", "divergentPartitions", "replicasBehind", "consumerOffsetWentBackwards", "consumedThenDisappeared"})
            {
                md.append(" | ").append(check.path(f).asText());
            }
            md.append(" |\n\n");
            md.append("Heal to full ISR: ").append(json.path("healToFullIsrMs").asText()).append(" ms. High watermarks: ")
                .append(json.path("highWatermarks").toString()).append(".\n\n");
            final Iterator<Map.Entry<String, JsonNode>> samples = check.path("samples").fields();
            while (samples.hasNext())
            {
                final Map.Entry<String, JsonNode> s = samples.next();
                md.append("Examples of ").append(s.getKey()).append(":\n");
                s.getValue().forEach(v -> md.append("- ").append(v.asText()).append('\n'));
                md.append('\n');
            }
        }
        md.append("## Faults (").append(json.path("faults").size()).append(")\n\n| # | at ms | fault | on | hold ms | healed at ms | error |\n|---|---|---|---|---|---|---|\n");
        for (final JsonNode e : json.path("faults"))
        {
            md.append("| ").append(e.path("index").asText()).append(" | ").append(e.path("startMs").asText()).append(" | ")
                .append(e.path("fault").asText()).append(" | ").append(e.path("detail").asText()).append(" | ")
                .append(e.path("holdMs").asText()).append(" | ").append(e.path("healedMs").asText()).append(" | ")
                .append(e.path("error").asText()).append(" |\n");
        }
        md.append("\n## Clients\n\n");
        for (final JsonNode p : json.path("producers"))
        {
            md.append("- producer ").append(p.path("id").asText()).append(": sent ").append(p.path("sent").asText())
                .append(", acknowledged ").append(p.path("acknowledged").asText()).append(", failed ")
                .append(p.path("errors").toString()).append('\n');
        }
        for (final JsonNode c : json.path("consumers"))
        {
            md.append("- consumer ").append(c.path("id").asText()).append(": read ").append(c.path("read").asText())
                .append(", errors ").append(c.path("errors").toString()).append('\n');
        }
        md.append("\nConnections the proxies accepted, by link (from->to; 0: the soak's clients): ")
            .append(json.path("connectionsAccepted").toString()).append('\n');
        md.append("\n## Problems (").append(json.path("problems").size()).append(")\n\n");
        json.path("problems").forEach(p -> md.append("- ").append(p.asText().replace('\n', ' ')).append('\n'));
        return md.toString();
    }
}
