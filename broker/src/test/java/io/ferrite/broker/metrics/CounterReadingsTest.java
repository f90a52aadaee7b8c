package io.ferrite.broker.metrics;

import io.ferrite.wire.message.ApiKeys;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The counters read by type id and key: summed over the network threads as ferrite-stat sums them by label, per
 * thread when asked, and a topic whose name is longer than the key's room read whole.
 */
class CounterReadingsTest
{
    @Test
    void figuresAreReadByTypeAndKeyAndSummedOverThreads()
    {
        final BrokerCounters counters = BrokerCounters.inMemory(2, 4096);
        final String longName = "t".repeat(200); // Kafka allows 249 bytes; the key holds 104
        final TopicCounters orders = counters.topic("orders");
        final TopicCounters longTopic = counters.topic(longName);
        counters.network(0).produced(orders, 3, 300);
        counters.network(1).produced(orders, 2, 200);
        counters.network(1).produced(longTopic, 1, 50);
        counters.network(0).request(ApiKeys.PRODUCE);
        counters.network(1).request(ApiKeys.PRODUCE);
        counters.network(1).error(ApiKeys.METADATA, io.ferrite.broker.Errors.UNKNOWN_TOPIC_OR_PARTITION);
        counters.network(1).error(ApiKeys.FETCH, (short)29); // TOPIC_AUTHORIZATION_FAILED: not counted one by one

        final Map<CounterReadings.Figure, Long> sums = CounterReadings.summed(counters.reader());
        final int all = CounterReadings.ALL_THREADS;
        assertEquals(5L, sums.get(new CounterReadings.Figure(CounterTypes.TOPIC_RECORDS_IN, all, 0, "orders")));
        assertEquals(500L, sums.get(new CounterReadings.Figure(CounterTypes.TOPIC_BYTES_IN, all, 0, "orders")));
        assertEquals(1L, sums.get(new CounterReadings.Figure(CounterTypes.TOPIC_RECORDS_IN, all, 0, longName)), sums::toString);
        assertEquals(6L, sums.get(new CounterReadings.Figure(CounterTypes.RECORDS_IN, all, 0, null)));
        assertEquals(550L, sums.get(new CounterReadings.Figure(CounterTypes.BYTES_IN, all, 0, null)));
        assertEquals(2L, sums.get(new CounterReadings.Figure(CounterTypes.REQUESTS, all, ApiKeys.PRODUCE.id, null)));
        assertEquals(1L, sums.get(new CounterReadings.Figure(CounterTypes.API_ERRORS, all, ApiKeys.METADATA.id, null)));
        assertEquals(1L, sums.get(new CounterReadings.Figure(CounterTypes.ERROR_CODES, all,
            io.ferrite.broker.Errors.UNKNOWN_TOPIC_OR_PARTITION, null)));
        assertEquals(1L, sums.get(new CounterReadings.Figure(CounterTypes.ERROR_CODES, all, CounterTypes.OTHER_CODE, null)));
        assertEquals("UNKNOWN_TOPIC_OR_PARTITION", CounterReadings.errorName(io.ferrite.broker.Errors.UNKNOWN_TOPIC_OR_PARTITION));
        assertEquals("OTHER", CounterReadings.errorName(CounterTypes.OTHER_CODE));

        final Map<CounterReadings.Figure, Long> perThread = CounterReadings.perThread(counters.reader());
        assertEquals(3L, perThread.get(new CounterReadings.Figure(CounterTypes.TOPIC_RECORDS_IN, 0, 0, "orders")));
        assertEquals(2L, perThread.get(new CounterReadings.Figure(CounterTypes.TOPIC_RECORDS_IN, 1, 0, "orders")));
        // the same figures as ferrite-stat's table, which sums by label
        assertEquals(5L, CounterTable.read(counters.reader(), false, "records in topic=orders").get(0).value());
    }

    @Test
    void theCountersOfAFigureAreFoundOnceAndReadAtEachQuery()
    {
        final BrokerCounters counters = BrokerCounters.inMemory(2, 4096);
        final String shared = "s".repeat(110); // two names alike in the key's 104 bytes: told apart by the label
        final TopicCounters first = counters.topic(shared + "-first");
        final TopicCounters second = counters.topic(shared + "-second");
        final TopicCounters orders = counters.topic("orders");
        final int all = CounterReadings.ALL_THREADS;

        final Map<CounterReadings.Figure, int[]> ids = CounterReadings.ids(counters.reader());
        final int[] produce = ids.get(new CounterReadings.Figure(CounterTypes.REQUESTS, all, ApiKeys.PRODUCE.id, null));
        final int[] ordersIn = ids.get(new CounterReadings.Figure(CounterTypes.TOPIC_RECORDS_IN, all, 0, "orders"));
        final int[] firstIn = ids.get(new CounterReadings.Figure(CounterTypes.TOPIC_RECORDS_IN, all, 0, shared + "-first"));
        final int[] secondIn = ids.get(new CounterReadings.Figure(CounterTypes.TOPIC_RECORDS_IN, all, 0, shared + "-second"));
        assertEquals(2, produce.length, "one counter per network thread");
        assertEquals(2, firstIn.length);
        // values are read when summed, after the ids were found
        counters.network(0).request(ApiKeys.PRODUCE);
        counters.network(1).request(ApiKeys.PRODUCE);
        counters.network(1).request(ApiKeys.PRODUCE);
        counters.network(0).produced(orders, 4, 40);
        counters.network(1).produced(first, 1, 10);
        counters.network(0).produced(second, 2, 20);
        assertEquals(3L, CounterReadings.sum(counters.reader(), produce, CounterTypes.REQUESTS));
        assertEquals(4L, CounterReadings.sum(counters.reader(), ordersIn, CounterTypes.TOPIC_RECORDS_IN));
        assertEquals(1L, CounterReadings.sum(counters.reader(), firstIn, CounterTypes.TOPIC_RECORDS_IN));
        assertEquals(2L, CounterReadings.sum(counters.reader(), secondIn, CounterTypes.TOPIC_RECORDS_IN));
        // a counter of another type (ids found for a figure, read as another) counts nothing
        assertEquals(0L, CounterReadings.sum(counters.reader(), ordersIn, CounterTypes.TOPIC_BYTES_IN));
    }

    @Test
    void levelsAreGaugesWithNoRateAndCountsAreNot()
    {
        final BrokerCounters counters = BrokerCounters.inMemory(1, 4096);
        counters.topic("orders");
        final List<String> gauges = CounterTable.read(counters.reader(), false, null).stream()
            .filter(CounterTable.Row::isGauge).map(CounterTable.Row::label).toList();
        final List<String> levels = new ArrayList<>(List.of("connections open", "consumer lag not counted (no room)"));
        for (final String state : GroupCounters.STATES)
        {
            levels.add("groups state=" + state);
        }
        levels.add("group offsets");
        // ferrite-stat's live mode shows no per-second figure for these (a rate of a level means nothing)
        assertEquals(new TreeSet<>(levels), new TreeSet<>(gauges));
        assertTrue(CounterTable.read(counters.reader(), false, "group offsets committed").stream().noneMatch(CounterTable.Row::isGauge),
            "offsets committed: a count");
    }
}
