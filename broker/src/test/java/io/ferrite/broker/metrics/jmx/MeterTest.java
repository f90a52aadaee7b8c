package io.ferrite.broker.metrics.jmx;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A meter's count is the counters' figure as it is when queried; its rates move only when it ticks, each tick turning
 * the events since the previous one into a rate over five seconds, the first setting every average to it and the next
 * ones moving each by {@code 1 - e^(-5 s / window)} towards it (stepped: the test ticks, no clock involved).
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

        counter.set(1500); // 1000 more over the next 5 s: 200 a second
        meter.tick();
        assertEquals(100.0 + (1 - Math.exp(-5.0 / 60)) * 100.0, meter.getOneMinuteRate(), EPSILON);
        assertEquals(100.0 + (1 - Math.exp(-5.0 / 300)) * 100.0, meter.getFiveMinuteRate(), EPSILON);
        assertEquals(100.0 + (1 - Math.exp(-5.0 / 900)) * 100.0, meter.getFifteenMinuteRate(), EPSILON);

        final double oneMinute = meter.getOneMinuteRate();
        meter.tick(); // nothing new: the averages decay towards zero
        assertEquals(oneMinute * Math.exp(-5.0 / 60), meter.getOneMinuteRate(), EPSILON);
        assertEquals(1500, meter.getCount());
        assertEquals(TimeUnit.SECONDS, meter.getRateUnit());
        assertEquals("messages", meter.getEventType());
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
