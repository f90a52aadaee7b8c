package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.coordinator.CoordinatorClock;
import io.ferrite.broker.coordinator.CoordinatorRuntime;
import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.logthread.SteppedLogThreads;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.CachedNanoClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * In a cluster the transaction coordinator serves the transactional ids of the {@code __transaction_state} partitions
 * this node leads ({@link TxnOwnership}), on a real coordinators' runtime and log thread, both stepped by AgentInvokers
 * (this test's thread is the agent's): an id of a partition not led here is NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS
 * once led until the agent loaded it, then served; when the node stops leading it, NOT_COORDINATOR at once and the agent
 * forgets its transactions; led again, the partition's log is replayed (what was written there is back). A single
 * node's coordinator serves every id after its load, as before.
 */
class TxnOwnershipTest
{
    @TempDir
    Path dir;

    private LogManager logs;
    private TopicRegistry topics;
    private CoordinatorRuntime runtime;
    /** The coordinators' monotonic clock: the marker retries' backoffs are due by it. */
    private final CachedNanoClock nano = new CachedNanoClock();
    private LogThread logThread;
    private AgentInvoker logThreadInvoker;
    private TxnCoordinator coordinator;
    private AgentInvoker invoker;
    private final List<Throwable> escaped = new ArrayList<>();
    private final AtomicLong nextId = new AtomicLong(4000);
    /** A transactional id of partition 0 of the two, and one of partition 1. */
    private String id0;
    private String id1;

    @BeforeEach
    void open() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        topics = new TopicRegistry(logs, 1);
        topics.load();
        topics.create(TxnCoordinator.TOPIC, 2, Map.of()); // as the image's follows/leads make it here
        logThread = SteppedLogThreads.silent(2, 64);
        logThreadInvoker = new AgentInvoker(logThread.faults(), null, logThread);
        logThreadInvoker.start();
        final CachedEpochClock wall = new CachedEpochClock();
        wall.update(1_700_000_000_000L);
        runtime = new CoordinatorRuntime(topics, new AdminAgent(topics), new LogThread[] {logThread}, 1,
            new CoordinatorClock(wall, nano));
        final TxnConfig config = new TxnConfig(900_000, 2, 50, 604_800_000L, (short)2);
        coordinator = new TxnCoordinator(topics, config, 1 << 20, runtime, nextId::getAndIncrement);
        for (int i = 0; id0 == null || id1 == null; i++)
        {
            final String id = "t" + i;
            if (config.partitionFor(id) == 0)
            {
                id0 = id0 == null ? id : id0;
            }
            else
            {
                id1 = id1 == null ? id : id1;
            }
        }
    }

    private void start()
    {
        coordinator.load();
        invoker = new AgentInvoker(escaped::add, null, coordinator.agent());
        invoker.start();
    }

    @AfterEach
    void close() throws Exception
    {
        if (invoker != null)
        {
            invoker.close();
        }
        logThreadInvoker.close();
        logs.close();
        assertEquals(List.of(), escaped, "errors that escaped the agent's duty cycle");
    }

    @Test
    void inAClusterOnlyTheIdsOfThePartitionsLedHereAreServedLoadedFromTheLogAndForgottenWhenTheLeadershipGoes()
    {
        coordinator.followLeaders(id -> new PartitionOwnership.Located(Errors.NONE, 2, "127.0.0.1", 9092), MarkerRouting.ALONE, null);
        start();
        final TxnOwnership ownership = coordinator.ownership();
        assertNull(coordinator.topicWanted(), "the topic is the controller's to create, never this node's");

        assertEquals(Errors.NOT_COORDINATOR, init(id0).error(), "a partition never led here");
        ownership.led(0, 3);
        assertEquals(Errors.COORDINATOR_LOAD_IN_PROGRESS, init(id0).error(), "led, not loaded yet");
        invoker.invoke(); // the pass loads partition 0 before its calls
        final TxnDecision.Answer first = initWritten(id0);
        assertEquals(Errors.NONE, first.error());
        assertEquals(Errors.NOT_COORDINATOR, init(id1).error(), "partition 1 is led elsewhere");

        ownership.resigned(0);
        assertEquals(Errors.NOT_COORDINATOR, init(id0).error(), "refused at once, before the agent unloads it");
        invoker.invoke();
        assertEquals(List.of(), listed(), "unloaded: its transaction forgotten");

        ownership.led(0, 4); // a new tenure: loaded again from the log
        invoker.invoke();
        assertEquals(List.of(id0), listed(), "replayed from __transaction_state-0");
        final TxnQueries.Described back = coordinator.describe(id0);
        assertEquals(Errors.NONE, back.error());
        assertEquals(first.producerId(), back.state().producerId(), "the producer id written by the earlier tenure");
        final TxnDecision.Answer again = initWritten(id0);
        assertEquals(Errors.NONE, again.error());
        assertEquals(first.producerId(), again.producerId(), "the same producer, its epoch bumped");
        assertNotEquals(first.producerEpoch(), again.producerEpoch());
    }

    @Test
    void aWriteAnsweredAfterItsPartitionWasUnloadedIsAnsweredNotCoordinatorWithoutAnAgentError()
    {
        coordinator.followLeaders(id -> new PartitionOwnership.Located(Errors.NONE, 2, "127.0.0.1", 9092), MarkerRouting.ALONE, null);
        start();
        final TxnOwnership ownership = coordinator.ownership();
        ownership.led(0, 3);
        invoker.invoke(); // loads partition 0
        final long errorsBefore = coordinator.agent().errors();
        final TxnCoordinator.Pending pending = coordinator.initProducerId(id0, 60_000, -1, (short)-1);
        assertNull(pending.answer(), "its record is on its way to the log thread");
        ownership.resigned(0);
        invoker.invoke(); // unloads partition 0 while the write is in flight
        answerTheWrite(pending);
        assertEquals(errorsBefore, coordinator.agent().errors(), "errors the agent reported applying the late answer");
        assertEquals(Errors.NOT_COORDINATOR, pending.answer().error(), "Kafka's answer: the client finds the new coordinator");
        assertEquals(List.of(), listed(), "nothing applied");
    }

    @Test
    void aWriteAnsweredAfterItsPartitionWasLoadedAgainBelongsToTheEarlierTenure()
    {
        coordinator.followLeaders(id -> new PartitionOwnership.Located(Errors.NONE, 2, "127.0.0.1", 9092), MarkerRouting.ALONE, null);
        start();
        final TxnOwnership ownership = coordinator.ownership();
        ownership.led(0, 3);
        invoker.invoke();
        final long errorsBefore = coordinator.agent().errors();
        final TxnCoordinator.Pending pending = coordinator.initProducerId(id0, 60_000, -1, (short)-1);
        ownership.resigned(0);
        invoker.invoke(); // unloaded
        ownership.led(0, 4);
        invoker.invoke(); // loaded again (a new tenure) before the earlier tenure's write is answered
        answerTheWrite(pending);
        assertEquals(errorsBefore, coordinator.agent().errors(), "errors the agent reported applying the late answer");
        assertEquals(Errors.NOT_COORDINATOR, pending.answer().error());
        assertEquals(Errors.NONE, initWritten(id0).error(), "the new tenure serves the id");
    }

    /**
     * Review 1 of txncoord, H1(a): markers carry the coordinator epoch Kafka's do — the leader epoch the id's
     * {@code __transaction_state} partition was loaded at — so that the data partition, which keeps the highest it saw per
     * producer, refuses a deposed coordinator's late marker (TRANSACTION_COORDINATOR_FENCED). Loaded at epoch 7: the
     * commit's marker leaves 7 at the data partition; a marker at a lower epoch is then refused there; led again (a new
     * tenure) at epoch 9, the next transaction's marker carries 9.
     */
    @Test
    void markersCarryTheLeaderEpochTheirTransactionStatePartitionWasLoadedAt() throws Exception
    {
        final TxnPartition data = new TxnPartition("data", 0);
        topics.create(data.topic(), 1, Map.of());
        coordinator.followLeaders(id -> new PartitionOwnership.Located(Errors.NONE, 2, "127.0.0.1", 9092), MarkerRouting.ALONE, null);
        start();
        final TxnOwnership ownership = coordinator.ownership();
        ownership.led(0, 7);
        invoker.invoke(); // loaded at leader epoch 7
        final TxnDecision.Answer first = initWritten(id0);
        commitWritten(id0, first, data);
        assertEquals(7, coordinatorEpochAt(data, first.producerId()), "the commit's marker's coordinator epoch at the partition");

        final io.ferrite.broker.topic.Partition partition = topics.topic(data.topic()).partition(0);
        final java.util.concurrent.atomic.AtomicInteger refusal = new java.util.concurrent.atomic.AtomicInteger(-1);
        coordinatorLog().writeMarker(partition, first.producerId(), (short)(first.producerEpoch() + 1), 6, true, true,
            new io.ferrite.broker.coordinator.CoordinatorLog.MarkerWritten()
            {
                @Override
                public void written(final short error)
                {
                    refusal.set(error);
                }

                @Override
                public void refused(final short error, final long openTxnFirstOffset, final int partitionCoordinatorEpoch)
                {
                    refusal.set(error);
                }
            }); // a deposed coordinator's (loaded at 6) marker arriving late
        await(() ->
        {
            logThreadInvoker.invoke();
            invoker.invoke();
            return refusal.get() >= 0;
        }, Duration.ofSeconds(20), "the late marker's answer");
        assertEquals(Errors.TRANSACTION_COORDINATOR_FENCED, refusal.get(), "a lower coordinator epoch than the partition's");

        ownership.resigned(0);
        invoker.invoke();
        ownership.led(0, 9); // a new tenure at a later epoch: loaded again
        invoker.invoke();
        final TxnDecision.Answer second = initWritten(id0);
        assertEquals(first.producerId(), second.producerId());
        commitWritten(id0, second, data);
        assertEquals(9, coordinatorEpochAt(data, first.producerId()), "the next coordinator's markers carry its load's epoch");
    }

    /**
     * Review 1 of txnsend, H1: one image change can take this node from leader at 5 to leader at 7 (another node led at
     * 6 meanwhile, and may have written): no resignation is seen, and the partition is led again in a new tenure all the
     * same, as Kafka 4.4's onElection — COORDINATOR_LOAD_IN_PROGRESS until the agent reloaded it at 7, whose markers then
     * carry 7. The same lead repeated at 7 keeps the tenure (no reload).
     */
    @Test
    void aLeadAtAHigherEpochWithNoResignationBetweenIsANewTenureReloadedAtThatEpoch() throws Exception
    {
        final TxnPartition data = new TxnPartition("data", 0);
        topics.create(data.topic(), 1, Map.of());
        coordinator.followLeaders(id -> new PartitionOwnership.Located(Errors.NONE, 2, "127.0.0.1", 9092), MarkerRouting.ALONE, null);
        start();
        final TxnOwnership ownership = coordinator.ownership();
        ownership.led(0, 5);
        invoker.invoke(); // loaded at 5
        final TxnDecision.Answer first = initWritten(id0);
        commitWritten(id0, first, data);
        assertEquals(5, coordinatorEpochAt(data, first.producerId()));

        ownership.led(0, 7); // A@5 -> B@6 -> A@7 seen as one lead at 7
        assertEquals(Errors.COORDINATOR_LOAD_IN_PROGRESS, init(id0).error(), "a new tenure: not served before its reload");
        invoker.invoke(); // unloaded and replayed at 7
        assertEquals(List.of(id0), listed(), "replayed from __transaction_state-0");
        ownership.led(0, 7); // the same lead again: the same tenure
        assertEquals(Errors.NONE, ownership.partitionError(0), "still loaded: no reload at the same epoch");
        final TxnDecision.Answer second = initWritten(id0);
        assertEquals(first.producerId(), second.producerId(), "the producer id written in the earlier tenure");
        commitWritten(id0, second, data);
        assertEquals(7, coordinatorEpochAt(data, first.producerId()), "the markers carry the epoch of the reload");
    }

    /**
     * Review 1 of txncoord, M4: a marker's route from the image, as the agent sees it change. A partition with no leader
     * yet is tried again after its backoff and written once it has one; a partition of a topic gone is dropped from the
     * transaction; a partition whose remote leader does not answer (a refused connection: REQUEST_TIMED_OUT, or
     * NOT_LEADER_OR_FOLLOWER when its lane finds it moved) and then moves here is written here after its backoff. The transaction completes only once all three are done with.
     */
    @Test
    void aMarkerWithNoLeaderYetWaitsAGoneTopicsIsDroppedAndAMovedLeaderIsFollowed() throws Exception
    {
        final TxnPartition waiting = new TxnPartition("waits", 0);
        final TxnPartition moving = new TxnPartition("moves", 0);
        final TxnPartition gone = new TxnPartition("gone", 0);
        for (final TxnPartition tp : List.of(waiting, moving, gone))
        {
            topics.create(tp.topic(), 1, Map.of()); // AddPartitionsToTxn needs them known; "gone" is gone for the routing
        }
        final MarkerRouting.Route nobody = new MarkerRouting.Route(2, "127.0.0.1", io.ferrite.testing.LoopbackPorts.take(1)[0]);
        final Map<String, MarkerRouting.Route> routes = new java.util.concurrent.ConcurrentHashMap<>(Map.of(
            waiting.topic(), MarkerRouting.Route.NO_LEADER, moving.topic(), nobody, gone.topic(), MarkerRouting.Route.GONE));
        final RemoteMarkers remote = new RemoteMarkers(io.ferrite.broker.replica.FetcherSettings.KAFKA_DEFAULTS, 1, () -> { });
        try
        {
            coordinator.followLeaders(id -> new PartitionOwnership.Located(Errors.NONE, 2, "127.0.0.1", 9092),
                (topic, partition) -> routes.get(topic), remote);
            start();
            coordinator.ownership().led(0, 3);
            invoker.invoke();
            final TxnDecision.Answer p = initWritten(id0);
            final TxnCoordinator.Pending added = coordinator.addPartitions(id0, p.producerId(), p.producerEpoch(),
                java.util.Set.of(waiting, moving, gone), (short)2);
            stepUntil(() -> added.answer() != null, "AddPartitionsToTxn written");
            final TxnCoordinator.Pending ended = coordinator.endTxn(id0, p.producerId(), p.producerEpoch(), true, (short)5, 0);
            stepUntil(() -> ended.answer() != null && coordinator.describe(id0).state().partitions().equals(java.util.Set.of(waiting,
                moving)), "EndTxn answered, the gone topic's partition dropped");
            assertEquals(TxnState.PREPARE_COMMIT, coordinator.describe(id0).state().state(), "no leader yet, and one not answering");
            assertEquals(Integer.MIN_VALUE, coordinatorEpochAt(waiting, p.producerId()), "no marker at the partition with no leader");

            routes.put(waiting.topic(), MarkerRouting.Route.LOCAL); // a leader now: this node
            routes.put(moving.topic(), MarkerRouting.Route.LOCAL); // its leader moved here
            stepUntil(() ->
            {
                nano.advance(java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(RetryBackoff.MAX_MS)); // every backoff over
                return coordinator.describe(id0).state().state() == TxnState.COMPLETE_COMMIT;
            }, "both markers written after their backoffs, then CompleteCommit");
            assertEquals(3, coordinatorEpochAt(waiting, p.producerId()), "written once it had a leader");
            assertEquals(3, coordinatorEpochAt(moving, p.producerId()), "written at its new leader");
            assertEquals(Integer.MIN_VALUE, coordinatorEpochAt(gone, p.producerId()), "never written to the gone topic");
        }
        finally
        {
            remote.close();
        }
    }

    /** The coordinators' log (the runtime's), as the marker runs write through it. */
    private io.ferrite.broker.coordinator.CoordinatorLog coordinatorLog()
    {
        return runtime.log();
    }

    /** A transaction of {@code p} on {@code data} committed: added, EndTxn(commit), markers and CompleteCommit written. */
    private void commitWritten(final String id, final TxnDecision.Answer p, final TxnPartition data)
    {
        final TxnCoordinator.Pending added = coordinator.addPartitions(id, p.producerId(), p.producerEpoch(), java.util.Set.of(data),
            (short)2);
        stepUntil(() -> added.answer() != null, "AddPartitionsToTxn written");
        assertEquals(Errors.NONE, added.answer().error());
        final TxnCoordinator.Pending ended = coordinator.endTxn(id, p.producerId(), p.producerEpoch(), true, (short)5, 0);
        stepUntil(() -> ended.answer() != null && coordinator.describe(id).state().state() == TxnState.COMPLETE_COMMIT,
            "EndTxn answered and the transaction complete (its marker written)");
        assertEquals(Errors.NONE, ended.answer().error());
    }

    /** The coordinator epoch {@code data}'s partition keeps for {@code producerId} (read on this thread: it steps the log thread). */
    private int coordinatorEpochAt(final TxnPartition data, final long producerId)
    {
        final java.util.concurrent.atomic.AtomicInteger epoch = new java.util.concurrent.atomic.AtomicInteger(Integer.MIN_VALUE);
        topics.topic(data.topic()).partition(data.partition()).log.transactions().forEachProducer(
            (id, producerEpoch, lastSequence, lastTimestamp, coordinatorEpoch, txnStart) ->
            {
                if (id == producerId)
                {
                    epoch.set(coordinatorEpoch);
                }
            });
        return epoch.get();
    }

    private void stepUntil(final java.util.function.BooleanSupplier done, final String what)
    {
        await(() ->
        {
            logThreadInvoker.invoke();
            invoker.invoke();
            return done.getAsBoolean();
        }, Duration.ofSeconds(20), what);
    }

    /** Steps the log thread and the agent until the pending request is answered. */
    private void answerTheWrite(final TxnCoordinator.Pending pending)
    {
        await(() ->
        {
            logThreadInvoker.invoke(); // the append is answered
            invoker.invoke(); // the agent applies the answer
            return pending.answer() != null;
        }, Duration.ofSeconds(20), "the write's answer applied");
    }

    @Test
    void aSingleNodeServesEveryIdOnceLoaded()
    {
        start();
        assertEquals(Errors.NONE, initWritten(id0).error());
        assertEquals(Errors.NONE, initWritten(id1).error());
        coordinator.ownership().led(1, 1); // nothing in a single node calls it; if something did, nothing is refused
        invoker.invoke();
        assertEquals(Errors.NONE, initWritten(id0).error());
    }

    /** The transactional ids in the coordinator's memory (ListTransactions without filters). */
    private List<String> listed()
    {
        final TxnQueries.Listing listing = coordinator.list(java.util.Set.of(), List.of(), -1, null);
        assertEquals(Errors.NONE, listing.error());
        return listing.transactions().stream().map(TxnQueries.Listed::transactionalId).toList();
    }

    /** InitProducerId's answer when it is given at once (an error before any write). */
    private TxnDecision.Answer init(final String id)
    {
        final TxnCoordinator.Pending pending = coordinator.initProducerId(id, 60_000, -1, (short)-1);
        assertNotNull(pending.answer(), "answered at once");
        return pending.answer();
    }

    /** InitProducerId carried through its write: the log thread appends the record, the agent applies it. */
    private TxnDecision.Answer initWritten(final String id)
    {
        final TxnCoordinator.Pending pending = coordinator.initProducerId(id, 60_000, -1, (short)-1);
        await(() ->
        {
            logThreadInvoker.invoke();
            invoker.invoke();
            return pending.answer() != null;
        }, Duration.ofSeconds(20), "the InitProducerId record written and applied");
        return pending.answer();
    }
}
