package io.ferrite.broker.metrics.jmx;

import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * An MBean of Kafka's own metrics library as its {@code JmxReporter} shows one: the metrics of one group and tags as
 * attributes named after the metrics ({@code offset-commit-rate}, {@code group-count}), each a {@code double}, read
 * when queried; nothing can be set or invoked. (Yammer's MBeans, {@link Meter} and {@link Gauge}, have fixed
 * attributes; these have whatever the group holds, hence a dynamic MBean.)
 */
final class KafkaMetricsBean implements DynamicMBean
{
    private final String className;
    private final Map<String, Supplier<Double>> attributes = new LinkedHashMap<>();

    KafkaMetricsBean(final String className)
    {
        this.className = className;
    }

    /** Adds attribute {@code name}, read from {@code value} at each query. */
    KafkaMetricsBean attribute(final String name, final Supplier<Double> value)
    {
        attributes.put(name, value);
        return this;
    }

    @Override
    public Object getAttribute(final String name) throws AttributeNotFoundException
    {
        final Supplier<Double> value = attributes.get(name);
        if (value == null)
        {
            throw new AttributeNotFoundException("no attribute " + name);
        }
        return value.get();
    }

    @Override
    public AttributeList getAttributes(final String[] names)
    {
        final AttributeList list = new AttributeList();
        for (final String name : names)
        {
            final Supplier<Double> value = attributes.get(name);
            if (value != null)
            {
                list.add(new Attribute(name, value.get()));
            }
        }
        return list;
    }

    @Override
    public void setAttribute(final Attribute attribute)
    {
        throw new UnsupportedOperationException("Set not allowed.");
    }

    @Override
    public AttributeList setAttributes(final AttributeList list)
    {
        throw new UnsupportedOperationException("Set not allowed.");
    }

    @Override
    public Object invoke(final String action, final Object[] params, final String[] signature)
    {
        throw new UnsupportedOperationException("Invoke not allowed.");
    }

    @Override
    public MBeanInfo getMBeanInfo()
    {
        final MBeanAttributeInfo[] infos = new MBeanAttributeInfo[attributes.size()];
        int i = 0;
        for (final String name : attributes.keySet())
        {
            infos[i++] = new MBeanAttributeInfo(name, double.class.getName(), name, true, false, false);
        }
        return new MBeanInfo(className, "", infos, null, null, null);
    }
}
