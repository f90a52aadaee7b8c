package io.ferrite.broker.metrics.jmx;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A meter's count is the counters' figure as it is when queried; its rates move only when it ticks, each tick turning
 * the events since the previous one into a rate over five seconds: the first tick with events sets every average to
 * its rate, the next one too when it has events (the first whole tick of the traffic), and the following ones move
 * each average towards their rate by {@code max(1 / n, 1 - e^(-5 s / window))} for the n-th whole tick — the mean of
 * the rates, then Kafka's exponential weight (stepped: the test ticks, no clock involved).
 */
class MeterTest
{
    private static final double EPSILON = 1e-9;

    @Test
    void theCountIsReadAtEachQueryAndTheRatesMoveAtEachTick()
    {
        final AtomicLong counter = new AtomicLong();
        final Meter meter = new Meter(counter::get, "messages", System.nanoTime());
        counter.set(500);
        assertEquals(500, meter.getCount(), "read from the counter, not from the last tick");
        assertEquals(0.0, meter.getOneMinuteRate(), "no tick yet");

        meter.tick(); // 500 events over the first 5 s: 100 a second
        assertEquals(100.0, meter.getOneMinuteRate(), EPSILON);
        assertEquals(100.0, meter.getFiveMinuteRate(), EPSILON);
        assertEquals(100.0, meter.getFifteenMinuteRate(), EPSILON);

        for (int tick = 1; tick <= 12; tick++) // 12 whole ticks at 100 a second: the mean of their rates
        {
            counter.addAndGet(500);
            meter.tick();
            assertEquals(100.0, meter.getOneMinuteRate(), EPSILON);
        }
        counter.addAndGet(1000); // the 13th: 200 a second, 1 / 13 below the one-minute weight, above the others'
        meter.tick();
        assertEquals(100.0 + (1 - Math.exp(-5.0 / 60)) * 100.0, meter.getOneMinuteRate(), EPSILON);
        assertEquals(100.0 + 100.0 / 13, meter.getFiveMinuteRate(), EPSILON);
        assertEquals(100.0 + 100.0 / 13, meter.getFifteenMinuteRate(), EPSILON);

        final double oneMinute = meter.getOneMinuteRate();
        meter.tick(); // nothing new: the one-minute average decays towards zero
        assertEquals(oneMinute * Math.exp(-5.0 / 60), meter.getOneMinuteRate(), EPSILON);
        assertEquals(7500, meter.getCount());
        assertEquals(TimeUnit.SECONDS, meter.getRateUnit());
        assertEquals("messages", meter.getEventType());
    }

    @Test
    void ticksBeforeTheFirstEventLeaveTheAveragesUnsetAndTrafficBegunWithinATickIsReadFromTheNextOne()
    {
        final AtomicLong counter = new AtomicLong();
        final Meter meter = new Meter(counter::get, "messages", System.nanoTime());
        for (int i = 0; i < 12; i++)
        {
            meter.tick(); // a topic made a minute before its first record
        }
        counter.set(30); // traffic of 100 a second, begun 0.3 s before the next tick
        meter.tick();
        assertEquals(6.0, meter.getOneMinuteRate(), EPSILON, "what the first tick saw");
        counter.set(530);
        meter.tick();
        // the traffic's rate, not an average climbing from 0 or from 6 (8.4 and 13.6, ticked as Kafka's from the making)
        assertEquals(100.0, meter.getOneMinuteRate(), EPSILON);
        assertEquals(100.0, meter.getFifteenMinuteRate(), EPSILON);
        counter.set(1030);
        meter.tick();
        assertEquals(100.0, meter.getOneMinuteRate(), EPSILON);
    }

    @Test
    void oneTickOffIsForgottenByTheNextThatCountsWhatItMissed()
    {
        final AtomicLong counter = new AtomicLong();
        final Meter meter = new Meter(counter::get, "messages", System.nanoTime());
        counter.set(500);
        meter.tick();
        counter.addAndGet(400); // the first whole tick misses 100 events (10% low) ...
        meter.tick();
        counter.addAndGet(600); // ... which the next one counts
        meter.tick();
        assertEquals(100.0, meter.getOneMinuteRate(), EPSILON, "Kafka's would read 90 + 0.08 * 30 = 92.4");
    }

    @Test
    void aBurstWithinOneTickShowsAtThatTickAndDecaysAfter()
    {
        final AtomicLong counter = new AtomicLong();
        final Meter meter = new Meter(counter::get, "messages", System.nanoTime());
        meter.tick();
        counter.set(1000); // a burst, then nothing
        meter.tick();
        assertEquals(200.0, meter.getOneMinuteRate(), EPSILON, "as Kafka's meter, made at the burst, shows it 5 s later");
        meter.tick();
        assertEquals(200.0 * Math.exp(-5.0 / 60), meter.getOneMinuteRate(), EPSILON, "no new events: decaying");
        meter.tick();
        assertEquals(200.0 * Math.exp(-10.0 / 60), meter.getOneMinuteRate(), EPSILON);
    }

    @Test
    void theMeanRateIsTheCountOverTheMetersLifetime()
    {
        final AtomicLong counter = new AtomicLong();
        final long tenSecondsAgo = System.nanoTime() - TimeUnit.SECONDS.toNanos(10);
        final Meter meter = new Meter(counter::get, "bytes", tenSecondsAgo);
        assertEquals(0.0, meter.getMeanRate(), "nothing counted");
        counter.set(1000);
        final long before = System.nanoTime();
        final double mean = meter.getMeanRate();
        final long after = System.nanoTime();
        // 1000 over the seconds from the meter's start to the query, which lies between before and after
        final double highest = 1000 / ((before - tenSecondsAgo) / 1e9);
        final double lowest = 1000 / ((after - tenSecondsAgo) / 1e9);
        assertTrue(mean >= lowest && mean <= highest, lowest + " <= " + mean + " <= " + highest);
    }
}
