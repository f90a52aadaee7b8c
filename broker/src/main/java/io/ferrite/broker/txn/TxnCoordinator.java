package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.AwaitingWrites;
import io.ferrite.broker.coordinator.CoordinatorAgent;
import io.ferrite.broker.coordinator.CoordinatorCall;
import io.ferrite.broker.coordinator.CoordinatorClock;
import io.ferrite.broker.coordinator.CoordinatorRuntime;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.broker.txn.TxnDecision.Answer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToIntFunction;

/**
 * The transaction coordinator, on the coordinators' agent ({@link CoordinatorRuntime}): the
 * transactions of every transactional id ({@link TxnCache}) and their records in
 * {@code __transaction_state}. A request's rule ({@code *Rules}) answers at once or prepares a
 * transition, written as one record through the partition's log thread ({@link CoordinatorTopic}) and
 * applied when that log thread answers ({@link TxnWrites}): so an answer is as durable as the
 * durability mode promises. A written PrepareCommit/PrepareAbort answers EndTxn, then its markers go
 * to every partition of the transaction through their log threads (on one node the coordinator
 * writes them itself: Kafka's WriteTxnMarkers without the network), and once every one is written
 * (in fsync durability: fsynced) the Complete* record is. A partition whose topic is gone is dropped
 * from the job, as Kafka does; one that answers a retriable error gets its marker again after a
 * growing delay ({@link RetryBackoff}: 50 ms, doubled each time, at most 5 s), as does a Complete*
 * whose write failed retriably; the first failure is logged, and the number of tries once one
 * succeeds. One that refuses the marker for good (a later epoch) is dropped when it has no
 * transaction of the producer open, sent the marker again with its coordinator epoch when that
 * fenced it, else the transaction stays prepared ({@link TxnMarkerRuns}). At start each partition
 * is replayed, and the transactions it left prepared are completed (markers sent again, Complete*
 * written), as Kafka's load does; ongoing ones are left to the timeout sweep.
 *
 * <p>Every method but {@link #topicWanted} and {@link #load} runs on the agent.
 */
public final class TxnCoordinator
{
    public static final String TOPIC = "__transaction_state";
    private static final Logger LOG = LoggerFactory.getLogger(TxnCoordinator.class);
    /** The coordinator epoch markers carry at first: the {@code __transaction_state} partition's leader epoch, 0 on one node (see {@link TxnMarkerRuns}). */
    static final int COORDINATOR_EPOCH = 0;
    /** Kafka's transaction.remove.expired.transaction.cleanup.interval.ms default. */
    private static final long EXPIRY_CHECK_MS = 3_600_000;

    private final TopicRegistry topics;
    private final TxnConfig config;
    private final TxnCache cache;
    private final CoordinatorRuntime runtime;
    private final CoordinatorClock clock;
    private final CoordinatorTopic store;
    private final ProducerIdSource ids;
    /** Marker jobs whose markers are still on their way, or waiting to be sent again. */
    private final TxnMarkerRuns markers;
    /** Which partitions of {@code __transaction_state} this node coordinates. */
    private final TxnOwnership ownership;
    /** Complete* records whose write failed retriably: written again when their backoff says. */
    private final CompleteRewrites rewrites = new CompleteRewrites();
    /** Jobs the load left (prepared transactions), run by the agent's first tick. */
    private final List<MarkerJob> fromLoad = new ArrayList<>();
    /**
     * Jobs whose Prepare* was applied in the agent's pass, started at its end ({@link #startMarkers}), once the
     * EndTxn answers it made final are published: the network thread is woken before a log thread is.
     */
    private final ArrayDeque<MarkerJob> toStart = new ArrayDeque<>();
    /**
     * The {@code __consumer_offsets} partition a group's records are written to (AddOffsetsToTxn adds it):
     * the group coordinator's, once {@link #offsetsPartitionOf(ToIntFunction)} told; by the configured count before.
     */
    private ToIntFunction<String> offsetsPartitionOf;
    private long nextTimeoutCheckMs;
    private long nextExpiryCheckMs;

    public TxnCoordinator(final TopicRegistry topics, final TxnConfig config, final int segmentBytes, final CoordinatorRuntime runtime,
        final ProducerIdSource ids)
    {
        this.topics = topics;
        this.config = config;
        this.cache = new TxnCache(config);
        this.runtime = runtime;
        this.clock = runtime.clock();
        this.ids = ids;
        // one count for the store, the cache, the ownership and FindCoordinator
        this.store = runtime.log().topic(TOPIC, "transactional id", config.stateLog(),
            Map.of("cleanup.policy", "compact", "compression.type", "uncompressed", "segment.bytes", Integer.toString(segmentBytes)),
            Errors::ofAppend);
        this.offsetsPartitionOf = config::offsetsPartitionFor;
        this.markers = new TxnMarkerRuns(topics, cache, runtime.log(), clock, complete ->
        {
            if (EndTxnTiming.ENABLED)
            {
                timed(complete.transactionalId(), EndTxnTiming.Stage.MARKERS, System.nanoTime());
            }
            write(complete, null);
        });
        this.ownership = new TxnOwnership(this, topics);
        cache.followedBy(ownership);
        runtime.onBeforeCalls(ownership::reconcile);
        runtime.onTick(this::tick);
        runtime.onAfterAnswers(this::startMarkers);
    }

    /**
     * Where AddOffsetsToTxn finds a group's {@code __consumer_offsets} partition: the group coordinator's
     * placement (its topic's own partition count), called on the agent both run on; TxnOffsetCommit
     * verifies and writes that same partition.
     */
    public void offsetsPartitionOf(final ToIntFunction<String> placement)
    {
        this.offsetsPartitionOf = placement;
    }

    public CoordinatorAgent agent()
    {
        return runtime.agent();
    }

    public TxnConfig config()
    {
        return config;
    }

    /**
     * From FindCoordinator, on a network thread: has the admin agent create {@code __transaction_state}
     * when it does not exist yet, and returns that creation (null when it exists).
     */
    public CompletableFuture<?> topicWanted()
    {
        return ownership.followingLeaders() || topics.topic(TOPIC) != null ? null : store.create();
    }

    // ------------------------------------------------------------------------------------------
    // load
    // ------------------------------------------------------------------------------------------

    /**
     * Replays {@code __transaction_state} (every partition; all served and empty when the topic does not
     * exist yet, as its creation will make them), before the agent runs; the transactions left prepared
     * are completed by the agent's first tick.
     */
    public void load()
    {
        clock.update();
        if (ownership.followingLeaders())
        {
            return; // a cluster's node loads a partition's transactions as it becomes its leader (TxnOwnership)
        }
        final Topic topic = topics.topic(TOPIC);
        int records = 0;
        for (int p = 0; p < config.stateLogPartitions(); p++)
        {
            records += loadPartition(topic == null ? null : topic.partition(p), p);
        }
        if (records > 0)
        {
            LOG.info("loaded {} transactional ids from {} records of {}; {} to complete", cache.all().size(), records, TOPIC,
                fromLoad.size());
        }
    }

    /**
     * Replays partition {@code p} of {@code __transaction_state} ({@code partition}, null when the topic does not exist yet)
     * into the cache; the transactions it left prepared are completed by the agent's next tick. Returns the records read.
     */
    int loadPartition(final Partition partition, final int p)
    {
        cache.loading(p);
        final TxnReplay replay = TxnReplay.of(partition);
        final TxnReplay.Loaded loaded = replay.finish(clock.wallMs());
        cache.loaded(p, loaded.transactions());
        fromLoad.addAll(loaded.toComplete());
        return replay.records();
    }

    /** Partition {@code p} is no longer led here: its transactions, their markers and Complete* rewrites are forgotten. */
    void unloadPartition(final int p)
    {
        cache.unloaded(p);
        final java.util.function.Predicate<String> ofIt = id -> config.partitionFor(id) == p;
        markers.forget(ofIt);
        rewrites.forget(ofIt);
        fromLoad.removeIf(job -> ofIt.test(job.transactionalId()));
        toStart.removeIf(job -> ofIt.test(job.transactionalId()));
    }

    /** Which transactional ids this node coordinates ({@link TxnOwnership}: all of them alone). */
    public TxnOwnership ownership()
    {
        return ownership;
    }

    /**
     * In a cluster, before {@link #load}: transactional ids are coordinated by the leaders of {@code __transaction_state}'s
     * partitions, which {@code locator} finds for FindCoordinator; the topic is the controller's to create, never created
     * here, and nothing is loaded at start (a partition's transactions are, when this node becomes its leader). Markers
     * go to each partition's leader ({@code routing}): over {@code remote} when it is another node.
     */
    public void followLeaders(final PartitionOwnership.Locator locator, final MarkerRouting routing, final RemoteMarkers remote)
    {
        ownership.followsLeaders(locator);
        store.createdElsewhere();
        markers.through(routing, remote, id -> ownership.coordinatorEpoch(id, COORDINATOR_EPOCH));
        if (remote != null) // none: every partition's marker is local (tests)
        {
            runtime.onBeforeCalls(remote::drain);
        }
    }

    // ------------------------------------------------------------------------------------------
    // requests (each a CoordinatorCall's work)
    // ------------------------------------------------------------------------------------------

    /** A request's answer: at once, or once its record's write is answered (at most {@link AwaitingWrites#TIMEOUT_MS}, then COORDINATOR_NOT_AVAILABLE). */
    public static final class Pending implements CoordinatorCall.Outcome
    {
        private final long deadlineMs;
        private Answer answer;
        /**
         * EndTxn's stamps ({@link EndTxnTiming}; 0 and never written when off, though every Pending carries
         * the 40 bytes): decoded, run on the agent, taken in and appended by its log thread, applied.
         */
        long decodedNs;
        long pickedNs;
        long takenNs;
        long appendedNs;
        long appliedNs;

        Pending(final Answer answer, final long deadlineMs)
        {
            this.answer = answer;
            this.deadlineMs = deadlineMs;
        }

        void answer(final Answer a)
        {
            if (answer == null)
            {
                answer = a;
            }
        }

        @Override
        public boolean complete(final long nowMs)
        {
            if (answer == null && nowMs >= deadlineMs)
            {
                answer = Answer.error(Errors.COORDINATOR_NOT_AVAILABLE); // the write goes on and is applied when answered
            }
            return answer != null;
        }

        /** The answer, once {@link #complete}. */
        public Answer answer()
        {
            return answer;
        }
    }

    public Pending initProducerId(final String transactionalId, final int timeoutMs, final long expectedProducerId,
        final short expectedEpoch)
    {
        return decide(InitProducerIdRules.initProducerId(cache, ids, transactionalId, timeoutMs, expectedProducerId, expectedEpoch,
            clock.wallMs()));
    }

    public Pending addPartitions(final String transactionalId, final long producerId, final short epoch,
        final Set<TxnPartition> partitions, final short clientTransactionVersion)
    {
        return decide(AddPartitionsRules.add(cache, transactionalId, producerId, epoch, partitions, clientTransactionVersion,
            clock.wallMs()));
    }

    public Pending addOffsets(final String transactionalId, final long producerId, final short epoch, final String groupId)
    {
        return decide(AddPartitionsRules.addOffsets(cache, transactionalId, producerId, epoch, offsetsPartitionOf.applyAsInt(groupId),
            clock.wallMs()));
    }

    /** EndTxn; {@code decodedNs} is when its network thread decoded it ({@link EndTxnTiming}; 0 when off). */
    public Pending endTxn(final String transactionalId, final long producerId, final short epoch, final boolean commit,
        final short version, final long decodedNs)
    {
        final long pickedNs = EndTxnTiming.ENABLED ? System.nanoTime() : 0;
        final Pending pending = decide(EndTxnRules.endTxn(cache, ids, transactionalId, producerId, epoch, commit, version, clock.wallMs()));
        if (EndTxnTiming.ENABLED)
        {
            pending.decodedNs = decodedNs;
            pending.pickedNs = pickedNs;
        }
        return pending;
    }

    public Map<TxnPartition, Short> verify(final String transactionalId, final long producerId, final short epoch,
        final Set<TxnPartition> partitions)
    {
        return AddPartitionsRules.verify(cache, transactionalId, producerId, epoch, partitions);
    }

    public TxnQueries.Described describe(final String transactionalId)
    {
        return TxnQueries.describe(cache, transactionalId);
    }

    public TxnQueries.Listing list(final Set<Long> producerIds, final List<String> stateNames, final long durationMs,
        final String pattern)
    {
        return TxnQueries.list(cache, producerIds, stateNames, durationMs, pattern, clock.wallMs());
    }

    private Pending decide(final TxnDecision decision)
    {
        if (decision instanceof Answer a)
        {
            return new Pending(a, Long.MAX_VALUE);
        }
        final Pending pending = new Pending(null, clock.nowMs() + AwaitingWrites.TIMEOUT_MS);
        write((TxnWrite)decision, pending);
        return pending;
    }

    // ------------------------------------------------------------------------------------------
    // writes and markers
    // ------------------------------------------------------------------------------------------

    /** Writes a transition's record; applies its outcome when the log thread answers (on the agent). */
    private void write(final TxnWrite w, final Pending answerTo)
    {
        final int tenure = cache.tenure(w.transactionalId());
        store.write(w.transactionalId(), w.key(), w.value(config.valueVersion()), error ->
        {
            final TxnOutcome stale = TxnWrites.stale(cache, w, tenure);
            final TxnOutcome outcome = stale != null ? stale : error == Errors.NONE ? TxnWrites.written(cache, w, clock.wallMs()) :
                TxnWrites.failed(cache, w, error);
            if (EndTxnTiming.ENABLED && error == Errors.NONE && stale == null)
            {
                timed(w, answerTo);
            }
            if (w.then() == TxnWrite.Then.COMPLETED && stale == null)
            {
                rewrites.answered(w, error, outcome.retry() != null, clock.nowMs());
            }
            if (outcome.answer() != null && answerTo != null)
            {
                answerTo.answer(outcome.answer());
            }
            if (outcome.markers() != null)
            {
                toStart.add(outcome.markers()); // at the pass's end, after the answer's wake
            }
        });
    }

    /**
     * At the end of the agent's pass: the markers of the transactions prepared in it. Started after the pass's
     * answers are published, so the EndTxn's network thread is woken first (on 2 shared cores a log thread woken
     * before it for the marker could hold the core it needs), as Kafka 4.4 answers and then queues the markers
     * (its sendTxnMarkersCallback). That it lowers the commit's p99 is not shown: the measurement under load
     * could not separate it from the load (jmh-results/profiles.md, "the commit's p99 again").
     */
    private int startMarkers()
    {
        int n = 0;
        for (MarkerJob job; (job = toStart.poll()) != null; n++)
        {
            markers.start(job);
        }
        return n;
    }

    /** EndTxn's timing ({@link EndTxnTiming}) as {@code w}'s write is applied: its PrepareCommit/PrepareAbort, its Complete*. */
    private void timed(final TxnWrite w, final Pending answerTo)
    {
        final long now = System.nanoTime();
        if (w.then() == TxnWrite.Then.ANSWER_END_TXN && answerTo != null)
        {
            answerTo.takenNs = runtime.log().takenNs();
            answerTo.appendedNs = runtime.log().answeredNs();
            answerTo.appliedNs = now;
            final TxnMetadata m = cache.get(w.transactionalId());
            if (m != null)
            {
                m.timingNs(now);
            }
        }
        else if (w.then() == TxnWrite.Then.COMPLETED)
        {
            timed(w.transactionalId(), EndTxnTiming.Stage.COMPLETE, now);
        }
    }

    /**
     * Records {@code stage} from the transaction's last stamp to {@code now}, which becomes its stamp (0 after
     * Complete*); nothing for a transaction without a stamp (one not ended by a timed EndTxn: a timeout's abort,
     * an InitProducerId's fence, a prepared one completed as the coordinator loads).
     */
    private void timed(final String transactionalId, final EndTxnTiming.Stage stage, final long now)
    {
        final TxnMetadata m = cache.get(transactionalId);
        if (m != null && m.timingNs() != 0)
        {
            EndTxnTiming.record(stage, m.timingNs(), now);
            m.timingNs(stage == EndTxnTiming.Stage.COMPLETE ? 0 : now);
        }
    }

    // ------------------------------------------------------------------------------------------
    // timed work
    // ------------------------------------------------------------------------------------------

    /** Every tick on the agent: the load's jobs, markers and Complete* records to send again, the timeout and expiry sweeps when due. */
    void tick(final long nowMs)
    {
        if (!fromLoad.isEmpty())
        {
            final List<MarkerJob> jobs = new ArrayList<>(fromLoad);
            fromLoad.clear();
            jobs.forEach(markers::start);
        }
        rewrites.due(nowMs, w -> write(w, null));
        markers.tick(nowMs);
        if (nextTimeoutCheckMs == 0)
        {
            nextTimeoutCheckMs = nowMs + config.timeoutCheckMs();
            nextExpiryCheckMs = nowMs + EXPIRY_CHECK_MS;
        }
        if (nowMs >= nextTimeoutCheckMs)
        {
            nextTimeoutCheckMs = nowMs + config.timeoutCheckMs();
            final long wall = clock.wallMs();
            for (final String id : TxnSweeps.timedOut(cache, wall))
            {
                final TxnWrite abort = TxnSweeps.abortTimedOut(cache, ids, id, wall);
                if (abort != null)
                {
                    LOG.info("aborting the transaction of {}: it ran past its timeout", id);
                    write(abort, null);
                }
            }
        }
        if (nowMs >= nextExpiryCheckMs)
        {
            nextExpiryCheckMs = nowMs + EXPIRY_CHECK_MS;
            for (final TxnWrite dead : TxnSweeps.expire(cache, clock.wallMs()))
            {
                write(dead, null);
            }
        }
    }
}
