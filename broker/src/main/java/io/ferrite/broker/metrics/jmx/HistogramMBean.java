package io.ferrite.broker.metrics.jmx;

/**
 * The attributes of one of Kafka's Yammer histograms as its JMX reporter shows them (a {@code RequestMetrics} time in
 * Kafka 4.4: {@code TotalTimeMs}, {@code LocalTimeMs}, ...), in milliseconds, over every request since the start.
 */
public interface HistogramMBean
{
    long getCount();

    double getMin();

    double getMax();

    double getMean();

    double getStdDev();

    double get50thPercentile();

    double get75thPercentile();

    double get95thPercentile();

    double get98thPercentile();

    double get99thPercentile();

    double get999thPercentile();

    /** Yammer's operation giving the sampled values: Ferrite keeps no sample (its histograms are HdrHistograms): empty. */
    double[] values();
}
