package io.ferrite.broker.metrics;

import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The broker's counters: an Agrona {@link CountersManager} over the counters file ({@link CountersFile}), the network
 * threads' sets ({@link NetworkCounters}, made at the start) and the topics' ({@link TopicCounters}, made and freed as
 * topics come and go: {@link #topicsChanged}). Allocating and freeing take this object's lock — at the start and on
 * the admin agent, never on a request path; a counter's value is written by its one owner without a lock. A freed
 * counter is not reused for {@link #FREE_TO_REUSE_MS}, so a request still holding a deleted topic writes into its
 * old counter, not another topic's.
 */
public final class BrokerCounters
{
    private static final Logger LOG = LoggerFactory.getLogger(BrokerCounters.class);
    /** Room in the file: 16 384 counters (2 MiB of values, 8 MiB of metadata, written whole at the start). */
    public static final int CAPACITY = 16_384;
    static final long FREE_TO_REUSE_MS = 10_000;

    private final CountersFile file; // null: in memory
    private final AtomicBuffer values;
    private final CountersManager manager;
    private final NetworkCounters[] network;
    private final RequestLatencies latencies;
    private final Map<String, TopicCounters> topics = new HashMap<>();
    private final TopicCounters others;
    private final LagCounters lag;
    private final GroupCounters groups;
    private boolean full;

    private BrokerCounters(final CountersFile file, final AtomicBuffer metadata, final AtomicBuffer values,
        final int networkThreads, final boolean recording)
    {
        this.file = file;
        this.values = values;
        this.manager = new CountersManager(metadata, values, StandardCharsets.UTF_8, SystemEpochClock.INSTANCE,
            FREE_TO_REUSE_MS);
        this.network = new NetworkCounters[networkThreads];
        for (int i = 0; i < networkThreads; i++)
        {
            network[i] = new NetworkCounters(this, i, recording);
        }
        final RequestTimes[] times = new RequestTimes[networkThreads];
        for (int i = 0; i < networkThreads; i++)
        {
            times[i] = network[i].times();
        }
        this.latencies = new RequestLatencies(times);
        this.others = newTopic("(others)");
        this.lag = new LagCounters(this);
        this.groups = new GroupCounters(this);
    }

    /** The most network threads whose counters (and the (others) topic's, and the broker-wide group ones) fit in the file. */
    public static int maxNetworkThreads()
    {
        return (CAPACITY - LagCounters.BROKER_WIDE - GroupCounters.COUNT) / (NetworkCounters.COUNT + TopicCounters.PER_THREAD);
    }

    /**
     * A fresh counters file in {@code dir} for a broker of {@code networkThreads} network threads (at most
     * {@link #maxNetworkThreads}: an {@link IllegalArgumentException} beyond).
     */
    public static BrokerCounters create(final Path dir, final int networkThreads) throws IOException
    {
        return create(dir, networkThreads, true);
    }

    /**
     * As {@link #create(Path, int)}; {@code recording} false: the network threads record nothing per request
     * ({@code ferrite.metrics.recording}, {@link NetworkCounters#recording}), their counters are there at 0.
     */
    public static BrokerCounters create(final Path dir, final int networkThreads, final boolean recording) throws IOException
    {
        if (networkThreads > maxNetworkThreads())
        {
            throw new IllegalArgumentException(networkThreads + " network threads: the counters file holds the counters of "
                + maxNetworkThreads() + " at most");
        }
        final CountersFile file = CountersFile.create(dir, CAPACITY);
        return new BrokerCounters(file, file.metadata(), file.values(), networkThreads, recording);
    }

    /** Counters in this process's memory only (network threads made without a broker, in tests). */
    static BrokerCounters inMemory(final int networkThreads)
    {
        return inMemory(networkThreads, 1024);
    }

    /** Counters of {@code counters} slots in this process's memory only (a broker whose counters file cannot be made). */
    public static BrokerCounters inMemory(final int networkThreads, final int counters)
    {
        return inMemory(networkThreads, counters, true);
    }

    /** As {@link #inMemory(int, int)}, recording per request or not ({@link #create(Path, int, boolean)}). */
    public static BrokerCounters inMemory(final int networkThreads, final int counters, final boolean recording)
    {
        return new BrokerCounters(null,
            new UnsafeBuffer(ByteBuffer.allocateDirect(counters * CountersReader.METADATA_LENGTH)),
            new UnsafeBuffer(ByteBuffer.allocateDirect(counters * CountersReader.COUNTER_LENGTH)), networkThreads, recording);
    }

    public NetworkCounters network(final int thread)
    {
        return network[thread];
    }

    /** The network threads' request times, read as Kafka's {@code RequestMetrics} histograms (in the heap, not the file). */
    public RequestLatencies latencies()
    {
        return latencies;
    }

    /** The consumer groups' lag counters (written by the group coordinator's agent). */
    public LagCounters lag()
    {
        return lag;
    }

    /** The group coordinator's counters (written by its agent). */
    public GroupCounters groups()
    {
        return groups;
    }

    /** Counters still free in the file. */
    synchronized int available()
    {
        return manager.available();
    }

    /** Gives counter {@code id} back (not reused for {@link #FREE_TO_REUSE_MS}). */
    synchronized void free(final int id)
    {
        manager.free(id);
    }

    /** A reader of the counters (in this process). */
    public CountersReader reader()
    {
        return manager;
    }

    /** Unmaps the counters file: once nothing writes or reads a counter any more (the broker's close, at its end). */
    public void close()
    {
        if (file != null)
        {
            file.close();
        }
    }

    /** The file's directory's counters file, or null for counters in memory. */
    public CountersFile file()
    {
        return file;
    }

    /**
     * The topics published changed (on the topics' single writer, before the change is published): {@code added} (a
     * new topic, or a new version of {@code removed}) gets its counters on each of its partitions, and a topic
     * {@code removed} without a new version gives its counters back.
     */
    public void topicsChanged(final Topic added, final Topic removed)
    {
        if (added != null)
        {
            // a new version keeps its name's counters: topic() finds them by name (or "(others)" again: full is sticky)
            final TopicCounters counters = topic(added.name);
            for (final Partition p : added.partitions)
            {
                p.counters(counters);
            }
        }
        else if (removed != null)
        {
            free(removed.name);
        }
    }

    /** The counters of topic {@code name}, allocated on its first sight. */
    public synchronized TopicCounters topic(final String name)
    {
        final TopicCounters existing = topics.get(name);
        if (existing != null)
        {
            return existing;
        }
        if (full || manager.available() < TopicCounters.PER_THREAD * network.length)
        {
            if (!full)
            {
                LOG.warn("the counters file is full ({} counters): topic {} and the later ones are counted as (others)",
                    manager.capacity(), name);
            }
            full = true;
            return others;
        }
        final TopicCounters made = newTopic(name);
        topics.put(name, made);
        return made;
    }

    private synchronized void free(final String name)
    {
        final TopicCounters gone = topics.remove(name);
        if (gone == null)
        {
            return;
        }
        for (final AtomicCounter[] kind : gone.all())
        {
            for (final AtomicCounter c : kind)
            {
                manager.free(c.id());
            }
        }
    }

    private TopicCounters newTopic(final String name)
    {
        final int n = network.length;
        final AtomicCounter[] recordsIn = new AtomicCounter[n];
        final AtomicCounter[] bytesIn = new AtomicCounter[n];
        final AtomicCounter[] bytesOut = new AtomicCounter[n];
        final String topic = " topic=" + name;
        for (int i = 0; i < n; i++)
        {
            final String net = " net=" + i;
            recordsIn[i] = allocateTopic(CounterTypes.TOPIC_RECORDS_IN, i, name, "records in" + topic + net);
            bytesIn[i] = allocateTopic(CounterTypes.TOPIC_BYTES_IN, i, name, "bytes in" + topic + net);
            bytesOut[i] = allocateTopic(CounterTypes.TOPIC_BYTES_OUT, i, name, "bytes out" + topic + net);
        }
        return new TopicCounters(name, recordsIn, bytesIn, bytesOut);
    }

    /** A counter of type {@code type} for network thread {@code thread} (-1: the broker's) with {@code code} in its key. */
    synchronized AtomicCounter allocate(final int type, final int thread, final int code, final String label)
    {
        final int id = manager.allocate(label, type, key ->
        {
            key.putInt(0, thread);
            key.putInt(4, code);
        });
        return new AtomicCounter(values, id);
    }

    /** As {@link #allocate}, or null when no more than {@code reserve} counters are free (checked under the same lock). */
    synchronized AtomicCounter allocateKeeping(final int reserve, final int type, final int thread, final int code,
        final String label)
    {
        return manager.available() <= reserve ? null : allocate(type, thread, code, label);
    }

    private AtomicCounter allocateTopic(final int type, final int thread, final String topic, final String label)
    {
        final byte[] name = topic.getBytes(StandardCharsets.UTF_8);
        final int id = manager.allocate(label, type, key ->
        {
            key.putInt(0, thread);
            // a name longer than the key's room (Kafka allows 249 bytes) is cut there; the label has it whole
            final int length = Math.min(name.length, CountersReader.MAX_KEY_LENGTH - 8);
            key.putInt(4, length);
            key.putBytes(8, name, 0, length);
        });
        return new AtomicCounter(values, id);
    }
}
