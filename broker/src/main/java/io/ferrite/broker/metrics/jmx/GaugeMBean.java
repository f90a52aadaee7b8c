package io.ferrite.broker.metrics.jmx;

/** One of Kafka's gauges as its JMX reporter shows it: a single {@code Value} attribute, typed {@code Object}. */
public interface GaugeMBean
{
    Object getValue();
}
