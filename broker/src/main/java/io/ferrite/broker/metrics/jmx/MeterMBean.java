package io.ferrite.broker.metrics.jmx;

import java.util.concurrent.TimeUnit;

/**
 * The attributes of one of Kafka's meters as its JMX reporter shows them (a {@code BrokerTopicMetrics} or
 * {@code RequestMetrics} figure in Kafka 4.4): the count since the broker started and rates per second.
 */
public interface MeterMBean
{
    long getCount();

    /** The count over the seconds since the meter was made. */
    double getMeanRate();

    /** Exponentially weighted over about a minute, updated every five seconds (as Kafka's meters). */
    double getOneMinuteRate();

    double getFiveMinuteRate();

    double getFifteenMinuteRate();

    /** {@link TimeUnit#SECONDS}: the rates are per second. */
    TimeUnit getRateUnit();

    /** What is counted: {@code messages}, {@code bytes}, {@code requests}. */
    String getEventType();
}
