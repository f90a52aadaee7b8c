package io.ferrite.broker.metrics.jmx;

import io.ferrite.broker.metrics.CounterReadings;
import io.ferrite.broker.metrics.CounterReadings.Figure;
import io.ferrite.broker.metrics.CounterTypes;
import io.ferrite.broker.metrics.GroupCounters;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;
import java.util.function.ToLongBiFunction;

/**
 * The group coordinator's MBeans under Kafka 4.4's names for classic groups (its {@code GroupCoordinatorMetrics}, read
 * with javap): {@code kafka.server:type=group-coordinator-metrics} with {@code offset-count} and the rate and count of
 * offsets committed, expired and deleted and of rebalances completed; {@code ...,protocol=classic} with {@code
 * group-count}; {@code ...,state=<state>} with {@code classic-group-count}; and the Yammer gauges {@code
 * kafka.coordinator.group:type=GroupMetadataManager,name=NumGroups|NumOffsets|NumGroups<state>}. Read from the counters
 * the coordinator's agent writes ({@link GroupCounters}). The rates are the one-minute rates of a {@link Meter} over the
 * count (Kafka's are windowed rates over its last 30-second samples): close, not equal.
 */
final class GroupCoordinatorBeans
{
    private static final String METRICS = "kafka.server:type=group-coordinator-metrics";
    private static final String MANAGER = "kafka.coordinator.group:type=GroupMetadataManager,name=";

    private GroupCoordinatorBeans()
    {
    }

    /**
     * Registers them through {@code register} (name, bean) over the counters {@code ids} found, their values read with
     * {@code sum} (ids, type id); returns the meters behind the rates, to be ticked.
     */
    static List<Meter> register(final BiConsumer<String, Object> register, final Map<Figure, int[]> ids,
        final ToLongBiFunction<int[], Integer> sum)
    {
        final List<Meter> meters = new ArrayList<>();
        final LongSupplier offsets = figure(ids, sum, CounterTypes.OFFSETS, 0);
        final KafkaMetricsBean coordinator = new KafkaMetricsBean("org.apache.kafka.common.metrics.JmxReporter$KafkaMbean")
            .attribute("offset-count", () -> (double)offsets.getAsLong());
        meter(coordinator, meters, "offset-commit", figure(ids, sum, CounterTypes.OFFSET_COMMITS, 0));
        meter(coordinator, meters, "offset-expiration", figure(ids, sum, CounterTypes.OFFSETS_EXPIRED, 0));
        meter(coordinator, meters, "offset-deletion", figure(ids, sum, CounterTypes.OFFSETS_DELETED, 0));
        meter(coordinator, meters, "group-completed-rebalance", figure(ids, sum, CounterTypes.REBALANCES_COMPLETED, 0));
        register.accept(METRICS, coordinator);
        register.accept(MANAGER + "NumOffsets", new Gauge(offsets::getAsLong));

        final LongSupplier[] states = new LongSupplier[GroupCounters.STATES.length];
        for (int s = 0; s < states.length; s++)
        {
            final LongSupplier count = figure(ids, sum, CounterTypes.GROUPS, s);
            states[s] = count;
            register.accept(METRICS + ",state=" + GroupCounters.STATES[s], new KafkaMetricsBean(
                "org.apache.kafka.common.metrics.JmxReporter$KafkaMbean").attribute("classic-group-count",
                () -> (double)count.getAsLong()));
            register.accept(MANAGER + "NumGroups" + GroupCounters.STATES[s], new Gauge(count::getAsLong));
        }
        final LongSupplier all = () ->
        {
            long total = 0;
            for (final LongSupplier s : states)
            {
                total += s.getAsLong();
            }
            return total;
        };
        register.accept(METRICS + ",protocol=classic", new KafkaMetricsBean(
            "org.apache.kafka.common.metrics.JmxReporter$KafkaMbean").attribute("group-count", () -> (double)all.getAsLong()));
        register.accept(MANAGER + "NumGroups", new Gauge(all::getAsLong));
        return meters;
    }

    private static LongSupplier figure(final Map<Figure, int[]> ids, final ToLongBiFunction<int[], Integer> sum,
        final int typeId, final int code)
    {
        final int[] counters = ids.getOrDefault(new Figure(typeId, CounterReadings.ALL_THREADS, code, null), new int[0]);
        return () -> sum.applyAsLong(counters, typeId);
    }

    /** {@code <name>-rate} (per second, one-minute) and {@code <name>-count} over {@code count}. */
    private static void meter(final KafkaMetricsBean bean, final List<Meter> meters, final String name,
        final LongSupplier count)
    {
        final Meter meter = new Meter(count, "", System.nanoTime());
        meters.add(meter);
        bean.attribute(name + "-rate", meter::getOneMinuteRate).attribute(name + "-count", () -> (double)count.getAsLong());
    }
}
