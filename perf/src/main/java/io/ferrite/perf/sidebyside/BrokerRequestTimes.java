package io.ferrite.perf.sidebyside;

import com.sun.tools.attach.VirtualMachine;

import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * A broker child JVM's request times as both brokers publish them, Kafka's MBean
 * {@code kafka.network:type=RequestMetrics,name=TotalTimeMs,request=<API>} (from the request's arrival to its answer
 * written to the socket), read over JMX: the runner attaches to the child (the JDK's Attach API) and starts the
 * child's local management agent, so neither broker is started with a JMX port or any other option for it.
 *
 * <p>What the MBean gives, in both brokers: the count and mean over every request since the start — so the mean
 * between two readings is exact ({@link Reading#meanSinceMs}) — and percentiles over recent requests only, not since a
 * reading: Kafka 4.4's Yammer histogram samples a reservoir biased to about the last five minutes, and it rounds each
 * request's time to whole milliseconds before recording it ({@code Request.updateRequestMetrics}); Ferrite's are over
 * the current and the previous minute, at microsecond resolution. A percentile read right after a workload is that
 * workload's only when nothing of the kind ran in the window before it.
 */
final class BrokerRequestTimes implements AutoCloseable
{
    private static final String[] ATTRIBUTES = {"Count", "Mean", "50thPercentile", "99thPercentile", "999thPercentile", "Max"};

    /** One reading of a request's TotalTimeMs MBean, in milliseconds; count 0 when the broker has seen none. */
    record Reading(long count, double meanMs, double p50Ms, double p99Ms, double p999Ms, double maxMs)
    {
        static final Reading NONE = new Reading(0, 0, 0, 0, 0, 0);

        /** The mean time of the requests between {@code before} and this reading (NaN when none came between). */
        double meanSinceMs(final Reading before)
        {
            final long n = count - before.count;
            return n <= 0 ? Double.NaN : (count * meanMs - before.count * before.meanMs) / n;
        }
    }

    private final JMXConnector connector;
    private final MBeanServerConnection server;

    private BrokerRequestTimes(final JMXConnector connector) throws IOException
    {
        this.connector = connector;
        this.server = connector.getMBeanServerConnection();
    }

    /**
     * Attaches to the JVM of process {@code pid} and connects to its local management agent, started if it is not
     * yet (once per JVM: its threads idle between readings).
     */
    static BrokerRequestTimes attach(final long pid) throws IOException
    {
        final String address;
        try
        {
            final VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
            try
            {
                address = vm.startLocalManagementAgent();
            }
            finally
            {
                vm.detach();
            }
        }
        catch (final com.sun.tools.attach.AttachNotSupportedException ex)
        {
            throw new IOException("cannot attach to process " + pid, ex);
        }
        return new BrokerRequestTimes(JMXConnectorFactory.connect(new JMXServiceURL(address)));
    }

    /** The TotalTimeMs of {@code request} (Kafka's API name: {@code EndTxn}, {@code Produce} ...) now. */
    Reading totalTime(final String request) throws IOException
    {
        final AttributeList list;
        try
        {
            list = server.getAttributes(new ObjectName("kafka.network:type=RequestMetrics,name=TotalTimeMs,request=" + request),
                ATTRIBUTES);
        }
        catch (final InstanceNotFoundException none)
        {
            return Reading.NONE;
        }
        catch (final JMException ex)
        {
            throw new IOException("TotalTimeMs of " + request + " unreadable", ex);
        }
        final Map<String, Number> values = new HashMap<>();
        for (final Attribute a : list.asList())
        {
            values.put(a.getName(), (Number) a.getValue());
        }
        if (values.size() != ATTRIBUTES.length)
        {
            throw new IOException("TotalTimeMs of " + request + " lacks attributes: " + values.keySet());
        }
        return new Reading(values.get("Count").longValue(), values.get("Mean").doubleValue(),
            values.get("50thPercentile").doubleValue(), values.get("99thPercentile").doubleValue(),
            values.get("999thPercentile").doubleValue(), values.get("Max").doubleValue());
    }

    @Override
    public void close() throws IOException
    {
        connector.close();
    }
}
