package io.ferrite.broker.coordinator;

import io.ferrite.broker.Errors;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.record.RecordBatchDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One internal topic a coordinator keeps its records in (created on first use): a key — a group id —
 * goes to its partition ({@link #partitionFor}), written through {@link CoordinatorLog}. Its methods
 * are the coordinators' agent's, but {@link #create}, which any thread may call.
 */
public final class CoordinatorTopic
{
    private static final Logger LOG = LoggerFactory.getLogger(CoordinatorTopic.class);
    /** How long a write waits for the topic's creation: the coordinator's write timeout (see AwaitingWrites). */
    private static final long CREATION_WAIT_MS = AwaitingWrites.TIMEOUT_MS;

    final String name;
    /** What its keys are, for the log: "group". */
    final String keyKind;
    /** The error a write its log thread refused ends with. */
    final CoordinatorLog.FailedWrite failedWrite;
    private final CoordinatorLog log;
    private final TopicRegistry topics;
    private final AdminAgent admin;
    /**
     * The partition count its keys are placed by, shared with the coordinator's other placers (FindCoordinator's in a
     * cluster) and fixed for the broker's life ({@link PartitionCount}: alone, at the topic's first sight, {@link
     * #fixCount}, the replay at start or its creation; in a cluster, at the node's first metadata image), as Kafka's coordinator fixes numPartitions at start-up:
     * Kafka 4.4 lets CreatePartitions grow {@code __consumer_offsets} (checked on a Kafka 4.4 node), and placing by the
     * grown count would move keys to other partitions (other log threads) while their writes are in flight, so a later
     * write could be applied before an earlier one. What the old count placed is found as strays at the next start,
     * and moved home then (alone; a cluster's controller topic has no strays). Its setting is what the topic is
     * created with.
     */
    private final PartitionCount count;
    private final Map<String, String> configs;
    /**
     * The topic's creation on the admin agent, once asked for: by the network threads (FindCoordinator)
     * and by the coordinators' agent (a write that found no topic), so set by a CAS.
     */
    private final AtomicReference<CompletableFuture<Topic>> creating = new AtomicReference<>();
    /** In a cluster: the topic is created through the controller, never by {@link #create} (set before it is used). */
    private volatile boolean createdElsewhere;
    /** Writes sent and not yet answered, by the key they were made for. */
    private final Map<String, Integer> inFlight = new HashMap<>();

    CoordinatorTopic(final CoordinatorLog log, final TopicRegistry topics, final AdminAgent admin, final String name,
        final String keyKind, final PartitionCount count, final Map<String, String> configs, final CoordinatorLog.FailedWrite failedWrite)
    {
        this.keyKind = keyKind;
        this.failedWrite = failedWrite;
        this.log = log;
        this.topics = topics;
        this.admin = admin;
        this.name = name;
        this.count = count;
        this.configs = configs;
    }

    /**
     * The partition of an internal topic that a coordinator key (a group id, a transactional id)
     * belongs to, as Kafka 4.4 computes it: {@code Utils.abs(key.hashCode()) % partitions}, where
     * the absolute value of {@link Integer#MIN_VALUE} is 0. The same as Kafka's, so that Kafka's
     * files and Ferrite's put a key's records in one partition (and a transaction's
     * {@code __consumer_offsets} partition, which DescribeTransactions shows, is Kafka's).
     */
    public static int partitionFor(final String key, final int partitions)
    {
        final int hash = key.hashCode();
        return (hash == Integer.MIN_VALUE ? 0 : Math.abs(hash)) % partitions;
    }

    /**
     * Fixes the partition count keys are placed by to {@code topic}'s, if not fixed yet (see {@link
     * #count}); returns the count fixed. Any thread.
     */
    public int fixCount(final Topic topic)
    {
        return count.fix(topic.plannedPartitions()); // a large topic is made in slices: its planned count
    }

    /** The count its keys are placed by, which FindCoordinator's placement reads too in a cluster. */
    public PartitionCount count()
    {
        return count;
    }

    /** The topic's name. */
    public String name()
    {
        return name;
    }

    /** The agent's clock (for the wall time of what a write's answer changes). */
    public CoordinatorClock clock()
    {
        return log.clock();
    }

    /** Appends one record (a null value deletes the key) to the key's partition; see {@link #write(String, List, List, CoordinatorLog.Written)}. */
    public CoordinatorLog.Write write(final String key, final byte[] recordKey, final byte[] value, final CoordinatorLog.Written then)
    {
        return write(key, List.of(recordKey), java.util.Collections.singletonList(value), then);
    }

    /**
     * Sends the records (a null value deletes its key) as one batch to {@code key}'s partition, so
     * that one request's changes are on disk all or not at all, as Kafka writes one batch per
     * coordinator operation. {@code then} runs once, on the agent, with NONE when the log thread
     * answered the append OK (in fsync durability: once the fsync covers it), else with the error Kafka
     * 4.4's coordinator answers for the failed write — later, from {@link CoordinatorLog#drain}, or at
     * once when the batch cannot be sent (no topic, the log thread's queue full). A caller changes
     * memory in {@code then} only, so that nothing changes for a write that failed.
     */
    public CoordinatorLog.Write write(final String key, final List<byte[]> keys, final List<byte[]> values,
        final CoordinatorLog.Written then)
    {
        return write(key, keys, values, RecordBatchDescriptor.NO_PRODUCER_ID, RecordBatchDescriptor.NO_PRODUCER_EPOCH,
            (error, baseOffset) -> then.written(error));
    }

    /**
     * As {@link #write(String, List, List, CoordinatorLog.Written)}, told where the batch went; with a
     * {@code producerId} (not {@link RecordBatchDescriptor#NO_PRODUCER_ID}) the batch is that producer's
     * transactional batch (see {@link CoordinatorLog}): the group coordinator's offsets inside a transaction.
     */
    public CoordinatorLog.Write write(final String key, final List<byte[]> keys, final List<byte[]> values, final long producerId,
        final short producerEpoch, final CoordinatorLog.WrittenAt then)
    {
        final Partition partition = partition(key);
        if (partition == null)
        {
            final CoordinatorLog.Write write = new CoordinatorLog.Write();
            CoordinatorLog.finish(write, then, Errors.COORDINATOR_NOT_AVAILABLE, -1); // no topic: Kafka's answer while it has none
            return write;
        }
        return log.write(this, key, partition, keys, values, producerId, producerEpoch, then);
    }

    /**
     * Sends the records as one batch to partition {@code partition} of the topic, which need not be
     * {@code key}'s: for records of {@code key} found in another partition (the groups' strays, {@code
     * group.StrayMigration}), which only a write there can delete. As {@link #write(String, List, List,
     * CoordinatorLog.Written)} otherwise, and counted as a write of {@code key} in flight.
     */
    public CoordinatorLog.Write writeTo(final int partition, final String key, final List<byte[]> keys, final List<byte[]> values,
        final CoordinatorLog.Written then)
    {
        final Topic topic = topics.topic(name);
        if (topic == null || partition >= topic.partitions.length)
        {
            final CoordinatorLog.Write write = new CoordinatorLog.Write();
            CoordinatorLog.finish(write, then, Errors.COORDINATOR_NOT_AVAILABLE);
            return write;
        }
        return log.write(this, key, topic.partitions[partition], keys, values, RecordBatchDescriptor.NO_PRODUCER_ID,
            RecordBatchDescriptor.NO_PRODUCER_EPOCH, (error, baseOffset) -> then.written(error));
    }

    /** Whether a write made for {@code key} waits for its log thread's answer. */
    public boolean writing(final String key)
    {
        return inFlight.containsKey(key);
    }

    /** The keys with a write waiting for its log thread's answer ({@link #writing}), each once. */
    public void forEachWriting(final java.util.function.Consumer<String> key)
    {
        inFlight.keySet().forEach(key);
    }

    void sent(final String key)
    {
        inFlight.merge(key, 1, Integer::sum);
    }

    void answered(final String key)
    {
        inFlight.computeIfPresent(key, (k, n) -> n > 1 ? n - 1 : null);
    }

    /** In a cluster: the topic is the controller's to create; {@link #create} fails from now on. */
    public void createdElsewhere()
    {
        createdElsewhere = true;
    }

    /** The partition count keys are placed by: the topic's fixed count, or the one it is created with while it does not exist. */
    public int partitionCount()
    {
        final Topic topic = topics.topic(name);
        return topic != null ? fixCount(topic) : count.get();
    }

    /** The partition a key's records go to (all of one partition can share a batch). */
    public int partitionOf(final String key)
    {
        return partitionFor(key, partitionCount());
    }

    /**
     * Asks the admin agent to create the topic if nobody asked yet, or the last ask failed (any
     * thread): FindCoordinator does, as Kafka creates its internal topics on the first FindCoordinator,
     * and answers once it exists, so that the first write finds it there. One ask wins the CAS; the
     * others get its creation.
     */
    public CompletableFuture<Topic> create()
    {
        if (createdElsewhere)
        {
            return CompletableFuture.failedFuture(new IllegalStateException(name + " is created through the cluster's controller"));
        }
        while (true)
        {
            final CompletableFuture<Topic> asked = creating.get();
            if (asked != null && !asked.isCompletedExceptionally())
            {
                return asked;
            }
            final CompletableFuture<Topic> ask = new CompletableFuture<>();
            if (creating.compareAndSet(asked, ask))
            {
                admin.createTopic(name, count.configured(), configs).whenComplete((topic, failure) ->
                {
                    if (failure == null)
                    {
                        ask.complete(topic);
                    }
                    else
                    {
                        ask.completeExceptionally(failure);
                    }
                });
                return ask;
            }
        }
    }

    private Partition partition(final String key)
    {
        Topic topic = topics.topic(name);
        if (topic == null)
        {
            // a client that wrote without a FindCoordinator first (or before its creation ended): the
            // coordinators' agent waits for the admin agent, once in the broker's life, at most CREATION_WAIT_MS
            try
            {
                topic = create().get(CREATION_WAIT_MS, TimeUnit.MILLISECONDS);
            }
            catch (final ExecutionException ex)
            {
                topic = topics.topic(name); // created meanwhile (exists), else a failure
                if (topic == null)
                {
                    LOG.error("cannot create {}", name, ex.getCause());
                    return null;
                }
            }
            catch (final TimeoutException ex)
            {
                LOG.warn("{} not created within {} ms", name, CREATION_WAIT_MS);
                return null;
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                return null;
            }
        }
        // an offline topic (its files failed) is published with fewer partitions made than planned: the
        // key's partition is missing, so the write answers COORDINATOR_NOT_AVAILABLE, as writeTo does
        final int index = partitionFor(key, fixCount(topic));
        return index < topic.partitions.length ? topic.partitions[index] : null;
    }
}
