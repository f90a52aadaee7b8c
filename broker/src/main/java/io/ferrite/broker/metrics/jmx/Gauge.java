package io.ferrite.broker.metrics.jmx;

import java.util.function.Supplier;

/** A gauge read when it is queried: the supplier reads the broker's state then (a log's offsets, the topics). */
final class Gauge implements GaugeMBean
{
    private final Supplier<Object> value;

    Gauge(final Supplier<Object> value)
    {
        this.value = value;
    }

    @Override
    public Object getValue()
    {
        return value.get();
    }
}
