package io.ferrite.broker.metrics;

import org.agrona.concurrent.status.CountersReader;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One reading of the counters as rows: a counter per row, or by default the network threads' counters of one figure
 * summed into one row (their labels end with {@code " net=N"}). Rows keep the order of the counters' ids (the order
 * they were allocated: network figures first, then topics as they were created).
 */
final class CounterTable
{
    /** One row: its label, value and Agrona type id ({@link CounterTypes}). */
    record Row(String label, long value, int typeId)
    {
        /** A level, not a count: a rate of it means nothing. */
        boolean isGauge()
        {
            return typeId == CounterTypes.CONNECTIONS_OPEN || typeId == CounterTypes.CONSUMER_LAG ||
                typeId == CounterTypes.LAG_NOT_COUNTED || typeId == CounterTypes.GROUPS || typeId == CounterTypes.OFFSETS;
        }

        /** Shown at 0 too: a lag counter exists only while its group has an offset committed, and 0 is its news. */
        boolean shownAtZero()
        {
            return typeId == CounterTypes.CONSUMER_LAG;
        }
    }

    private CounterTable()
    {
    }

    static List<Row> read(final CountersReader reader, final boolean perThread, final String filter)
    {
        return read(reader, perThread, filter, null);
    }

    /** As above; with {@code group}, only that consumer group's lag counters. */
    static List<Row> read(final CountersReader reader, final boolean perThread, final String filter, final String group)
    {

        final Map<String, long[]> sums = new LinkedHashMap<>(); // label -> {sum, type id}
        reader.forEach((value, id, label) ->
        {
            final int typeId = reader.getCounterTypeId(id);
            // a lag counter's label ends with its group, which may hold " net=": never a network thread's suffix
            final String name = perThread || typeId == CounterTypes.CONSUMER_LAG ? label : withoutThread(label);
            if ((filter == null || name.contains(filter)) && (group == null ||
                typeId == CounterTypes.CONSUMER_LAG && LagCounters.isOf(label, group)))
            {
                final long[] sum = sums.computeIfAbsent(name, k -> new long[] {0, typeId});
                sum[0] += value;
            }
        });
        final List<Row> rows = new ArrayList<>(sums.size());
        sums.forEach((label, sum) -> rows.add(new Row(label, sum[0], (int)sum[1])));
        return rows;
    }

    static String withoutThread(final String label)
    {
        final int at = label.lastIndexOf(" net=");
        return at < 0 ? label : label.substring(0, at);
    }
}
