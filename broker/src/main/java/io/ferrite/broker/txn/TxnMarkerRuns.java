package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.CoordinatorClock;
import io.ferrite.broker.coordinator.CoordinatorLog;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The transaction coordinator's marker jobs under way (on the coordinators' agent): each job's markers go
 * to its partitions' log threads ({@link CoordinatorLog#writeMarker}: Kafka's WriteTxnMarkers without the
 * network) — in a cluster, a partition led by another node gets a WriteTxnMarkers to its leader instead
 * ({@link MarkerRouting}, {@link RemoteMarkers}), its answer handled alike — and once every partition is done with,
 * its Complete* record is handed to {@code complete}.
 * Kafka's TransactionMarkerChannelManager and TransactionMarkerRequestCompletionHandler, per partition:
 * <ul>
 * <li>a partition whose topic is gone is dropped from the job — and so is one of a large topic that is listed but not made
 * yet (Kafka retries that one until its log exists; here no append of the transaction can have reached it:
 * docs/reliability.md);</li>
 * <li>a retriable error sends the marker again after a growing delay ({@link RetryBackoff}), the first
 * failure in a row logged and the tries once it is written;</li>
 * <li>a refusal for good (INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED) — see {@link #refused} (a remote
 * leader's, whose answer does not say what the partition holds: the transaction is left prepared, as Kafka);</li>
 * <li>UNSUPPORTED_VERSION / UNSUPPORTED_FOR_MESSAGE_FORMAT: the partition is dropped from the job (Kafka); any other error
 * leaves the transaction prepared (Kafka's handler throws), logged at ERROR and counted in {@link #leftPrepared}.</li>
 * </ul>
 */
final class TxnMarkerRuns
{
    private static final Logger LOG = LoggerFactory.getLogger(TxnMarkerRuns.class);

    private final TopicRegistry topics;
    /** The transactions' metadata: each partition done with leaves its transaction's partitions ({@link TxnMetadata#markerDone}). */
    private final TxnCache cache;
    private final CoordinatorLog log;
    private final CoordinatorClock clock;
    private final Consumer<TxnWrite> complete;
    /** Marker jobs whose markers are still on their way, or waiting to be sent again. */
    private final List<MarkerRun> runs = new ArrayList<>();
    /**
     * Alone, the coordinator epoch the markers carry: 0, raised to the epoch a partition fenced a marker with (only a
     * client's WriteTxnMarkers can have given it one: see {@link #refused}). Not kept across a restart; the first fenced
     * marker after it raises it again. In a cluster each run's epoch is its id's partition's leader epoch ({@link #epochs}).
     */
    private int coordinatorEpoch = TxnCoordinator.COORDINATOR_EPOCH;
    /**
     * In a cluster: a transactional id's coordinator epoch, the leader epoch its {@code __transaction_state} partition was
     * loaded at ({@link TxnOwnership#coordinatorEpoch}), taken when its run starts (Kafka's markers carry the epoch of the
     * metadata they were queued from); null alone.
     */
    private java.util.function.ToIntFunction<String> epochs;
    /** Where each partition's marker goes: this node's log alone; in a cluster its leader ({@link #through}). */
    private MarkerRouting routing = MarkerRouting.ALONE;
    /** The markers to partitions led elsewhere (null alone). */
    private RemoteMarkers remote;
    /** The remote markers of the call under way, sent together at its end ({@link #flush}: one request per leader). */
    private final List<RemoteMarkers.Send> outgoing = new ArrayList<>();
    /** Transactions left prepared because a partition refused a marker while it still had their transaction open. */
    private long leftPrepared;

    TxnMarkerRuns(final TopicRegistry topics, final TxnCache cache, final CoordinatorLog log, final CoordinatorClock clock,
        final Consumer<TxnWrite> complete)
    {
        this.topics = topics;
        this.cache = cache;
        this.log = log;
        this.clock = clock;
        this.complete = complete;
    }

    /** A marker job under way: the partitions whose marker is not written yet, and those failed retriably. */
    private static final class MarkerRun
    {
        final MarkerJob job;
        /** Not written yet: on its way, or failed and waiting for its retry ({@link #retries}). */
        final Set<TxnPartition> waiting = new HashSet<>();
        final Map<TxnPartition, RetryBackoff> retries = new HashMap<>();
        /** The coordinator epoch its markers carry (in a cluster; alone {@link #coordinatorEpoch} is read at each send). */
        final int coordinatorEpoch;
        /** In {@link #runs}: false once completed, abandoned or forgotten — an answer for it then changes nothing. */
        boolean live = true;

        MarkerRun(final MarkerJob job, final int coordinatorEpoch)
        {
            this.job = job;
            this.coordinatorEpoch = coordinatorEpoch;
        }
    }

    /** Sends a job's markers (its Complete* at once when it has no partition). */
    void start(final MarkerJob job)
    {
        final MarkerRun run = new MarkerRun(job, epochs == null ? -1 : epochs.applyAsInt(job.transactionalId()));
        runs.add(run);
        run.waiting.addAll(job.partitions());
        for (final TxnPartition tp : job.partitions())
        {
            send(run, tp);
        }
        flush();
        finishIfDone(run);
    }

    /** Every tick: the markers whose backoff is over are sent again. */
    void tick(final long nowMs)
    {
        for (final MarkerRun run : runs.isEmpty() ? List.<MarkerRun>of() : new ArrayList<>(runs))
        {
            for (final Map.Entry<TxnPartition, RetryBackoff> e : new ArrayList<>(run.retries.entrySet()))
            {
                if (e.getValue().take(nowMs))
                {
                    send(run, e.getKey());
                }
            }
            finishIfDone(run);
        }
        flush();
    }

    /**
     * The remote markers of this call go to their leaders' lanes together, so that a leader's lane finds them all when it
     * takes the first and sends them in one WriteTxnMarkers (a transaction's partitions, the retries due at a tick), as
     * Kafka's TransactionMarkerChannelManager queues a transaction's markers per broker at once.
     */
    private void flush()
    {
        if (!outgoing.isEmpty())
        {
            final List<RemoteMarkers.Send> sends = new ArrayList<>(outgoing);
            outgoing.clear();
            remote.sendAll(sends);
        }
    }

    /**
     * Drops the runs of the transactional ids {@code ofIds} accepts (their partition of {@code __transaction_state} is no
     * longer led here: its new leader's load sends their markers again, as Kafka's removeMarkersForTxnTopicPartition),
     * and their markers still queued for other nodes ({@link RemoteMarkers#purge}: sent late, after the new coordinator's,
     * such a marker could end the producer's next transaction at the partition). A marker its lane has already taken
     * still goes out, with the coordinator epoch of this node's load: a coordinator loaded since has a higher one, and
     * the partition refuses it once that one's marker is there (TRANSACTION_COORDINATOR_FENCED); an answer still on its
     * way for one of them finds its run gone and changes nothing: no completion, count, log or metadata (review 1 of
     * txnsend, LOW 3).
     */
    void forget(final java.util.function.Predicate<String> ofIds)
    {
        final Set<MarkerRun> gone = new HashSet<>();
        runs.removeIf(run -> ofIds.test(run.job.transactionalId()) && gone.add(run));
        gone.forEach(run -> run.live = false);
        if (remote != null && !gone.isEmpty())
        {
            remote.purge(s -> s.then() instanceof RemoteAnswer a && gone.contains(a.run));
        }
    }

    /** A remote marker's answer, applied to its run on the agent; names the run so that {@link #forget} can purge it. */
    private final class RemoteAnswer implements java.util.function.IntConsumer
    {
        final MarkerRun run;
        final TxnPartition tp;

        RemoteAnswer(final MarkerRun run, final TxnPartition tp)
        {
            this.run = run;
            this.tp = tp;
        }

        @Override
        public void accept(final int error)
        {
            markerWritten(run, tp, (short)error);
        }
    }

    /** How many transactions were left prepared after a partition refused a marker of a transaction it still had open. */
    long leftPrepared()
    {
        return leftPrepared;
    }

    /**
     * In a cluster: markers go to each partition's leader ({@code routing}), over {@code remote} when that is another node,
     * with the coordinator epoch {@code epochs} gives their transactional id.
     */
    void through(final MarkerRouting routing, final RemoteMarkers remote, final java.util.function.ToIntFunction<String> epochs)
    {
        this.routing = routing;
        this.remote = remote;
        this.epochs = epochs;
        if (remote != null)
        {
            remote.routeBy(routing); // looked up again when a marker's lane takes it
        }
    }

    /** The coordinator epoch of {@code run}'s markers now. */
    private int epochOf(final MarkerRun run)
    {
        return epochs == null ? coordinatorEpoch : run.coordinatorEpoch;
    }

    private void send(final MarkerRun run, final TxnPartition tp)
    {
        final MarkerRouting.Route to = routing.route(tp.topic(), tp.partition());
        if (to == MarkerRouting.Route.GONE)
        {
            done(run, tp); // its topic was deleted: Kafka drops it from the pending markers
            run.retries.remove(tp);
            return;
        }
        if (to == MarkerRouting.Route.NO_LEADER)
        {
            markerWritten(run, tp, Errors.NOT_LEADER_OR_FOLLOWER); // looked up again after its backoff
            return;
        }
        if (to != MarkerRouting.Route.LOCAL)
        {
            final MarkerJob job = run.job;
            outgoing.add(new RemoteMarkers.Send(to, tp, job.producerId(), job.producerEpoch(), epochOf(run), job.commit(),
                job.clientTransactionVersion(), new RemoteAnswer(run, tp)));
            return;
        }
        final Topic topic = topics.topic(tp.topic());
        final Partition partition = topic == null || topic.isDeleted() ? null : topic.partition(tp.partition());
        if (partition == null)
        {
            done(run, tp); // its topic was deleted (Kafka drops it), or it is not made yet (Kafka retries; no append reached it)
            run.retries.remove(tp);
            return;
        }
        final MarkerJob job = run.job;
        log.writeMarker(partition, job.producerId(), job.producerEpoch(), epochOf(run), job.commit(),
            TxnTransit.epochBump(job.clientTransactionVersion()), new CoordinatorLog.MarkerWritten()
            {
                @Override
                public void written(final short error)
                {
                    markerWritten(run, tp, error);
                }

                @Override
                public void refused(final short error, final long openTxnFirstOffset, final int partitionCoordinatorEpoch)
                {
                    TxnMarkerRuns.this.refused(run, tp, error, openTxnFirstOffset, partitionCoordinatorEpoch);
                }
            });
    }

    /** A partition's answer to a marker (Kafka's TransactionMarkerRequestCompletionHandler, per partition). */
    private void markerWritten(final MarkerRun run, final TxnPartition tp, final short error)
    {
        if (!run.live)
        {
            return; // completed, abandoned (another of its partitions refused) or forgotten: nothing left to do for it
        }
        switch (error)
        {
            case Errors.NONE:
            case Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT: // a marker on __consumer_offsets: CoordinatorLog told the group coordinator
            case Errors.UNSUPPORTED_VERSION: // a leader without WriteTxnMarkers v2: Kafka drops the partition (no append reached it)
                done(run, tp);
                final RetryBackoff retried = run.retries.remove(tp);
                if (retried != null)
                {
                    LOG.info("the marker of {} to {} written after {} failed tries", run.job.transactionalId(), tp, retried.failures());
                }
                finishIfDone(run);
                break;
            case Errors.UNKNOWN_TOPIC_OR_PARTITION:
            case Errors.NOT_LEADER_OR_FOLLOWER:
            case Errors.NOT_ENOUGH_REPLICAS:
            case Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
            case Errors.REQUEST_TIMED_OUT:
            case Errors.KAFKA_STORAGE_ERROR:
            case Errors.COORDINATOR_NOT_AVAILABLE: // a remote leader's coordinators' queue full, or stopping
                // sent again after its backoff (a deleted topic is dropped then); the first failure in a row is logged
                if (run.retries.computeIfAbsent(tp, k -> new RetryBackoff()).failed(clock.nowMs()))
                {
                    LOG.warn("the marker of {} to {} failed (error {}): sent again after a growing delay, at most {} ms; " +
                        "repeats are not logged", run.job.transactionalId(), tp, error, RetryBackoff.MAX_MS);
                }
                break;
            case Errors.INVALID_PRODUCER_EPOCH:
            case Errors.TRANSACTION_COORDINATOR_FENCED:
                // a remote leader's refusal (the local one comes to refused, with what the partition holds): Kafka's
                // completion handler cancels the transaction's markers and leaves it prepared for whoever fenced them
                abandon(run, tp, error, "from its leader");
                break;
            default:
                // Kafka's handler throws on any other error (CORRUPT_MESSAGE, MESSAGE_TOO_LARGE, ...): the transaction stays prepared
                abandon(run, tp, error, "unexpected");
        }
    }

    /**
     * A marker the partition refused for good: it knows a later producer epoch (INVALID_PRODUCER_EPOCH) or coordinator
     * epoch (TRANSACTION_COORDINATOR_FENCED) than the marker's. Kafka's completion handler cancels the transaction's
     * markers and leaves it prepared for the coordinator that fenced this one. On one node there is no other
     * coordinator, so what the partition still holds decides (it said so with the refusal, on its writer):
     * <ul>
     * <li>no transaction of the producer open there: the marker is moot (a client's WriteTxnMarkers ended it), the
     * partition is dropped from the job and the transaction completes with the others' markers;</li>
     * <li>open and fenced, alone: only a client's WriteTxnMarkers with a higher coordinator epoch can have given the
     * partition its epoch, so the markers carry that epoch from now on and this one is sent again; in a cluster a
     * coordinator loaded at a later leader epoch fenced it: left prepared, as Kafka (that coordinator completes it);</li>
     * <li>open with a later producer epoch: the transaction stays prepared as in Kafka (its id answers
     * CONCURRENT_TRANSACTIONS; a restart's load sends its markers again), logged at ERROR and counted.</li>
     * </ul>
     */
    private void refused(final MarkerRun run, final TxnPartition tp, final short error, final long openTxnFirstOffset,
        final int partitionCoordinatorEpoch)
    {
        if (!run.live)
        {
            return; // as in markerWritten: counted and logged once per transaction
        }
        final MarkerJob job = run.job;
        final String what = error == Errors.INVALID_PRODUCER_EPOCH ? "INVALID_PRODUCER_EPOCH" : "TRANSACTION_COORDINATOR_FENCED";
        run.retries.remove(tp);
        if (openTxnFirstOffset < 0)
        {
            LOG.info("the {} marker of {} (producer {}, epoch {}) to {} was refused ({}) with no transaction of the producer open " +
                "there: that partition is done with", job.commit() ? "COMMIT" : "ABORT", job.transactionalId(), job.producerId(),
                job.producerEpoch(), tp, what);
            done(run, tp);
            finishIfDone(run);
        }
        else if (error == Errors.TRANSACTION_COORDINATOR_FENCED && epochs == null)
        {
            if (partitionCoordinatorEpoch > coordinatorEpoch)
            {
                LOG.warn("{} knows coordinator epoch {} (a client's WriteTxnMarkers gave it): the markers carry it from now on",
                    tp, partitionCoordinatorEpoch);
                coordinatorEpoch = partitionCoordinatorEpoch;
            }
            send(run, tp);
            flush();
        }
        else
        {
            abandon(run, tp, error, "while the partition has a transaction of the producer open from offset " + openTxnFirstOffset);
        }
    }

    /** A marker refused for good: the run is dropped and its transaction stays prepared (Kafka: removeMarkersForTxn), counted. */
    private void abandon(final MarkerRun run, final TxnPartition tp, final short error, final String how)
    {
        final MarkerJob job = run.job;
        leftPrepared++;
        LOG.error("the {} marker of {} (producer {}, epoch {}, coordinator epoch {}) to {} was refused with error {} ({}): the " +
            "transaction stays prepared ({} so far)", job.commit() ? "COMMIT" : "ABORT", job.transactionalId(), job.producerId(),
            job.producerEpoch(), epochOf(run), tp, error, how, leftPrepared);
        runs.remove(run);
        run.live = false;
    }

    /** The partition's marker is written or no longer needed: it leaves the run and its transaction's partitions. */
    private void done(final MarkerRun run, final TxnPartition tp)
    {
        run.waiting.remove(tp);
        final TxnMetadata m = cache.get(run.job.transactionalId());
        if (m != null && m.producerId() == run.job.producerId())
        {
            m.markerDone(tp);
        }
    }

    private void finishIfDone(final MarkerRun run)
    {
        if (run.waiting.isEmpty() && runs.remove(run))
        {
            run.live = false;
            complete.accept(run.job.complete());
        }
    }
}
