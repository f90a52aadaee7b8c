package io.ferrite.broker.metrics.prometheus;

import io.ferrite.broker.metrics.BrokerCounters;
import io.ferrite.broker.metrics.CounterReadings;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two group ids too long for a lag counter's label and alike in the bytes that fit stay two {@code kafka_consumergroup_lag}
 * series with their own values (review metrics-review1 M1: they were one series, the sum of both lags).
 */
class LongGroupLagTest
{
    @Test
    void twoLongGroupIdsAlikeInTheirFirstBytesAreTwoSeries()
    {
        final BrokerCounters counters = BrokerCounters.inMemory(1, 4096);
        final String common = "x".repeat(400);
        counters.lag().allocate(common + "-A", "orders", 0).setRelease(5);
        counters.lag().allocate(common + "-B", "orders", 0).setRelease(7);
        assertNotEquals(CounterReadings.lags(counters.reader()).get(0).group(), CounterReadings.lags(counters.reader()).get(1).group());

        final Map<String, Double> points = new HashMap<>();
        for (final MetricSnapshot s : new CountersCollector(counters.reader()).collect())
        {
            if (s.getMetadata().getName().equals("kafka_consumergroup_lag"))
            {
                for (final GaugeSnapshot.GaugeDataPointSnapshot p : ((GaugeSnapshot)s).getDataPoints())
                {
                    points.put(p.getLabels().get("consumergroup"), p.getValue());
                }
            }
        }
        assertEquals(2, points.size(), "one series per group; got " + points);
        assertEquals(java.util.Set.of(5.0, 7.0), java.util.Set.copyOf(points.values()), "each its own lag: " + points);
        points.keySet().forEach(g -> assertTrue(g.startsWith("x".repeat(300)), "the id's first bytes kept: " + g));
    }
}
