package io.ferrite.broker.metrics;

import org.agrona.concurrent.status.AtomicCounter;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The lag counters' bounds (at most {@link LagCounters#MAX}, never the file's last {@link LagCounters#RESERVE} free
 * counters) and their reading back: group, topic and partition from the label and key, a group id with spaces and the
 * label's own separators in it included, and ferrite-stat's {@code --group} selection.
 */
class LagCountersTest
{
    @Test
    void atMostMaxLagCountersAndTheLastFreeCountersLeftToTopics()
    {
        final BrokerCounters roomy = BrokerCounters.inMemory(1, LagCounters.MAX + LagCounters.RESERVE + 1024);
        final List<AtomicCounter> made = new ArrayList<>();
        for (int i = 0; i < LagCounters.MAX; i++)
        {
            final AtomicCounter c = roomy.lag().allocate("g" + i, "t", 0);
            assertNotNull(c);
            made.add(c);
        }
        assertNull(roomy.lag().allocate("one-more", "t", 0), "no more than MAX");
        roomy.lag().free(made.get(0));
        assertNotNull(roomy.lag().allocate("one-more", "t", 0), "a freed one makes room (another slot: the file has some)");

        final int atStart = 4096 - BrokerCounters.inMemory(1, 4096).available(); // the network thread's, (others), the groups'
        final BrokerCounters tight = BrokerCounters.inMemory(1, atStart + LagCounters.RESERVE + 3);
        for (int i = 0; i < 3; i++)
        {
            assertNotNull(tight.lag().allocate("g" + i, "t", i));
        }
        assertNull(tight.lag().allocate("g3", "t", 3), "the last " + LagCounters.RESERVE + " are the topics'");
        assertEquals(LagCounters.RESERVE, tight.available());
        assertEquals("still-counted", tight.topic("still-counted").topic, "a topic still gets counters of its own");
    }

    @Test
    void groupTopicAndPartitionAreReadBack()
    {
        final BrokerCounters counters = BrokerCounters.inMemory(2, 4096);
        final String odd = "a group= with spaces topic=x partition=9";
        counters.lag().allocate(odd, "orders", 3).setRelease(42);
        counters.lag().allocate("plain", "orders", 0).setRelease(-1); // committed past the end: not clamped
        counters.lag().notCounted(7);

        assertEquals(List.of(new CounterReadings.Lag(odd, "orders", 3, 42), new CounterReadings.Lag("plain", "orders", 0, -1)),
            CounterReadings.lags(counters.reader()));
        assertEquals(List.of(new CounterTable.Row("consumer lag topic=orders partition=0 group=plain", -1,
            CounterTypes.CONSUMER_LAG)), CounterTable.read(counters.reader(), false, null, "plain"));
        assertEquals(List.of(new CounterTable.Row("consumer lag topic=orders partition=3 group=" + odd, 42,
            CounterTypes.CONSUMER_LAG)), CounterTable.read(counters.reader(), false, null, odd));
        assertEquals(List.of(), CounterTable.read(counters.reader(), false, null, "partition=9"),
            "a group is matched whole, not by the end of another's id");
        counters.lag().allocate("y group=plain", "orders", 1).setRelease(5);
        assertEquals(1, CounterTable.read(counters.reader(), false, null, "plain").size(), "group plain's only");
        assertEquals(7L, CounterReadings.summed(counters.reader()).get(new CounterReadings.Figure(CounterTypes.LAG_NOT_COUNTED,
            CounterReadings.ALL_THREADS, 0, null)));
    }

    /** Review metrics-review1 M1: a group id too long for the label was cut, two such ids became one and unfindable. */
    @Test
    void aGroupTooLongForTheLabelStaysUniqueAndFindableByItsWholeId()
    {
        final BrokerCounters counters = BrokerCounters.inMemory(1, 4096);
        final String common = "x".repeat(400);
        final String longTopic = "t".repeat(249);
        counters.lag().allocate(common + "-A", "orders", 0).setRelease(5);
        counters.lag().allocate(common + "-B", "orders", 0).setRelease(7);
        counters.lag().allocate(common + "-A", longTopic, 12).setRelease(3);
        final String accented = "\u00e9".repeat(300); // 2 bytes each: the cut falls on a character's start
        counters.lag().allocate(accented, "orders", 1).setRelease(9);

        final List<CounterReadings.Lag> lags = CounterReadings.lags(counters.reader());
        assertEquals(4, lags.size());
        assertNotEquals(lags.get(0).group(), lags.get(1).group(), "two groups, two ids");
        assertTrue(lags.get(3).group().startsWith("\u00e9".repeat(100)), lags.get(3).group());
        assertFalse(lags.get(3).group().contains("\ufffd"), "no character cut in half: " + lags.get(3).group());

        final List<CounterTable.Row> a = CounterTable.read(counters.reader(), false, null, common + "-A");
        assertEquals(List.of(5L, 3L), a.stream().map(CounterTable.Row::value).toList(), "--group with the whole id: " + a);
        assertEquals(List.of(7L), CounterTable.read(counters.reader(), false, null, common + "-B").stream()
            .map(CounterTable.Row::value).toList());
        assertEquals(List.of(9L), CounterTable.read(counters.reader(), false, null, accented).stream()
            .map(CounterTable.Row::value).toList());
        assertEquals(List.of(), CounterTable.read(counters.reader(), false, null, common + "-C"), "another long id: none");
        assertEquals(List.of(5L), CounterTable.read(counters.reader(), false, null, lags.get(0).group()).stream()
            .map(CounterTable.Row::value).toList(), "the id as shown (first bytes and hash) finds its row too");
        assertEquals(4, CounterTable.read(counters.reader(), false, "consumer lag topic=", null).size(), "four rows");
    }

    /** Review metrics-review1 L2: a group id holding " net=" was cut there as a network thread's label, rows merged. */
    @Test
    void aGroupWithNetInItsIdIsNotTakenForANetworkThread()
    {
        final BrokerCounters counters = BrokerCounters.inMemory(2, 4096);
        counters.lag().allocate("billing net=eu", "orders", 0).setRelease(5);
        counters.lag().allocate("billing net=us", "orders", 0).setRelease(7);
        assertEquals(List.of(new CounterTable.Row("consumer lag topic=orders partition=0 group=billing net=eu", 5,
            CounterTypes.CONSUMER_LAG), new CounterTable.Row("consumer lag topic=orders partition=0 group=billing net=us", 7,
            CounterTypes.CONSUMER_LAG)), CounterTable.read(counters.reader(), false, "consumer lag topic=", null));
        assertEquals(List.of(new CounterTable.Row("consumer lag topic=orders partition=0 group=billing net=eu", 5,
            CounterTypes.CONSUMER_LAG)), CounterTable.read(counters.reader(), false, null, "billing net=eu"));
    }
}
