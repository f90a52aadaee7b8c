package io.ferrite.broker.topic;

import io.ferrite.log.LogManager;
import io.ferrite.log.PartitionLog;
import org.agrona.DirectBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The topics: created, deleted and reshaped here by one writer, looked up by any thread without a
 * lock. In a broker the writer is the admin agent ({@link io.ferrite.broker.admin.AdminAgent}, which
 * records its thread with {@link #writer}); before it starts, {@link #load} runs on the starting
 * thread. A second writing thread is a defect an assertion catches (the writer is recorded on the
 * normal path; the assertion only compares).
 * Lookups by name take the UTF-8 bytes straight from a request and allocate nothing: the tables
 * are open-addressing arrays, rebuilt and published whole on every change (copy-on-write), which
 * is cheap because topics change rarely and are read on every request.
 *
 * <p>A topic's id lives in Kafka's {@code partition.metadata} file in each partition directory; its
 * config overrides in the partition logs; so the registry rebuilds itself from the log directories
 * ({@link TopicsOnDisk}).
 */
public final class TopicRegistry
{
    private static final Logger LOG = LoggerFactory.getLogger(TopicRegistry.class);

    private final LogManager logs;
    private final int logThreads;
    private final SecureRandom random = new SecureRandom();
    private volatile TopicTables tables = TopicTables.EMPTY;
    /**
     * Topics answered as created whose files the writer is making (name to id and partition count), for the network
     * threads' checks: a DeleteTopics or CreatePartitions of one is handed to the writer, an OffsetCommit of one of its
     * partitions accepted (as Kafka's controller knows a topic once it committed it, and its broker's metadata has it).
     * Written by the writer alone, one name at a time (no copy per change), read by any thread.
     */
    private final Map<String, Creating> creating = new java.util.concurrent.ConcurrentHashMap<>();
    private record Creating(long[] id, int partitions) { }
    /** The same topics by id, for a DeleteTopics by id (no walk over every name being made); changed with {@link #creating}. */
    private final Map<String, String> creatingById = new java.util.concurrent.ConcurrentHashMap<>();
    /** The one thread that may write, once one is named (null: the starting thread, or a test's). */
    private volatile Thread writer;
    /** Told each partition a topic gains, before the topic is published ({@link #onAddedPartitions}). */
    private volatile java.util.function.Consumer<Partition> addedPartition = p -> { };
    /** Told each change (added, removed) before it is published: the topics' counters ({@link #onChange}). */
    private volatile java.util.function.BiConsumer<Topic, Topic> change = (added, removed) -> { };

    public TopicRegistry(final LogManager logs, final int logThreads)
    {
        this.logs = logs;
        this.logThreads = logThreads;
    }

    /** Names the single writer from now on (the admin agent, on its thread). */
    public void writer(final Thread thread)
    {
        this.writer = thread;
    }

    boolean isWriter()
    {
        final Thread w = writer;
        return w == null || w == Thread.currentThread();
    }

    /** Rebuilds the topics from the partition logs found on disk. */
    public void load() throws IOException
    {
        load(Map.of(), Map.of());
    }

    /**
     * {@link #load()}, a topic none of whose partitions holds its id (its creation cut short before any
     * {@code partition.metadata} was written) given the one in {@code answeredIds} (by name: the ids a creation
     * journal answered with: a creation's, or a growth's), else a new one; what else a start finishes is
     * {@link TopicsOnDisk#load}'s.
     */
    public void load(final Map<String, long[]> answeredIds, final Map<String, Map<String, String>> answeredConfigs) throws IOException
    {
        assert isWriter() : Thread.currentThread() + " loads the topics, whose writer is " + writer;
        final List<Topic> topics = TopicsOnDisk.load(this, answeredIds, answeredConfigs);
        tables = new TopicTables(topics);
        LOG.info("loaded {} topics", topics.size());
    }

    /** The log thread owning a partition: a stable hash, so partitions spread over the threads. */
    int owner(final String topic, final int partition)
    {
        return Math.floorMod(topic.hashCode() * 31 + partition, logThreads);
    }

    public Collection<Topic> topics()
    {
        return tables.list;
    }

    public Topic topic(final String name)
    {
        return tables.byNameString(name);
    }

    /** Looks a topic up by the UTF-8 bytes of its name in a buffer; allocates nothing. */
    public Topic topic(final DirectBuffer buffer, final int offset, final int length)
    {
        return tables.byName(buffer, offset, length);
    }

    public Topic topic(final long idMsb, final long idLsb)
    {
        return tables.byId(idMsb, idLsb);
    }

    /**
     * Creates a topic's partition logs and publishes it.
     *
     * @throws IllegalArgumentException when it exists or its name is illegal
     * @throws io.ferrite.log.config.ConfigException for an invalid config
     */
    public Topic create(final String name, final int partitions, final Map<String, String> overrides)
        throws IOException
    {
        return create(name, partitions, overrides, null);
    }

    /**
     * {@link #create(String, int, Map)} with the topic id the cluster's controller gave it ({@code id}: most, least
     * significant bits), so that the topic has the same id on every replica; null makes a new one.
     */
    public Topic create(final String name, final int partitions, final Map<String, String> overrides, final long[] givenId)
        throws IOException
    {
        assert isWriter() : Thread.currentThread() + " creates a topic, whose writer is " + writer;
        // a batch of one: all or nothing, partition.metadata included (a partition left behind would keep the name
        // taken and come back as a topic of its own after a restart)
        return TopicBatch.createOne(this, new TopicBatch.NewTopic(name, partitions, overrides,
            givenId != null ? givenId : newTopicId()));
    }

    /**
     * The writer, before a new topic touches the disk or is published: its name free and its config valid.
     *
     * @throws IllegalArgumentException when it exists
     * @throws io.ferrite.log.config.ConfigException for an invalid config
     */
    void checkNew(final String name, final Map<String, String> overrides)
    {
        if (tables.byNameString(name) != null)
        {
            throw new IllegalArgumentException("Topic '" + name + "' already exists.");
        }
        io.ferrite.log.LogConfig.of(overrides);
    }

    /** The log manager the topics' partitions live in ({@link TopicBatch}). */
    LogManager logs()
    {
        return logs;
    }

    /** Adds partitions up to {@code count}. */
    public Topic addPartitions(final Topic topic, final int count) throws IOException
    {
        final long[] id = {topic.idMostSignificantBits, topic.idLeastSignificantBits};
        final int from = topic.partitions.length;
        final PartitionLog[] made = logs.createLogs(topic.name, from, count, topic.overrides, (dir, p) -> TopicIds.writeNew(dir, id));
        final Partition[] partitions = java.util.Arrays.copyOf(topic.partitions, count);
        for (int p = from; p < count; p++)
        {
            partitions[p] = new Partition(topic.name, p, made[p - from], owner(topic.name, p));
        }
        final Topic updated = new Topic(topic.name, topic.idMostSignificantBits, topic.idLeastSignificantBits, partitions,
            topic.overrides, topic.plannedPartitions(), topic.hasOfflinePartitions()); // a slice of a large topic's creation leaves its count as planned
        publish(updated, topic);
        return updated;
    }

    /**
     * Publishes topic {@code name} of {@code partitions} partitions (id {@code id}, answered to a CreateTopics) with none
     * of them made yet: clients see it whole while its files are made in slices ({@link #addPartitions} up to the count),
     * each partition answering NOT_LEADER_OR_FOLLOWER until it is made ({@link Topic#isBeingMade}).
     *
     * @throws IllegalArgumentException when it exists
     * @throws io.ferrite.log.config.ConfigException for an invalid config
     */
    public Topic plan(final String name, final int partitions, final Map<String, String> overrides, final long[] id)
    {
        assert isWriter() : Thread.currentThread() + " plans a topic, whose writer is " + writer;
        checkNew(name, overrides);
        final Topic topic = new Topic(name, id[0], id[1], new Partition[0], overrides, partitions);
        publish(topic, null);
        return topic;
    }

    /**
     * Large topic {@code topic}, being made in slices ({@link #plan}), or a whole topic grown by more than a slice,
     * grown to {@code count} partitions as clients see them: none of the new ones made, its slices ({@link #addPartitions})
     * make them after the others; or, {@code offline}, all its partitions not made failed ({@link Topic#isOffline}: no
     * slice makes them, a start does), a topic planned for a small one's failed creation included.
     */
    public Topic planMore(final Topic topic, final int count, final boolean offline)
    {
        final Topic updated = new Topic(topic.name, topic.idMostSignificantBits, topic.idLeastSignificantBits, topic.partitions,
            topic.overrides, count, offline);
        publish(updated, topic);
        return updated;
    }

    /**
     * Replaces a topic's config overrides on every partition (persisted; appends and retention
     * see them at once), provided {@code topic} is still the registry's current version of it.
     * A caller reads the overrides, works out new ones and calls this; when another change
     * (configs, partitions, a delete) came in between, nothing is written and null comes back,
     * so the caller reads again and retries rather than overwriting that change.
     *
     * @return the topic as updated, or null when {@code topic} is no longer current
     * @throws io.ferrite.log.config.ConfigException for an invalid config
     */
    public Topic updateConfig(final Topic topic, final Map<String, String> overrides) throws IOException
    {
        if (topic.isDeleted() || tables.byNameString(topic.name) != topic)
        {
            return null;
        }
        io.ferrite.log.LogConfig.of(overrides);
        for (final Partition p : topic.partitions)
        {
            logs.updateConfig(topic.name, p.index, overrides);
        }
        final Topic updated = new Topic(topic.name, topic.idMostSignificantBits, topic.idLeastSignificantBits, topic.partitions,
            overrides, topic.plannedPartitions(), topic.hasOfflinePartitions());
        publish(updated, topic);
        return updated;
    }

    /**
     * Deletes a topic, as Kafka 4.4 does before it answers: gone for new requests, and its partitions'
     * logs closed and their directories renamed to {@code -delete} in one batch
     * ({@code LogManager.deleteLogs}), so that its name is free for a creation right after. Requests
     * that held it before meet closed logs and answer as for a topic that is gone; reads already in
     * its files keep them for {@code file.delete.delay.ms}, after which the log manager closes them
     * and removes the directories. A partition whose log could not be closed or renamed (a failing
     * disk) is marked ({@link TopicsOnDisk#DELETED_MARKER}, best effort) so that the next start finishes its
     * deletion, and the failure is thrown.
     */
    public void delete(final Topic topic) throws IOException
    {
        assert isWriter() : Thread.currentThread() + " deletes a topic, whose writer is " + writer;
        topic.markDeleted(); // first: a read that meets a closed log of it answers as for a topic that is gone
        publish(null, topic);
        try
        {
            logs.deleteLogs(topic.name, 0, topic.partitions.length);
        }
        catch (final IOException | RuntimeException ex)
        {
            for (final Partition p : topic.partitions)
            {
                if (logs.log(topic.name, p.index) == p.log)
                {
                    TopicsOnDisk.markDeleted(p.log.dir(), ex);
                }
            }
            throw ex;
        }
    }

    /**
     * A stray topic (Kafka 4.4's stray logs: a cluster's metadata image does not know its id): gone for requests, as a
     * deleted one, and its partitions' directories renamed {@code <topic>-<partition>.<uuid>-stray} and kept, never
     * loaded again nor removed ({@code LogManager.strayLogs}).
     */
    public void stray(final Topic topic) throws IOException
    {
        assert isWriter() : Thread.currentThread() + " marks a topic stray, whose writer is " + writer;
        topic.markDeleted(); // a request that holds it meets closed logs and answers as for a topic that is gone
        publish(null, topic);
        logs.strayLogs(topic.name, 0, topic.partitions.length);
    }

    /** From now on, {@code hook} is told each partition a topic created or grown gains, before the topic is published. */
    public void onAddedPartitions(final java.util.function.Consumer<Partition> hook)
    {
        addedPartition = hook;
    }

    /** From now on, {@code hook} is told each topic added, changed (new, old) or removed, before it is published. */
    public void onChange(final java.util.function.BiConsumer<Topic, Topic> hook)
    {
        change = hook;
    }

    void publish(final Topic added, final Topic removed)
    {
        assert isWriter() : Thread.currentThread() + " writes the topics, whose writer is " + writer;
        change.accept(added, removed);
        final List<Topic> list = new ArrayList<>(tables.list);
        if (removed != null)
        {
            list.remove(removed);
        }
        if (added != null)
        {
            for (int p = removed == null ? 0 : removed.partitions.length; p < added.partitions.length; p++)
            {
                addedPartition.accept(added.partitions[p]);
            }
            list.add(added);
        }
        tables = new TopicTables(list);
    }

    /**
     * The writer: topic {@code name} (id {@code id}, {@code partitions}) is answered as created and its files being made, until {@link
     * #created}: published, or deleted (a name whose files failed stays here, taken, until then or the next start).
     */
    public void creating(final String name, final long[] id, final int partitions)
    {
        assert isWriter() : Thread.currentThread() + " marks a topic creating, whose writer is " + writer;
        final Creating before = creating.put(name, new Creating(id, partitions));
        if (before != null)
        {
            creatingById.remove(TopicIds.encode(before.id[0], before.id[1]), name);
        }
        creatingById.put(TopicIds.encode(id[0], id[1]), name);
    }

    /** The writer: topic {@code name} marked {@link #creating} is published (before this), or deleted. */
    public void created(final String name)
    {
        assert isWriter() : Thread.currentThread() + " marks a topic created, whose writer is " + writer;
        final Creating was = creating.remove(name);
        if (was != null)
        {
            creatingById.remove(TopicIds.encode(was.id[0], was.id[1]), name);
        }
    }

    /** The id of a topic answered as created whose files are being made, or null. */
    public long[] creatingId(final String name)
    {
        final Creating c = creating.get(name);
        return c == null ? null : c.id;
    }

    /** The partition count a topic answered as created whose files are being made was answered with, or 0 (none such). */
    public int creatingPartitions(final String name)
    {
        final Creating c = creating.get(name);
        return c == null ? 0 : c.partitions;
    }

    /** The name of a topic answered as created whose files are being made, by id, or null. */
    public String creatingName(final long idMsb, final long idLsb)
    {
        return creatingById.get(TopicIds.encode(idMsb, idLsb));
    }

    /** A new topic id (most, least significant bits), unused by the published topics: for a creation journaled before its files. */
    public long[] newId()
    {
        return newTopicId();
    }

    private long[] newTopicId()
    {
        while (true)
        {
            final long msb = random.nextLong();
            final long lsb = random.nextLong();
            // Kafka reserves the zero id and (0, 1) for its metadata topic
            if (!(msb == 0 && (lsb == 0 || lsb == 1)) && tables.byId(msb, lsb) == null)
            {
                return new long[] {msb, lsb};
            }
        }
    }

    /** For tests: the topic ids by name. */
    Map<String, String> ids()
    {
        final Map<String, String> ids = new HashMap<>();
        for (final Topic t : tables.list)
        {
            ids.put(t.name, TopicIds.encode(t.idMostSignificantBits, t.idLeastSignificantBits));
        }
        return ids;
    }
}
