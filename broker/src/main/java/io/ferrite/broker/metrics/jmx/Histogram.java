package io.ferrite.broker.metrics.jmx;

import io.ferrite.broker.metrics.RequestLatencies;
import io.ferrite.broker.metrics.RequestLatencies.Reading;

import java.util.function.Supplier;

/**
 * A request time histogram ({@link RequestLatencies}) as Kafka's JMX reporter shows a Yammer histogram: each attribute
 * reads the histogram anew when it is queried (a query of several attributes reads it once per attribute).
 */
final class Histogram implements HistogramMBean
{
    private static final double[] NO_VALUES = new double[0];

    private final Supplier<Reading> reading;

    Histogram(final Supplier<Reading> reading)
    {
        this.reading = reading;
    }

    @Override
    public long getCount()
    {
        return reading.get().count();
    }

    @Override
    public double getMin()
    {
        return reading.get().min();
    }

    @Override
    public double getMax()
    {
        return reading.get().max();
    }

    @Override
    public double getMean()
    {
        return reading.get().mean();
    }

    @Override
    public double getStdDev()
    {
        return reading.get().stdDev();
    }

    @Override
    public double get50thPercentile()
    {
        return reading.get().p50();
    }

    @Override
    public double get75thPercentile()
    {
        return reading.get().p75();
    }

    @Override
    public double get95thPercentile()
    {
        return reading.get().p95();
    }

    @Override
    public double get98thPercentile()
    {
        return reading.get().p98();
    }

    @Override
    public double get99thPercentile()
    {
        return reading.get().p99();
    }

    @Override
    public double get999thPercentile()
    {
        return reading.get().p999();
    }

    @Override
    public double[] values()
    {
        return NO_VALUES;
    }
}
