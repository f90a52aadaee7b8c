package io.ferrite.broker.metrics.jmx;

import io.ferrite.broker.metrics.BrokerCounters;
import io.ferrite.broker.metrics.CounterReadGate;
import io.ferrite.broker.metrics.CounterReadings;
import io.ferrite.broker.metrics.CounterReadings.Figure;
import io.ferrite.broker.metrics.CounterTypes;
import io.ferrite.broker.metrics.RequestKinds;
import io.ferrite.broker.metrics.RequestLatencies;
import io.ferrite.broker.metrics.RequestTimes;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.ApiKeys;
import org.agrona.concurrent.status.CountersReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.management.DynamicMBean;
import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;
import javax.management.StandardMBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.IntStream;

/**
 * The broker's figures as MBeans of the platform MBean server under Kafka 4.4's names, so that Kafka's tools
 * ({@code JmxTool}), jconsole, and the dashboards and alerts written for Kafka read them unchanged: registered when the
 * broker starts, unregistered when it closes. Meters ({@link Meter}) read the mapped counters ({@link BrokerCounters})
 * at each query; histograms ({@link Histogram}: Kafka's {@code RequestMetrics} request times) the network threads'
 * recorders ({@link RequestLatencies}); gauges read the topics and the logs' offsets then. Nothing is added to the
 * request paths (the recording of the request times is the network threads' own, {@link RequestTimes}).
 *
 * <p>One thread ({@code ferrite-jmx}, a daemon) ticks the meters' rates every {@link Meter#TICK_SECONDS} seconds and
 * every second follows the topics ({@link #followTopics}): the MBeans of topics created since, not those of deleted
 * topics, the topics' counters refound (freed with their topic), the gauges of the partitions this node hosts. A name
 * another broker in this JVM registered first stays that broker's (one warning): a JVM's platform server has one MBean
 * per name.
 */
public final class KafkaMBeans implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(KafkaMBeans.class);
    private static final String TOPIC_METRICS = "kafka.server:type=BrokerTopicMetrics,name=";
    private static final int[] TOPIC_TYPES = {CounterTypes.TOPIC_RECORDS_IN, CounterTypes.TOPIC_BYTES_IN, CounterTypes.TOPIC_BYTES_OUT};
    private static final String[] TOPIC_METERS = {"MessagesInPerSec", "BytesInPerSec", "BytesOutPerSec"};
    private static final String[] TOPIC_EVENTS = {"messages", "bytes", "bytes"};
    private static final String[] LOG_GAUGES = {"LogEndOffset", "LogStartOffset", "Size"};
    private static final int[] NONE = new int[0];

    private final MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    private final CountersReader reader;
    private final RequestLatencies latencies;
    private final TopicRegistry topics;
    /** What this broker registered (its names only are unregistered at close). */
    private final Set<ObjectName> registered = new HashSet<>();
    private final Map<ObjectName, Meter> meters = new HashMap<>();
    /** Meters behind rates of other MBeans (the group coordinator's), ticked with {@link #meters}. */
    private final List<Meter> innerMeters = new ArrayList<>();
    /** The MBeans' objects by name, while registered (tests keep one past {@link #close} through {@link #bean}). */
    private final Map<ObjectName, Object> objects = new HashMap<>();
    /** Per topic: its counters' ids by {@link #TOPIC_TYPES} (refound on each change) and its partitions with gauges. */
    private final Map<String, TopicBeans> topicBeans = new HashMap<>();
    /** The registry's list of topics the last pass followed (null: none yet, or the pass failed). */
    private Collection<Topic> followed;
    private final ScheduledExecutorService thread;
    /**
     * Held while a query reads the counters or a log; closed by {@link #close}: a query that started before the MBeans
     * were unregistered ends before close returns (and before the broker unmaps the counters file and closes the logs),
     * and one that comes later reads nothing.
     */
    private final CounterReadGate reads = new CounterReadGate();
    private boolean warnedTaken;

    /** A topic's MBeans: its meters' counters, the partitions with gauges (hosted here when last looked). */
    private static final class TopicBeans
    {
        final String name;
        final long idMsb;
        final long idLsb;
        volatile int[][] ids;
        boolean[] logged = new boolean[0];

        TopicBeans(final Topic topic)
        {
            this.name = topic.name;
            this.idMsb = topic.idMostSignificantBits;
            this.idLsb = topic.idLeastSignificantBits;
        }
    }

    private KafkaMBeans(final BrokerCounters counters, final TopicRegistry topics)
    {
        this.reader = counters.reader();
        this.latencies = counters.latencies();
        this.topics = topics;
        this.thread = Executors.newSingleThreadScheduledExecutor(r ->
        {
            final Thread t = new Thread(r, "ferrite-jmx");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Registers the broker's MBeans: those of the counters, of the topics there are now, and — {@code aloneController}:
     * a node alone is its cluster's active controller — the controller's; then starts the thread that ticks and follows
     * the topics.
     */
    public static KafkaMBeans register(final BrokerCounters counters, final TopicRegistry topics, final boolean aloneController)
    {
        final KafkaMBeans beans = new KafkaMBeans(counters, topics);
        synchronized (beans)
        {
            beans.registerBrokerWide(aloneController);
            beans.followTopics();
        }
        beans.thread.scheduleAtFixedRate(beans::followTopics, 1, 1, TimeUnit.SECONDS);
        beans.thread.scheduleAtFixedRate(beans::tick, Meter.TICK_SECONDS, Meter.TICK_SECONDS, TimeUnit.SECONDS);
        return beans;
    }

    private void registerBrokerWide(final boolean aloneController)
    {
        final Map<Figure, int[]> ids = CounterReadings.ids(reader);
        meter(TOPIC_METRICS + "MessagesInPerSec", ids, CounterTypes.RECORDS_IN, 0, "messages");
        meter(TOPIC_METRICS + "BytesInPerSec", ids, CounterTypes.BYTES_IN, 0, "bytes");
        meter(TOPIC_METRICS + "BytesOutPerSec", ids, CounterTypes.BYTES_OUT, 0, "bytes");
        meter(TOPIC_METRICS + "ReplicationBytesOutPerSec", ids, CounterTypes.REPLICATION_BYTES_OUT, 0, "bytes");
        for (int kind = 0; kind < RequestKinds.COUNT; kind++)
        {
            final String request = RequestKinds.name(kind);
            if (request != null)
            {
                final String requests = "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=" + request;
                if (kind == RequestKinds.FETCH_ALL)
                {
                    // Kafka's Fetch counts every fetch: the two kinds' counters summed when read
                    final int[] both = IntStream.concat(IntStream.of(counterIds(ids, CounterTypes.REQUESTS, ApiKeys.FETCH.id)),
                        IntStream.of(counterIds(ids, CounterTypes.REQUESTS, RequestKinds.FETCH_FOLLOWER))).toArray();
                    register(requests, new Meter(() -> sum(both, CounterTypes.REQUESTS), "requests", System.nanoTime()));
                }
                else
                {
                    meter(requests, ids, CounterTypes.REQUESTS, kind, "requests");
                }
                for (final RequestTimes.Stage stage : RequestTimes.Stage.values())
                {
                    final int k = kind;
                    register("kafka.network:type=RequestMetrics,name=" + stage.kafkaName + ",request=" + request,
                        new Histogram(() -> latencies.read(k, stage)));
                }
            }
        }
        for (final int kind : CounterTypes.errorKinds())
        {
            for (int code = 1; code < 128; code++)
            {
                final String error = CounterTypes.countedName(code);
                if (error != null)
                {
                    meter("kafka.network:type=RequestMetrics,name=ErrorsPerSec,request=" + RequestKinds.name(kind) + ",error="
                        + error, ids, CounterTypes.REQUEST_ERRORS, CounterTypes.requestError(kind, code), "requests");
                }
            }
        }
        innerMeters.addAll(GroupCoordinatorBeans.register(this::register, ids, this::sum));
        final String replicaManager = "kafka.server:type=ReplicaManager,name=";
        gauge(replicaManager + "PartitionCount", () -> ReplicaCounts.partitions(topics));
        gauge(replicaManager + "LeaderCount", () -> ReplicaCounts.leaders(topics));
        gauge(replicaManager + "UnderReplicatedPartitions", () -> ReplicaCounts.underReplicated(topics));
        if (aloneController)
        {
            // alone, the node is its cluster's active controller; a partition has no leader only when its files failed
            gauge("kafka.controller:type=KafkaController,name=ActiveControllerCount", () -> 1);
            gauge("kafka.controller:type=KafkaController,name=OfflinePartitionsCount", () -> ReplicaCounts.offline(topics));
        }
    }

    /**
     * Registers the MBeans of topics made since the last pass and unregisters those of deleted topics (or deleted and
     * made again since: a new topic, its meters counting from its making) and refinds the topics' counters, only when
     * the registry published a change (it publishes a new list then; nothing is allocated when none came); registers
     * the {@code kafka.log} gauges of the partitions this node hosts and unregisters those of partitions it no longer
     * does (cluster mode: {@link ReplicaCounts#hosted}, which changes without a publish).
     */
    synchronized void followTopics()
    {
        if (thread.isShutdown())
        {
            return;
        }
        try
        {
            final Collection<Topic> now = topics.topics();
            if (now != followed)
            {
                refollow(now);
                followed = now;
            }
            for (final Topic topic : now)
            {
                final TopicBeans beans = topicBeans.get(topic.name);
                final int count = Math.min(topic.partitions.length, beans.logged.length);
                for (int p = 0; p < count; p++)
                {
                    final boolean hosted = ReplicaCounts.hosted(topic.partitions[p]);
                    if (hosted != beans.logged[p])
                    {
                        beans.logged[p] = hosted;
                        for (final String name : LOG_GAUGES)
                        {
                            final String gauge = logName(name, topic.name, p);
                            if (hosted)
                            {
                                gauge(gauge, logGauge(topic.name, p, name));
                            }
                            else
                            {
                                unregister(gauge);
                            }
                        }
                    }
                }
            }
        }
        catch (final RuntimeException ex)
        {
            followed = null;
            LOG.warn("following the topics' MBeans failed (tried again in a second)", ex);
        }
    }

    private void refollow(final Collection<Topic> now)
    {
        final Map<Figure, int[]> ids = CounterReadings.ids(reader);
        final Set<String> gone = new HashSet<>(topicBeans.keySet());
        for (final Topic topic : now)
        {
            gone.remove(topic.name);
            TopicBeans beans = topicBeans.get(topic.name);
            if (beans != null && (beans.idMsb != topic.idMostSignificantBits || beans.idLsb != topic.idLeastSignificantBits))
            {
                forget(topicBeans.remove(topic.name)); // deleted and made again since the last pass: another topic
                beans = null;
            }
            if (beans == null)
            {
                beans = newTopic(topic);
                topicBeans.put(topic.name, beans);
            }
            final int[][] found = new int[TOPIC_TYPES.length][];
            for (int k = 0; k < TOPIC_TYPES.length; k++)
            {
                found[k] = ids.getOrDefault(new Figure(TOPIC_TYPES[k], CounterReadings.ALL_THREADS, 0, topic.name), NONE);
            }
            beans.ids = found;
            if (beans.logged.length < topic.partitions.length)
            {
                beans.logged = Arrays.copyOf(beans.logged, topic.partitions.length);
            }
        }
        for (final String name : gone)
        {
            forget(topicBeans.remove(name));
        }
    }

    private void forget(final TopicBeans beans)
    {
        for (final String meter : TOPIC_METERS)
        {
            unregister(TOPIC_METRICS + meter + ",topic=" + beans.name);
        }
        for (int p = 0; p < beans.logged.length; p++)
        {
            if (beans.logged[p])
            {
                for (final String gauge : LOG_GAUGES)
                {
                    unregister(logName(gauge, beans.name, p));
                }
            }
        }
    }

    private static String logName(final String gauge, final String topic, final int partition)
    {
        return "kafka.log:type=Log,name=" + gauge + ",topic=" + topic + ",partition=" + partition;
    }

    private TopicBeans newTopic(final Topic topic)
    {
        final TopicBeans beans = new TopicBeans(topic);
        beans.ids = new int[TOPIC_TYPES.length][0];
        for (int k = 0; k < TOPIC_TYPES.length; k++)
        {
            final int kind = k;
            final int type = TOPIC_TYPES[k];
            register(TOPIC_METRICS + TOPIC_METERS[k] + ",topic=" + topic.name,
                new Meter(() -> sum(beans.ids[kind], type), TOPIC_EVENTS[k], System.nanoTime()));
        }
        return beans;
    }

    /** A partition's log figure, read when queried: null once the partition is gone (until its MBean is). */
    private Supplier<Object> logGauge(final String topic, final int partition, final String name)
    {
        return () ->
        {
            final Topic t = topics.topic(topic);
            final Partition p = t == null ? null : t.partition(partition);
            if (p == null)
            {
                return null;
            }
            return switch (name)
            {
                case "LogEndOffset" -> p.log.logEndOffset();
                case "LogStartOffset" -> p.log.logStartOffset();
                default -> p.log.sizeInBytes();
            };
        };
    }

    private synchronized void tick()
    {
        for (final Meter meter : meters.values())
        {
            meter.tick();
        }
        for (final Meter meter : innerMeters)
        {
            meter.tick();
        }
    }

    /** A meter over the counters of figure {@code typeId}, {@code code} (every network thread's). */
    private void meter(final String name, final Map<Figure, int[]> ids, final int typeId, final int code, final String eventType)
    {
        final int[] counters = counterIds(ids, typeId, code);
        register(name, new Meter(() -> sum(counters, typeId), eventType, System.nanoTime()));
    }

    private static int[] counterIds(final Map<Figure, int[]> ids, final int typeId, final int code)
    {
        return ids.getOrDefault(new Figure(typeId, CounterReadings.ALL_THREADS, code, null), NONE);
    }

    private void gauge(final String name, final Supplier<Object> value)
    {
        register(name, new Gauge(() -> reads.read(value, null)));
    }

    /** Counters {@code ids}' sum now; 0 once closed (the counters file may be unmapped). */
    private long sum(final int[] ids, final int typeId)
    {
        return reads.read(() -> CounterReadings.sum(reader, ids, typeId), 0L);
    }

    private void register(final String name, final Object bean)
    {
        try
        {
            final ObjectName objectName = new ObjectName(name);
            if (bean instanceof DynamicMBean dynamic)
            {
                server.registerMBean(dynamic, objectName);
                registered.add(objectName);
                objects.put(objectName, bean);
                return;
            }
            final Class<?> type = bean instanceof Meter ? MeterMBean.class :
                bean instanceof Histogram ? HistogramMBean.class : GaugeMBean.class;
            @SuppressWarnings({"unchecked", "rawtypes"})
            final StandardMBean standard = new StandardMBean(bean, (Class)type);
            server.registerMBean(standard, objectName);
            registered.add(objectName);
            objects.put(objectName, bean);
            if (bean instanceof Meter meter)
            {
                meters.put(objectName, meter);
            }
        }
        catch (final InstanceAlreadyExistsException ex)
        {
            if (!warnedTaken)
            {
                warnedTaken = true;
                LOG.warn("MBean {} is registered already (another broker in this JVM?): its figures stay that broker's", name);
            }
        }
        catch (final JMException ex)
        {
            LOG.warn("cannot register MBean {}", name, ex);
        }
    }

    /** The object behind MBean {@code name} this broker registered, or null (the tests). */
    synchronized Object bean(final String name) throws MalformedObjectNameException
    {
        return objects.get(new ObjectName(name));
    }

    private void unregister(final String name)
    {
        try
        {
            final ObjectName objectName = new ObjectName(name);
            meters.remove(objectName);
            objects.remove(objectName);
            if (registered.remove(objectName))
            {
                server.unregisterMBean(objectName);
            }
        }
        catch (final MalformedObjectNameException | InstanceNotFoundException ex)
        {
            // not ours, or gone already
        }
        catch (final JMException ex)
        {
            LOG.warn("cannot unregister MBean {}", name, ex);
        }
    }

    /**
     * Stops the thread, waits for the queries under way and unregisters every MBean this broker registered: before the
     * broker closes its logs and unmaps its counters.
     */
    @Override
    public void close()
    {
        thread.shutdownNow();
        reads.close();
        synchronized (this)
        {
            for (final ObjectName name : Set.copyOf(registered))
            {
                unregister(name.getCanonicalName());
            }
            meters.clear();
        }
        try
        {
            thread.awaitTermination(5, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
