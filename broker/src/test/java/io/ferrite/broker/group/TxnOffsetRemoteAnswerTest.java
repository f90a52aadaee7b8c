package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.api.TxnVerifier;
import io.ferrite.broker.coordinator.CoordinatorAgent;
import io.ferrite.broker.coordinator.CoordinatorCall;
import io.ferrite.broker.coordinator.CoordinatorClock;
import io.ferrite.broker.coordinator.CoordinatorRuntime;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.logthread.SteppedLogThreads;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.broker.txn.MarkerRouting;
import io.ferrite.broker.txn.TxnConfig;
import io.ferrite.broker.txn.TxnCoordinator;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A TxnOffsetCommit whose transactional id's coordinator is another node ({@link RemoteTxnCheck}), on a real
 * coordinators' runtime stepped by an AgentInvoker (this test's thread is the agent's; its monotonic clock stands still, so
 * the agent never ticks after its first pass). The other node's answer is given by the test through the {@code TxnVerifier}
 * the check asks (in a cluster, {@code txn.RemoteVerifier} over a lane). Review 1 of clustertxn: the answer's arrival
 * settles the waiting commit in the agent's next pass, not at its next tick (M2); a remote NETWORK_EXCEPTION is answered
 * COORDINATOR_LOAD_IN_PROGRESS, as Kafka 4.4's operation helper answers it (M3); a node that stopped leading the group's
 * {@code __consumer_offsets} partition while the commit waited answers NOT_COORDINATOR and writes nothing (M1).
 */
class TxnOffsetRemoteAnswerTest
{
    private static final String TOPIC = "orders";

    @TempDir
    Path dir;

    private LogManager logs;
    private GroupCoordinator groups;
    private TxnCoordinator transactions;
    private CoordinatorAgent agent;
    private AgentInvoker invoker;
    private final List<Throwable> escaped = new ArrayList<>();
    private final AtomicLong nextId = new AtomicLong(4000);
    /** The questions asked of the other node, in order. */
    private final List<Question> asked = new ArrayList<>();
    private RemoteTxnCheck remote;
    /** A group of partition 0 of the two. */
    private String group0;

    /** A question to the transactional id's coordinator on the other node, answered by the test. */
    private static final class Question implements TxnVerifier.Verification
    {
        private final Runnable waker;
        private volatile short error;
        private volatile boolean done;

        Question(final Runnable waker)
        {
            this.waker = waker;
        }

        /** As the lane's thread answers: the answer published, then the waker run. */
        void answer(final short e)
        {
            error = e;
            done = true;
            waker.run();
        }

        @Override
        public boolean done()
        {
            return done;
        }

        @Override
        public short error(final int i)
        {
            return error;
        }
    }

    @BeforeEach
    void open() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        final TopicRegistry topics = new TopicRegistry(logs, 1);
        topics.load();
        topics.create(GroupCoordinator.OFFSETS_TOPIC, 2, Map.of()); // as the image's follows/leads make them here
        topics.create(TxnCoordinator.TOPIC, 2, Map.of());
        final LogThread logThread = SteppedLogThreads.silent(2, 64); // never stepped: a batch sent is never answered
        final CachedEpochClock wall = new CachedEpochClock();
        wall.update(1_700_000_000_000L);
        final CoordinatorRuntime runtime = new CoordinatorRuntime(topics, new AdminAgent(topics), new LogThread[] {logThread}, 1,
            new CoordinatorClock(wall, new CachedNanoClock()));
        groups = new GroupCoordinator(topics, new GroupCoordinator.Settings(10, 300_000, 0, 100, 7L * 24 * 3600 * 1000, 600_000, 2,
            1 << 20, 4096), runtime);
        transactions = new TxnCoordinator(topics, new TxnConfig(900_000, 2, 2, 604_800_000L, (short)2), 1 << 20, runtime,
            nextId::getAndIncrement);
        // this node is 1; every transactional id's coordinator is node 2
        final PartitionOwnership.Locator atNode2 = id -> new PartitionOwnership.Located(Errors.NONE, 2, "127.0.0.1", 9092);
        groups.followLeaders(atNode2);
        transactions.followLeaders(atNode2, MarkerRouting.ALONE, null);
        remote = new RemoteTxnCheck((id, producerId, epoch, topicNames, partitions, count, add, waker) ->
        {
            final Question q = new Question(waker);
            asked.add(q);
            return q;
        }, 1);
        for (int i = 0; group0 == null; i++)
        {
            group0 = CoordinatorTopic.partitionFor("g" + i, 2) == 0 ? "g" + i : null;
        }
        groups.load();
        transactions.load();
        agent = groups.agent();
        invoker = new AgentInvoker(escaped::add, null, agent);
        invoker.start();
        groups.ownership().led(0, 5);
        invoker.invoke(); // the load of partition 0 (and the agent's one tick)
        assertEquals(Errors.NONE, groups.ownership().error(group0));
    }

    @AfterEach
    void close() throws Exception
    {
        invoker.close();
        logs.close();
        assertEquals(List.of(), escaped, "errors that escaped the agent's duty cycle");
    }

    /** A v5 commit of offset 9 of orders-0 by producer 7, of a member and generation ({@code generation} -1: none). */
    private CoordinatorCall<GroupCoordinator, TxnOffsetCommits.Commit> commit(final int generation)
    {
        final TxnOffsetCommits.Asked a = new TxnOffsetCommits.Asked("t7", group0, 7, (short)0, generation,
            generation < 0 ? "" : "m", null, (short)5, Map.of(new Group.TopicPartition(TOPIC, 0), new OffsetCommits.Asked(9, -1, "")));
        final CoordinatorCall<GroupCoordinator, TxnOffsetCommits.Commit> call = new CoordinatorCall<>(groups,
            (c, nowMs) -> TxnOffsetCommits.start(c, transactions, remote, a, nowMs), (o, at, r) -> at, (o, at, e) -> at, () ->
            {
            });
        assertTrue(agent.offer(call));
        return call;
    }

    @Test
    void theRemoteAnswerSettlesTheCommitInTheNextPassAndANetworkExceptionIsCoordinatorLoadInProgress()
    {
        final CoordinatorCall<GroupCoordinator, TxnOffsetCommits.Commit> call = commit(-1);
        invoker.invoke();
        assertEquals(1, asked.size(), "the add asked of node 2");
        assertFalse(call.answered(), "waiting for node 2's answer");

        asked.get(0).answer(Errors.NETWORK_EXCEPTION); // node 2 could not be reached
        invoker.invoke(); // one pass, no tick
        assertTrue(call.answered(), "settled by the pass after the answer, not at the agent's next tick");
        assertEquals(Errors.COORDINATOR_LOAD_IN_PROGRESS, call.result().error(), "as Kafka 4.4's CoordinatorOperationExceptionHelper");
        assertTrue(call.result().everyPartition());
    }

    @Test
    void aNodeThatStoppedCoordinatingTheGroupWhileTheCommitWaitedAnswersNotCoordinatorAndWritesNothing()
    {
        final CoordinatorCall<GroupCoordinator, TxnOffsetCommits.Commit> withGeneration = commit(1);
        final CoordinatorCall<GroupCoordinator, TxnOffsetCommits.Commit> withoutOne = commit(-1);
        invoker.invoke();
        assertEquals(2, asked.size());
        assertFalse(withGeneration.answered());
        assertFalse(withoutOne.answered());

        groups.ownership().resigned(0); // partition 0 led by another node now
        asked.get(0).answer(Errors.NONE); // node 2 added the partition to both transactions
        asked.get(1).answer(Errors.NONE);
        invoker.invoke(); // the unload, then the answers settled
        assertTrue(withGeneration.answered());
        assertEquals(Errors.NOT_COORDINATOR, withGeneration.result().error(), "Kafka's withActiveContextOrThrow, not ILLEGAL_GENERATION");
        assertTrue(withoutOne.answered(), "answered at once: no batch sent to wait for");
        assertEquals(Errors.NOT_COORDINATOR, withoutOne.result().error());
        assertNotSame(GroupCoordinator.UNSTABLE, groups.committed(group0, TOPIC, 0, true),
            "no batch on its way to a partition this node no longer leads");
    }
}
