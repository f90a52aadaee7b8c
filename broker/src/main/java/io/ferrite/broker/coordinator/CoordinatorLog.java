package io.ferrite.broker.coordinator;

import io.ferrite.broker.Errors;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.logthread.AppendCommand;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.AppendResult;
import io.ferrite.wire.record.RecordBatchBuilder;
import io.ferrite.wire.record.RecordBatchDescriptor;
import org.agrona.ExpandableDirectByteBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;

/**
 * The coordinators' writes to their internal topics ({@code __consumer_offsets}, one
 * {@link CoordinatorTopic} each), one batch per change, through the log thread that owns the
 * partition, like any produce: its append path, its hold until the group fsync in fsync durability,
 * its answers when the append or the fsync fails or the log closes. The topics have no second writer
 * (clients cannot produce to them). The topics are compacted (the log cleaner keeps each key's
 * latest record, a tombstone for {@code delete.retention.ms}). A coordinator replays its topic at start itself (the groups:
 * {@code group.GroupReplay}).
 *
 * <p>The coordinators are one more sender on every log thread's queues (slot {@code sender}, after the
 * network threads'). That SPSC pair's producer and consumer side is the coordinators' agent
 * ({@link CoordinatorAgent}), the only thread that calls here (but {@link CoordinatorTopic#create}, from any). So the writes to
 * one partition (one log thread) are appended in the order they were made and come back in that order
 * ({@link #drain}), and what a write changes in memory ({@link Written}) is applied in that order too: a
 * commit validated before a rebalance is stored before anything the rebalance writes (its SyncGroup's
 * group record) is answered.
 */
public final class CoordinatorLog
{
    private static final Logger LOG = LoggerFactory.getLogger(CoordinatorLog.class);
    /** A batch buffer's first size: a commit of a few partitions (it grows as a batch needs). */
    private static final int INITIAL_BATCH_BYTES = 1024;

    /** What a write's answer does, on the coordinators' agent: NONE once it holds what the durability mode promises, else the error to answer. */
    @FunctionalInterface
    public interface Written
    {
        void written(short error);
    }

    /**
     * What a write's answer does when it needs where its batch went: as {@link Written}, with the offset
     * of the batch's first record (its records follow one per offset), -1 when the write failed.
     */
    @FunctionalInterface
    public interface WrittenAt
    {
        void written(short error, long baseOffset);
    }

    /** What a marker's answer does, on the agent: NONE once it holds what the durability mode promises, else the partition's produce error. */
    @FunctionalInterface
    public interface MarkerWritten
    {
        void written(short error);

        /**
         * A marker refused INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED, with what the partition held
         * of the producer when it refused: the first offset of its transaction still open there (-1: none) and its
         * coordinator epoch there. By default the refusal is answered as any error.
         */
        default void refused(final short error, final long openTxnFirstOffset, final int partitionCoordinatorEpoch)
        {
            written(error);
        }
    }

    /**
     * Told, on the agent, of every transaction marker its log thread appended OK (the transaction
     * coordinator's and a client's WriteTxnMarkers' alike), before the marker's own answer runs: the
     * group coordinator ends the offsets pending in that transaction when the partition is one of
     * {@code __consumer_offsets} (Kafka's KafkaApis calls the group coordinator's onTransactionCompleted
     * after such a marker's append, whoever sent it).
     */
    @FunctionalInterface
    public interface MarkersAppended
    {
        void appended(Partition partition, long producerId, boolean commit);
    }

    /** The error a write refused by its log thread ends with, from the append's status: the coordinator's own mapping. */
    @FunctionalInterface
    public interface FailedWrite
    {
        short error(int appendStatus);
    }

    /** A write a request's answer may wait for: done once its log thread answered it (on the agent). */
    public static final class Write
    {
        boolean done;
        short error;

        /** Whether its log thread's answer was applied (on the agent). */
        public boolean done()
        {
            return done;
        }

        /** NONE, or the error the write ended with; meaningful once {@link #done}. */
        public short error()
        {
            return error;
        }
    }

    private final TopicRegistry topics;
    private final AdminAgent admin;
    private final LogThread[] logThreads;
    private final int sender;
    private final RecordBatchBuilder builder = new RecordBatchBuilder();
    private final ArrayDeque<Pending> free = new ArrayDeque<>();
    /** Logs a failed write once for as long as its key's writes keep failing (the retries'). */
    private final RepeatedWriteFailures failures = new RepeatedWriteFailures();
    /** The internal topics written here, one {@link CoordinatorTopic} each. */
    private final Map<String, CoordinatorTopic> registered = new java.util.HashMap<>();
    /** The agent's clock: the records' timestamps are its wall reading. */
    private final CoordinatorClock clock;
    /** The log thread's stamps of the answer being applied (AppendCommand.takenNs, answeredNs; EndTxn timing only). */
    private long takenNs;
    private long answeredNs;
    /** Told of each marker appended (set before the agent runs). */
    private MarkersAppended markersAppended = (partition, producerId, commit) ->
    {
    };

    /**
     * {@code sender} is the coordinators' slot on every log thread's queues (each log thread has one per
     * network thread and this one after them), whose producer and consumer side is the agent.
     */
    public CoordinatorLog(final TopicRegistry topics, final AdminAgent admin, final LogThread[] logThreads, final int sender,
        final CoordinatorClock clock)
    {
        this.topics = topics;
        this.admin = admin;
        this.logThreads = logThreads;
        this.sender = sender;
        this.clock = clock;
    }

    /**
     * An internal topic written here, its keys named {@code keyKind} in the log ("group"), placed by {@code count}:
     * {@code count}'s setting and {@code configs} are what it is created with on first use.
     */
    public CoordinatorTopic topic(final String name, final String keyKind, final PartitionCount count, final Map<String, String> configs,
        final FailedWrite failedWrite)
    {
        if (registered.containsKey(name))
        {
            throw new IllegalStateException(name + " has its CoordinatorTopic already: a second would keep its own writes in flight");
        }
        final CoordinatorTopic topic = new CoordinatorTopic(this, topics, admin, name, keyKind, count, configs, failedWrite);
        registered.put(name, topic);
        return topic;
    }

    /**
     * As {@link #topic(String, String, PartitionCount, Map, FailedWrite)}, placed by the topic's count as this broker's
     * registry has it ({@link PartitionCount#inRegistry}), created with {@code configured} partitions ({@code setting}'s
     * value).
     */
    public CoordinatorTopic topic(final String name, final String keyKind, final String setting, final int configured,
        final Map<String, String> configs, final FailedWrite failedWrite)
    {
        return topic(name, keyKind, PartitionCount.inRegistry(topics, name, setting, configured), configs, failedWrite);
    }

    /** Before the agent runs: who is told of each marker appended ({@link MarkersAppended}). */
    public void markersAppended(final MarkersAppended told)
    {
        this.markersAppended = told;
    }

    /** The agent's clock (for the wall time of what a write's answer changes). */
    public CoordinatorClock clock()
    {
        return clock;
    }

    /**
     * Sends the records (a null value deletes its key) as one batch to {@code partition} for {@code key}'s
     * {@code topic}; see {@link CoordinatorTopic#write(String, List, List, Written)}. With a producer id
     * (not {@link RecordBatchDescriptor#NO_PRODUCER_ID}) the batch is that producer's transactional
     * batch, base sequence -1, appended as Kafka's origin COORDINATOR ({@link AppendCommand#coordinatorBatch}).
     */
    Write write(final CoordinatorTopic topic, final String key, final Partition partition, final List<byte[]> keys,
        final List<byte[]> values, final long producerId, final short producerEpoch, final WrittenAt then)
    {
        final Write write = new Write();
        final Pending pending = free.isEmpty() ? new Pending() : free.poll();
        final long now = clock.wallMs();
        builder.wrap(pending.batch, 0);
        final boolean transactional = producerId != RecordBatchDescriptor.NO_PRODUCER_ID;
        if (transactional)
        {
            builder.producer(producerId, producerEpoch, RecordBatchDescriptor.NO_SEQUENCE).transactional(true);
        }
        for (int i = 0; i < keys.size(); i++)
        {
            builder.appendRecord(now, keys.get(i), values.get(i));
        }
        final int length = builder.build();
        if (transactional)
        {
            pending.command.setCoordinatorBatch(sender, pending, 0, partition, pending.batch, 0, length);
        }
        else
        {
            pending.command.set(sender, pending, 0, partition, pending.batch, 0, length, (short)-1);
        }
        pending.topic = topic;
        pending.key = key;
        pending.write = write;
        pending.then = then;
        if (!logThreads[partition.owner].offer(sender, pending.command))
        {
            pending.release(free);
            LOG.warn("writing {} {} to {} refused: its log thread has a queue's worth of coordinator writes", topic.keyKind, key,
                topic.name);
            finish(write, then, Errors.COORDINATOR_NOT_AVAILABLE, -1);
            return write;
        }
        topic.sent(key);
        return write;
    }

    /**
     * Sends a transaction marker (COMMIT or ABORT of producer {@code producerId}'s transaction, the log
     * builds it) to {@code partition}'s log thread; {@code then} runs once, on the agent, with NONE when
     * the log thread answered it OK (in fsync durability once the fsync covers it), else with the
     * error a partition answers WriteTxnMarkers with — REQUEST_TIMED_OUT at once when the log thread's
     * queue is full (the coordinator sends it again, as it does after a timeout).
     */
    public void writeMarker(final Partition partition, final long producerId, final short producerEpoch, final int coordinatorEpoch,
        final boolean commit, final boolean epochBump, final MarkerWritten then)
    {
        final Pending pending = free.isEmpty() ? new Pending() : free.poll();
        pending.command.setMarker(sender, pending, 0, partition, producerId, producerEpoch, coordinatorEpoch, commit, epochBump);
        pending.marker = then;
        if (!logThreads[partition.owner].offer(sender, pending.command))
        {
            pending.release(free);
            LOG.warn("a marker of producer {} to {} refused: its log thread has a queue's worth of coordinator writes",
                producerId, partition);
            then.written(Errors.REQUEST_TIMED_OUT);
        }
    }

    /**
     * While a write's answer is applied (its {@link Written}), when its log thread sent it back
     * ({@link System#nanoTime}); 0 unless {@link AppendCommand#STAMP_ANSWERS}.
     */
    public long answeredNs()
    {
        return answeredNs;
    }

    /** As {@link #answeredNs}: when its log thread took the write in. */
    public long takenNs()
    {
        return takenNs;
    }

    /** Applies the answers the log threads sent back, oldest first (on the agent); returns how many. */
    public int drain()
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

    /**
     * Kafka 4.4's coordinator answer for a write to its log that failed with a produce error
     * (CoordinatorOperationExceptionHelper): the partition is offline or gone here, so the client
     * looks for the coordinator again; a batch refused as too large is an UNKNOWN_SERVER_ERROR.
     */
    public static short ofFailedWrite(final int appendStatus)
    {
        return ofOperationError(Errors.ofAppend(appendStatus));
    }

    /**
     * An error met by a coordinator operation (its log write, or the verification of a TxnOffsetCommit's transaction) as
     * Kafka 4.4's {@code CoordinatorOperationExceptionHelper.handleOperationException} answers it: NETWORK_EXCEPTION
     * (which older clients may not retry) COORDINATOR_LOAD_IN_PROGRESS; UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS,
     * REQUEST_TIMED_OUT COORDINATOR_NOT_AVAILABLE; NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR NOT_COORDINATOR;
     * MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE, INVALID_FETCH_SIZE UNKNOWN_SERVER_ERROR; any other as it is.
     */
    public static short ofOperationError(final short error)
    {
        switch (error)
        {
            case Errors.NETWORK_EXCEPTION:
                return Errors.COORDINATOR_LOAD_IN_PROGRESS;
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
                return error;
        }
    }

    /**
     * A coordinator batch's answer from its append's status: only OK is a write. DUPLICATE (the log took
     * it for a retry of a batch already there, and appended nothing) fails it too, as
     * UNKNOWN_SERVER_ERROR: what the write's answer stores must be at the offsets it was appended at.
     */
    static short writeError(final int appendStatus, final FailedWrite failedWrite)
    {
        if (appendStatus == AppendResult.OK)
        {
            return Errors.NONE;
        }
        return appendStatus == AppendResult.DUPLICATE ? Errors.UNKNOWN_SERVER_ERROR : failedWrite.error(appendStatus);
    }

    /**
     * The write's answer: {@code then} applies it, and only then is the write done. When applying it
     * throws, the write is never done and an answer waiting for it times out (COORDINATOR_NOT_AVAILABLE)
     * rather than report stored what memory does not hold.
     */
    static void finish(final Write write, final Written then, final short error)
    {
        then.written(error);
        write.error = error;
        write.done = true;
    }

    /** {@link #finish(Write, Written, short)} for a {@link WrittenAt}: {@code baseOffset} -1 unless the write succeeded. */
    static void finish(final Write write, final WrittenAt then, final short error, final long baseOffset)
    {
        then.written(error, baseOffset);
        write.error = error;
        write.done = true;
    }

    /** A write on its way through a log thread: its command and batch, pooled once answered. */
    private final class Pending implements AppendCommand.Listener
    {
        final AppendCommand command = new AppendCommand();
        final ExpandableDirectByteBuffer batch = new ExpandableDirectByteBuffer(INITIAL_BATCH_BYTES);
        CoordinatorTopic topic;
        String key;
        Write write;
        WrittenAt then;
        MarkerWritten marker;

        /** The log thread's answer, taken from the return queue by {@link #drain} on the agent. */
        @Override
        public void appended(final AppendCommand answered)
        {
            if (marker != null)
            {
                final MarkerWritten m = marker;
                final AppendResult r = answered.result;
                final short error = r.succeeded() ? Errors.NONE : Errors.ofAppend(r.status);
                if (error != Errors.NONE)
                {
                    // its sender logs it: the transaction coordinator the first failure in a row, a client's WriteTxnMarkers
                    // gets it in its answer; a retry every tick logged here each time buried everything else
                    LOG.debug("a marker of producer {} to {} failed: {}", answered.producerId, answered.partition, r);
                }
                final Partition partition = answered.partition;
                final long producerId = answered.producerId;
                final boolean commit = answered.commit;
                final long openTxnFirstOffset = r.refusedMarkerOpenTxnFirstOffset;
                final int partitionCoordinatorEpoch = r.refusedMarkerCoordinatorEpoch;
                release(free);
                try
                {
                    if (error == Errors.NONE)
                    {
                        markersAppended.appended(partition, producerId, commit);
                    }
                }
                finally
                {
                    if (error == Errors.INVALID_PRODUCER_EPOCH || error == Errors.TRANSACTION_COORDINATOR_FENCED)
                    {
                        m.refused(error, openTxnFirstOffset, partitionCoordinatorEpoch);
                    }
                    else
                    {
                        m.written(error); // the marker is in the log whatever the hook did: its transaction's run goes on
                    }
                }
                return;
            }
            final CoordinatorTopic t = topic;
            final String k = key;
            final Write w = write;
            final WrittenAt then = this.then;
            final AppendResult r = answered.result;
            final short error = writeError(r.status, t.failedWrite);
            failures.written(t.name, t.keyKind, k, error, r, clock.nowMs());
            final long baseOffset = error == Errors.NONE ? r.firstOffset : -1;
            t.answered(k);
            if (AppendCommand.STAMP_ANSWERS)
            {
                takenNs = answered.takenNs;
                answeredNs = answered.answeredNs;
            }
            release(free);
            finish(w, then, error, baseOffset);
        }

        void release(final ArrayDeque<Pending> pool)
        {
            topic = null;
            key = null;
            write = null;
            then = null;
            marker = null;
            pool.push(this);
        }
    }
}
