package io.ferrite.perf.sidebyside;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferrite.perf.sidebyside.BrokerProcess.Kind;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The measures of a side-by-side run, each a figure per round for each system, in the order first added, as
 * {@link SideBySideReport} reads them from the JSON's {@code metrics}: name, unit, which way is better, the target of
 * the day ({@link SideBySideTargets}) and the Kafka and Ferrite figures.
 */
final class MetricTable
{
    private record Metric(String name, String unit, boolean higherBetter, Double target, Map<Kind, List<Double>> values)
    {
    }

    private final Map<String, Metric> metrics = new LinkedHashMap<>();

    void add(final Kind kind, final String name, final String unit, final boolean higherBetter, final double value)
    {
        metrics.computeIfAbsent(name + "\u0000" + unit,
                k -> new Metric(name, unit, higherBetter, SideBySideTargets.of(name, unit), new LinkedHashMap<>()))
            .values().computeIfAbsent(kind, k -> new ArrayList<>()).add(value);
    }

    /** Writes every measure into {@code metrics} (the JSON's array), figures rounded to thousandths. */
    void writeTo(final ArrayNode metrics)
    {
        for (final Metric m : this.metrics.values())
        {
            final ObjectNode node = metrics.addObject();
            node.put("name", m.name());
            node.put("unit", m.unit());
            node.put("better", m.higherBetter() ? "higher" : "lower");
            if (m.target() != null)
            {
                node.put("target", m.target());
            }
            final ArrayNode k = node.putArray("kafka");
            m.values().getOrDefault(Kind.KAFKA, List.of()).forEach(v -> k.add(round3(v)));
            final ArrayNode f = node.putArray("ferrite");
            m.values().getOrDefault(Kind.FERRITE, List.of()).forEach(v -> f.add(round3(v)));
        }
    }

    static double round3(final double v)
    {
        return Math.round(v * 1000) / 1000.0;
    }
}
