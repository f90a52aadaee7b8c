package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.logthread.AppendCommand;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.AppendResult;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The groups' records in {@code __consumer_offsets}, written one batch per change (a group goes to
 * the partition its id hashes to; the topic is created on first use) through the log thread that owns
 * that partition, like any produce: its append path, its hold until the group fsync in fsync
 * durability, its answers when the append or the fsync fails or the log closes. The topic has no
 * second writer (clients cannot produce to it).
 *
 * <p>The coordinator is one more sender on every log thread's queues (slot {@code sender}, after the
 * network threads'). That SPSC pair's producer and consumer side is the coordinator's agent
 * ({@link GroupAgent}), the only thread that calls here (but {@link #createOffsetsTopic}, from any). So the writes of
 * one group (one partition, one log thread) are appended in the order they were made and come back
 * in that order ({@link #drain}), and what a write changes in memory ({@link Written}) is applied in
 * that order too: a commit validated before a rebalance is stored before anything the rebalance
 * writes (its SyncGroup's group record) is answered. Replay at start is {@link GroupReplay}'s. The
 * topic is not compacted yet: it keeps every commit until retention removes whole segments.
 */
final class GroupStore
{
    private static final Logger LOG = LoggerFactory.getLogger(GroupStore.class);
    /** A batch buffer's first size: a commit of a few partitions (it grows as a batch needs). */
    private static final int INITIAL_BATCH_BYTES = 1024;
    /** How long a write waits for the offsets topic's creation: the coordinator's write timeout (see AwaitingWrites). */
    private static final long OFFSETS_TOPIC_WAIT_MS = AwaitingWrites.TIMEOUT_MS;

    /** What a write's answer does, on the coordinator's agent: NONE once it holds what the durability mode promises, else the error to answer. */
    @FunctionalInterface
    interface Written
    {
        void written(short error);
    }

    /** A write a request's answer may wait for: done once its log thread answered it (on the agent). */
    static final class Write
    {
        boolean done;
        short error;
    }

    private final TopicRegistry topics;
    private final AdminAgent admin;
    /**
     * The offsets topic's creation on the admin agent, once asked for: by the network threads'
     * FindCoordinator and by the coordinator's agent (a write that found no topic), so set by a CAS.
     */
    private final AtomicReference<CompletableFuture<Topic>> creating = new AtomicReference<>();
    private final GroupCoordinator.Settings settings;
    private final LogThread[] logThreads;
    private final int sender;
    private final RecordBatchBuilder builder = new RecordBatchBuilder();
    private final ArrayDeque<Pending> free = new ArrayDeque<>();
    /** Writes sent and not yet answered, by the group id they were made for. */
    private final Map<String, Integer> inFlight = new HashMap<>();

    /** The agent's clock: the records' timestamps are its wall reading. */
    private final GroupClock clock;

    GroupStore(final TopicRegistry topics, final AdminAgent admin, final GroupCoordinator.Settings settings,
        final LogThread[] logThreads, final int sender, final GroupClock clock)
    {
        this.clock = clock;
        this.topics = topics;
        this.admin = admin;
        this.settings = settings;
        this.logThreads = logThreads;
        this.sender = sender;
    }

    /** Appends one record (a null value deletes the key) to the group's partition; see {@link #write(String, List, List, Written)}. */
    Write write(final String groupId, final byte[] key, final byte[] value, final Written then)
    {
        return write(groupId, List.of(key), java.util.Collections.singletonList(value), then);
    }

    /**
     * Sends the records (a null value deletes its key) as one batch to the group's partition, so that
     * one request's changes are on disk all or not at all, as Kafka writes one batch per coordinator
     * operation. {@code then} runs once, on the agent, with NONE when the log thread
     * answered the append OK (in fsync durability: once the fsync covers it), else with the error Kafka
     * 4.4's coordinator answers for the failed write — later, from {@link #drain}, or at once when the
     * batch cannot be sent (no offsets topic, the log thread's queue full). A caller changes memory in
     * {@code then} only, so that nothing changes for a write that failed.
     */
    Write write(final String groupId, final List<byte[]> keys, final List<byte[]> values, final Written then)
    {
        final Write write = new Write();
        final Partition partition = partition(groupId);
        if (partition == null)
        {
            finish(write, then, Errors.COORDINATOR_NOT_AVAILABLE); // no offsets topic: Kafka's answer while it has none
            return write;
        }
        final Pending pending = free.isEmpty() ? new Pending() : free.poll();
        final long now = clock.wallMs();
        builder.wrap(pending.batch, 0);
        for (int i = 0; i < keys.size(); i++)
        {
            builder.appendRecord(now, keys.get(i), values.get(i));
        }
        final int length = builder.build();
        pending.command.set(sender, pending, 0, partition, pending.batch, 0, length, (short)-1);
        pending.groupId = groupId;
        pending.write = write;
        pending.then = then;
        if (!logThreads[partition.owner].offer(sender, pending.command))
        {
            pending.release(free);
            LOG.warn("writing group {} to {} refused: its log thread has a queue's worth of group writes", groupId,
                GroupCoordinator.OFFSETS_TOPIC);
            finish(write, then, Errors.COORDINATOR_NOT_AVAILABLE);
            return write;
        }
        inFlight.merge(groupId, 1, Integer::sum);
        return write;
    }

    /** The agent's clock (for the wall time of what a write's answer changes). */
    GroupClock clock()
    {
        return clock;
    }

    /** Whether a write made for {@code groupId} waits for its log thread's answer. */
    boolean writing(final String groupId)
    {
        return inFlight.containsKey(groupId);
    }

    /** Applies the answers the log threads sent back, oldest first (on the agent); returns how many. */
    int drain()
    {
        int answered = 0;
        for (final LogThread logThread : logThreads)
        {
            AppendCommand command;
            while ((command = logThread.poll(sender)) != null)
            {
                command.request.appended(command);
                answered++;
            }
        }
        return answered;
    }

    /** The partition of {@code __consumer_offsets} a group's records go to (all of one partition can share a batch). */
    int partitionOf(final String groupId)
    {
        final Topic topic = topics.topic(GroupCoordinator.OFFSETS_TOPIC);
        return GroupCoordinator.partitionFor(groupId, topic == null ? settings.offsetsTopicPartitions() : topic.partitions.length);
    }

    /**
     * Kafka 4.4's coordinator answer for a write to its log that failed with a produce error
     * (CoordinatorOperationExceptionHelper): the partition is offline or gone here, so the client
     * looks for the coordinator again; a batch refused as too large is an UNKNOWN_SERVER_ERROR.
     */
    static short ofFailedWrite(final int appendStatus)
    {
        final short produceError = Errors.ofAppend(appendStatus);
        switch (produceError)
        {
            case Errors.UNKNOWN_TOPIC_OR_PARTITION:
            case Errors.NOT_ENOUGH_REPLICAS:
            case Errors.REQUEST_TIMED_OUT:
                return Errors.COORDINATOR_NOT_AVAILABLE;
            case Errors.NOT_LEADER_OR_FOLLOWER:
            case Errors.KAFKA_STORAGE_ERROR:
                return Errors.NOT_COORDINATOR;
            case Errors.MESSAGE_TOO_LARGE:
            case Errors.RECORD_LIST_TOO_LARGE:
            case Errors.INVALID_FETCH_SIZE:
                return Errors.UNKNOWN_SERVER_ERROR;
            default:
                return produceError;
        }
    }

    /**
     * The write's answer: {@code then} applies it, and only then is the write done. When applying it
     * throws, the write is never done and an answer waiting for it times out (COORDINATOR_NOT_AVAILABLE)
     * rather than report stored what memory does not hold.
     */
    private static void finish(final Write write, final Written then, final short error)
    {
        then.written(error);
        write.error = error;
        write.done = true;
    }

    /**
     * Asks the admin agent to create the offsets topic if nobody asked yet, or the last ask failed
     * (any thread): FindCoordinator does, as Kafka creates it on the first FindCoordinator, and
     * answers once it exists, so that the first write finds it there. One ask wins the CAS; the others
     * get its creation.
     */
    CompletableFuture<Topic> createOffsetsTopic()
    {
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
                admin.createTopic(GroupCoordinator.OFFSETS_TOPIC, settings.offsetsTopicPartitions(), Map.of("cleanup.policy",
                    "compact", "segment.bytes", Integer.toString(settings.offsetsTopicSegmentBytes()))).whenComplete((topic, failure) ->
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

    private Partition partition(final String groupId)
    {
        Topic topic = topics.topic(GroupCoordinator.OFFSETS_TOPIC);
        if (topic == null)
        {
            // a client that wrote without a FindCoordinator first (or before its creation ended): the
            // coordinator's agent waits for the admin agent, once in the broker's life, at most OFFSETS_TOPIC_WAIT_MS
            try
            {
                topic = createOffsetsTopic().get(OFFSETS_TOPIC_WAIT_MS, TimeUnit.MILLISECONDS);
            }
            catch (final ExecutionException ex)
            {
                topic = topics.topic(GroupCoordinator.OFFSETS_TOPIC); // created meanwhile (exists), else a failure
                if (topic == null)
                {
                    LOG.error("cannot create {}", GroupCoordinator.OFFSETS_TOPIC, ex.getCause());
                    return null;
                }
            }
            catch (final TimeoutException ex)
            {
                LOG.warn("{} not created within {} ms", GroupCoordinator.OFFSETS_TOPIC, OFFSETS_TOPIC_WAIT_MS);
                return null;
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                return null;
            }
        }
        return topic.partitions[partitionOf(groupId)];
    }

    /** A write on its way through a log thread: its command and batch, pooled once answered. */
    private final class Pending implements AppendCommand.Listener
    {
        final AppendCommand command = new AppendCommand();
        final ExpandableDirectByteBuffer batch = new ExpandableDirectByteBuffer(INITIAL_BATCH_BYTES);
        String groupId;
        Write write;
        Written then;

        /** The log thread's answer, taken from the return queue by {@link #drain} on the agent. */
        @Override
        public void appended(final AppendCommand answered)
        {
            final String group = groupId;
            final Write w = write;
            final Written t = then;
            final AppendResult r = answered.result;
            final short error = r.succeeded() ? Errors.NONE : ofFailedWrite(r.status);
            if (error != Errors.NONE)
            {
                LOG.error("writing group {} to {} failed: {}", group, GroupCoordinator.OFFSETS_TOPIC, r);
            }
            inFlight.computeIfPresent(group, (g, n) -> n > 1 ? n - 1 : null);
            release(free);
            finish(w, t, error);
        }

        void release(final ArrayDeque<Pending> pool)
        {
            groupId = null;
            write = null;
            then = null;
            pool.push(this);
        }
    }
}
