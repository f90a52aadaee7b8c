package io.ferrite.broker.group;

import io.ferrite.broker.coordinator.AwaitingWrites;
import io.ferrite.broker.coordinator.CoordinatorAgent;
import io.ferrite.broker.coordinator.CoordinatorCall;
import io.ferrite.broker.coordinator.CoordinatorClock;
import io.ferrite.broker.coordinator.CoordinatorLog;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.coordinator.PartitionCount;

import io.ferrite.broker.Errors;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.api.Apis;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.net.NetworkThread;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.CachedNanoClock;
import org.agrona.concurrent.IdleStrategy;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The group coordinator's agent stepped one duty cycle at a time with an AgentInvoker (this test's
 * thread is the agent's): a group request is run, answered and its network thread woken only by a
 * pass of the agent, a waiting JoinGroup only by the pass that completes its rebalance, a session
 * expires on the agent's tick, a call that throws an Error costs only that call, a
 * VirtualMachineError stops the agent, and however the agent ends no call is left unanswered.
 */
class GroupAgentTest
{
    private static final String GROUP = "packers";

    @TempDir
    Path dir;

    private LogManager logs;
    private TopicRegistry topics;
    private LogThread logThread;
    private GroupCoordinator.Settings settings;
    private GroupCoordinator coordinator;
    /** The coordinator's clocks, moved by hand: no test here waits on real time. */
    private final CachedEpochClock wall = new CachedEpochClock();
    private final CachedNanoClock monotonic = new CachedNanoClock();
    private CoordinatorClock clock;
    private CoordinatorAgent agent;
    private AgentInvoker invoker;
    private final List<Throwable> escaped = new ArrayList<>();
    private long expectedErrors;

    @BeforeEach
    void open() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        topics = new TopicRegistry(logs, 1);
        topics.load(); // this thread is the topics' writer (no admin agent runs here)
        // the expiry case writes the emptied group: to a log thread that never runs (nobody waits for that write)
        topics.create(GroupCoordinator.OFFSETS_TOPIC, 1, java.util.Map.of());
        // one network thread's sender slot (0) and the coordinator's after it (1), as the broker sets them up
        logThread = new LogThread(0, 2, 64, new LogThread.Completion()
        {
            @Override
            public void completed(final int networkThread)
            {
            }

            @Override
            public void highWatermarkAdvanced(final Partition partition)
            {
            }
        });
        settings = new GroupCoordinator.Settings(10, 300_000, 0, 100, 7L * 24 * 3600 * 1000, 600_000, 1, 1 << 20, 4096);
        wall.update(1_700_000_000_000L);
        clock = new CoordinatorClock(wall, monotonic);
        coordinator = new GroupCoordinator(topics, new AdminAgent(topics), settings, new LogThread[] {logThread}, 1, clock);
        coordinator.load();
        agent = coordinator.agent();
        invoker = new AgentInvoker(escaped::add, null, agent);
        invoker.start();
    }

    @AfterEach
    void close() throws Exception
    {
        invoker.close();
        logs.close();
        assertEquals(List.of(), escaped, "errors that escaped the agent's duty cycle");
        assertEquals(expectedErrors, agent.errors(), "errors the agent met");
    }

    @Test
    void aJoinGroupIsAnsweredAndItsNetworkThreadWokenOnlyByThePassThatCompletesItsRebalance()
    {
        final AtomicInteger wokenA = new AtomicInteger();
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> a = join("", 10_000, wokenA);
        assertTrue(agent.offer(a));
        assertFalse(a.answered(), "answered before the agent ran");
        invoker.invoke();
        assertTrue(a.answered(), "the first member's join completes the group's first rebalance in the same pass");
        assertEquals(1, wokenA.get(), "its network thread woken once");
        assertEquals(Errors.NONE, a.result().error);
        assertEquals(1, a.result().generationId);
        final String memberA = a.result().memberId;

        // a second member: the group rebalances and waits for the first to rejoin
        final AtomicInteger wokenB = new AtomicInteger();
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> b = join("", 10_000, wokenB);
        assertTrue(agent.offer(b));
        invoker.invoke();
        assertFalse(b.answered(), "the second join waits for the rebalance");
        assertEquals(0, wokenB.get(), "nobody woke its network thread");
        assertEquals(1, agent.waiting(), "the join waits on the agent");
        invoker.invoke();
        assertFalse(b.answered(), "a pass that changed nothing answers nothing");

        final AtomicInteger wokenRejoin = new AtomicInteger();
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> rejoin = join(memberA, 10_000, wokenRejoin);
        assertTrue(agent.offer(rejoin));
        assertFalse(b.answered(), "the rejoin is queued, not run");
        invoker.invoke();
        assertTrue(rejoin.answered());
        assertTrue(b.answered(), "the pass that completed the rebalance answered the waiting join");
        assertEquals(1, wokenB.get(), "and woke its network thread once");
        assertEquals(0, agent.waiting());
        assertEquals(Errors.NONE, b.result().error);
        assertEquals(2, b.result().generationId);
        assertEquals(2, rejoin.result().generationId);
    }

    @Test
    void aSessionExpiresOnTheAgentsFirstTickAfterItsDeadlineAndNotBefore()
    {
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> a = join("", 10, new AtomicInteger());
        assertTrue(agent.offer(a));
        invoker.invoke(); // this first pass ticks too: the next tick is 50 ms on
        assertEquals(Errors.NONE, a.result().error);
        assertEquals(1, coordinator.describe(GROUP).members().size());
        // no heartbeat, no sync: only the agent's timed work (every 50 ms) can remove the member
        advanceMs(11);
        invoker.invoke();
        advanceMs(CoordinatorAgent.TICK_MS - 12);
        invoker.invoke();
        assertEquals(1, coordinator.describe(GROUP).members().size(), "past its 10 ms session, but no tick yet");
        advanceMs(1);
        invoker.invoke();
        assertEquals(0, coordinator.describe(GROUP).members().size(), "the tick 50 ms on expired it");
        assertEquals("Empty", coordinator.describe(GROUP).state());
    }

    /**
     * Session deadlines are due by the monotonic clock: a step of the wall clock (an NTP correction,
     * a suspended VM) neither expires every session at once nor holds an expiry back.
     */
    @Test
    void aWallClockStepNeitherExpiresASessionNorHoldsItsExpiryBack()
    {
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> a = join("", 10_000, new AtomicInteger());
        assertTrue(agent.offer(a));
        invoker.invoke();
        assertEquals(Errors.NONE, a.result().error);

        wall.advance(3_600_000); // an hour forward
        advanceMs(CoordinatorAgent.TICK_MS);
        invoker.invoke();
        assertEquals(1, coordinator.describe(GROUP).members().size(), "the step forward expired the session");

        wall.advance(-7_200_000); // an hour back from where it was
        advanceMs(10_000); // 10 s and one tick since the join
        invoker.invoke();
        assertEquals(0, coordinator.describe(GROUP).members().size(), "the step back held the expiry back");
    }

    private void advanceMs(final long ms)
    {
        monotonic.advance(ms * 1_000_000L);
    }

    @Test
    void aCallThatThrowsAnErrorCostsOnlyThatCall()
    {
        onlyThatCallFails(new AssertionError("a defect in a group request")); // an Error, not a VirtualMachineError
    }

    /**
     * An Error whose report throws (as an OutOfMemoryError met again while logging the first would):
     * its call is still ended and the agent carries on. Before, the report's throw left the duty
     * cycle: the call was never ended and Agrona's AgentRunner stopped the agent's thread.
     */
    @Test
    void anErrorWhoseReportThrowsStillEndsItsCallAndTheAgentCarriesOn()
    {
        onlyThatCallFails(new Error("a defect")
        {
            @Override
            public StackTraceElement[] getStackTrace()
            {
                throw new OutOfMemoryError("simulated: met again while reporting the first");
            }
        });
    }

    /** A call whose work throws {@code fault}, then a JoinGroup: the first is failed (its connection closes), the agent carries on. */
    private void onlyThatCallFails(final Error fault)
    {
        final AtomicInteger woken = new AtomicInteger();
        final CoordinatorCall<GroupCoordinator, Object> failing = throwing(fault, woken);
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> after = join("", 10_000, new AtomicInteger());
        assertTrue(agent.offer(failing));
        assertTrue(agent.offer(after));
        invoker.invoke();
        assertTrue(failing.answered(), "the failed call is ended (its connection closes)");
        assertFalse(failing.abandoned());
        assertNull(failing.result());
        assertEquals(1, woken.get());
        assertEquals(1, agent.errors(), "counted by the agent's error handler (logged if it could be)");
        expectedErrors = 1;
        assertTrue(after.answered(), "the agent carries on");
        assertEquals(Errors.NONE, after.result().error);
        assertSame(invoker.agent(), agent);
        assertFalse(invoker.isClosed(), "the agent still runs");
    }

    private static CoordinatorCall<GroupCoordinator, Object> throwing(final Error fault, final AtomicInteger woken)
    {
        return new CoordinatorCall<>((GroupCoordinator)null, (c, now) ->
        {
            throw fault;
        }, (out, at, result) -> at, (out, at, error) -> at, woken::incrementAndGet);
    }

    /**
     * A call that runs out of memory (a {@link VirtualMachineError}: the JVM is failing, the groups
     * may be half changed): its connection closes, the agent runs nothing more, refuses new calls and
     * stops, answering the call queued behind it and the join waiting for a rebalance
     * COORDINATOR_NOT_AVAILABLE. Before, it carried on as after any other Error.
     */
    @Test
    void aVirtualMachineErrorStopsTheAgentAndItsCallsAreAbandoned()
    {
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> a = join("", 10_000, new AtomicInteger());
        assertTrue(agent.offer(a));
        invoker.invoke();
        assertTrue(a.answered());
        final AtomicInteger wokenWaiting = new AtomicInteger();
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> waiting = join("", 10_000, wokenWaiting);
        assertTrue(agent.offer(waiting));
        invoker.invoke();
        assertEquals(1, agent.waiting(), "the second member's join waits for the first to rejoin");

        final CoordinatorCall<GroupCoordinator, Object> failing = throwing(new OutOfMemoryError("simulated: a group request ran out of memory"),
            new AtomicInteger());
        final AtomicInteger wokenBehind = new AtomicInteger();
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> behind = join("", 10_000, wokenBehind);
        assertTrue(agent.offer(failing));
        assertTrue(agent.offer(behind));
        invoker.invoke();
        assertTrue(failing.answered(), "the call that failed is ended (its connection closes)");
        assertFalse(failing.abandoned());
        assertTrue(behind.abandoned(), "the call queued behind it is not run: COORDINATOR_NOT_AVAILABLE");
        assertEquals(1, wokenBehind.get());
        assertTrue(waiting.abandoned(), "the waiting join: COORDINATOR_NOT_AVAILABLE");
        assertEquals(1, wokenWaiting.get());
        assertEquals(0, agent.waiting());
        assertTrue(invoker.isClosed(), "the agent stopped");
        assertFalse(agent.offer(join("", 10_000, new AtomicInteger())), "new calls are refused");
        assertEquals(1, agent.errors());
        expectedErrors = 1;
    }

    /**
     * The agent's thread dies anyway (here its idle strategy throws an Error, which Agrona's
     * AgentRunner rethrows without calling onClose): the calls still queued and those waiting are
     * answered COORDINATOR_NOT_AVAILABLE and new ones are refused. Before, they were taken and
     * never answered: a group answer has no deadline on its network thread.
     */
    @Test
    void whenTheAgentsThreadDiesItsQueuedAndWaitingCallsAreAbandonedAndNewOnesRefused() throws Exception
    {
        final AtomicBoolean die = new AtomicBoolean();
        agent.start(parking(die));
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> a = join("", 10_000, new AtomicInteger());
        assertTrue(agent.offer(a));
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> b = join("", 10_000, new AtomicInteger());
        assertTrue(agent.offer(b));
        agent.call(coordinator, (c, now) -> null).get(20, TimeUnit.SECONDS); // queued behind both: both were run
        assertTrue(a.answered());
        assertFalse(b.answered(), "the second member's join waits for the first to rejoin");

        // hold the agent in a task; queue more calls than one pass runs; the pass that ends is its last
        final CountDownLatch held = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        agent.execute(() ->
        {
            held.countDown();
            awaitLatch(release);
        });
        assertTrue(held.await(20, TimeUnit.SECONDS));
        final long runBefore = agent.callsRun(); // the task is counted once it returns
        final List<CoordinatorCall<?, ?>> queued = new ArrayList<>();
        for (int i = 0; i < CoordinatorAgent.CALL_LIMIT + 3; i++)
        {
            final CoordinatorCall<GroupCoordinator, GroupCoordinator.Description> describe = new CoordinatorCall<>(coordinator, (c, now) -> c.describe(GROUP),
                (o, at, r) -> at, (o, at, e) -> at, () -> { });
            assertTrue(agent.offer(describe));
            queued.add(describe);
        }
        die.set(true);
        release.countDown();

        await(() -> b.answered() && queued.stream().allMatch(CoordinatorCall::answered), Duration.ofSeconds(20),
            "the waiting join and every queued call answered once the agent's thread died");
        assertTrue(b.abandoned(), "the waiting join: COORDINATOR_NOT_AVAILABLE");
        final long runAfter = agent.callsRun();
        final long ranQueued = runAfter - runBefore - 1; // less the task
        final long abandoned = queued.stream().filter(CoordinatorCall::abandoned).count();
        assertEquals(queued.size() - ranQueued, abandoned, "each queued call was run or abandoned");
        assertTrue(abandoned >= 4, "the pass that ran the task ran at most CALL_LIMIT calls: " + abandoned);

        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> late = join("", 10_000, new AtomicInteger());
        assertFalse(agent.offer(late), "a call for a dead agent is refused (its network thread answers COORDINATOR_NOT_AVAILABLE)");
        // the Error, reported by Agrona's AgentRunner (its duty cycle's catch) before it rethrew it
        expectedErrors = 1;
    }

    /**
     * The last resort for the call the agent had in hand: its work throws, and waking its network
     * thread to close the connection throws an Error too (as Selector.wakeup could, out of memory).
     * The outcome was published before that wake, but the Error leaves the pass and Agrona's runner
     * ends the thread with it; the call is neither queued nor waiting, so nothing else would ever wake
     * its network thread (a group answer has no deadline there). The dying thread wakes it again.
     */
    @Test
    void whenTheAgentsThreadDiesOfTheWakeOfTheCallInHandThatCallsNetworkThreadIsWokenAgain() throws Exception
    {
        agent.start(parking(new AtomicBoolean()));
        final CountDownLatch held = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        assertTrue(agent.execute(() ->
        {
            held.countDown();
            awaitLatch(release);
        }));
        assertTrue(held.await(20, TimeUnit.SECONDS));
        final AtomicInteger wakes = new AtomicInteger();
        final CoordinatorCall<GroupCoordinator, Object> failing = new CoordinatorCall<>(coordinator, (c, now) ->
        {
            throw new AssertionError("a defect in a group request");
        }, (out, at, result) -> at, (out, at, error) -> at, () ->
        {
            if (wakes.incrementAndGet() == 1)
            {
                throw new InternalError("simulated: waking the network thread failed");
            }
        });
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.Description> behind = new CoordinatorCall<>(coordinator, (c, now) -> c.describe(GROUP),
            (o, at, r) -> at, (o, at, e) -> at, () -> { });
        assertTrue(agent.offer(failing));
        assertTrue(agent.offer(behind));
        release.countDown();

        await(behind::answered, Duration.ofSeconds(20), "the call queued behind it answered once the agent's thread died");
        assertTrue(behind.abandoned(), "not run: COORDINATOR_NOT_AVAILABLE");
        assertTrue(failing.answered());
        assertFalse(failing.abandoned(), "its outcome stays the one published: its connection closes");
        assertEquals(2, wakes.get(), "its network thread woken again by the dying agent (the first wake threw)");
        assertFalse(agent.offer(join("", 10_000, new AtomicInteger())), "the agent stopped");
        // the AssertionError (reported by the agent) and the InternalError (by Agrona's runner, before it rethrew it)
        expectedErrors = 2;
    }

    /**
     * The same on an agent that carries on: waking the network thread of a failed call throws a
     * RuntimeException, which leaves the pass (Agrona reports it and runs the next one); the next
     * pass wakes that network thread again.
     */
    @Test
    void aWakeThatThrowsIsDoneAgainByTheNextPass()
    {
        final AtomicInteger wakes = new AtomicInteger();
        final CoordinatorCall<GroupCoordinator, Object> failing = new CoordinatorCall<>(coordinator, (c, now) ->
        {
            throw new AssertionError("a defect in a group request");
        }, (out, at, result) -> at, (out, at, error) -> at, () ->
        {
            if (wakes.incrementAndGet() == 1)
            {
                throw new IllegalStateException("simulated: waking the network thread failed");
            }
        });
        assertTrue(agent.offer(failing));
        invoker.invoke();
        assertEquals(1, escaped.size(), "the wake's throw left the pass");
        escaped.clear();
        assertTrue(failing.answered());
        assertEquals(1, wakes.get());
        invoker.invoke();
        assertEquals(2, wakes.get(), "the next pass woke its network thread again");
        invoker.invoke();
        assertEquals(2, wakes.get(), "once");
        assertFalse(failing.abandoned(), "its outcome stays the one published: its connection closes");
        expectedErrors = 1; // the AssertionError, reported by the agent
    }

    /** The runner's idle strategy: a park after a pass with no work (an offer unparks it); throws an Error once {@code die} is set. */
    /**
     * A stray interrupt of the agent's thread while it parks: before, Agrona's runner ended its run at
     * the next idle pass, and every later group request met a stopped coordinator.
     */
    @Test
    void aStrayInterruptDoesNotStopTheAgentOnItsRunner() throws Exception
    {
        agent.start(parking(new AtomicBoolean()));
        final java.util.concurrent.CompletableFuture<Thread> started = new java.util.concurrent.CompletableFuture<>();
        assertTrue(agent.execute(() -> started.complete(Thread.currentThread())));
        final Thread thread = started.get(20, TimeUnit.SECONDS);
        final long errorsBefore = agent.errors();
        thread.interrupt();
        await(() -> agent.errors() > errorsBefore || !thread.isAlive(), Duration.ofSeconds(20),
            "the interrupt seen: reported, or the thread ended");
        assertTrue(thread.isAlive(), "an interrupt ended the agent's thread");
        final CountDownLatch ran = new CountDownLatch(1);
        assertTrue(agent.execute(ran::countDown));
        assertTrue(ran.await(20, TimeUnit.SECONDS), "a task after the interrupt ran");
        expectedErrors = errorsBefore + 1; // the interrupt, reported
    }

    private static IdleStrategy parking(final AtomicBoolean die)
    {
        return new IdleStrategy()
        {
            @Override
            public void idle(final int workCount)
            {
                if (die.get())
                {
                    throw new Error("simulated: the agent's thread dies");
                }
                if (workCount == 0)
                {
                    LockSupport.parkNanos(1_000_000); // unparked by offer
                }
            }

            @Override
            public void idle()
            {
                idle(0);
            }

            @Override
            public void reset()
            {
            }
        };
    }

    private static void awaitLatch(final CountDownLatch latch)
    {
        try
        {
            assertTrue(latch.await(20, TimeUnit.SECONDS));
        }
        catch (final InterruptedException ex)
        {
            throw new AssertionError(ex);
        }
    }

    /**
     * A write the log thread stored, whose applying to memory throws: it is not reported done, so an
     * answer waiting for it (a commit's) times out as COORDINATOR_NOT_AVAILABLE instead of telling the
     * client its offsets are stored while memory does not hold them. Before, the write was marked done
     * (and OK) before it was applied. (A store of its own on the coordinator's sender slot: the
     * coordinator writes nothing here.)
     */
    @Test
    void aWriteWhoseApplyingThrowsIsNotReportedDone()
    {
        final CoordinatorLog log = new CoordinatorLog(topics, new AdminAgent(topics), new LogThread[] {logThread}, 1, clock);
        final CoordinatorTopic store = log.topic(GroupCoordinator.OFFSETS_TOPIC, "group",
            PartitionCount.fixedAt(GroupCoordinator.OFFSETS_TOPIC, settings.offsetsTopicPartitions()), java.util.Map.of(),
            CoordinatorLog::ofFailedWrite);
        final AtomicInteger applied = new AtomicInteger();
        final CoordinatorLog.Write write = store.write(GROUP, GroupRecords.groupKey(GROUP), null, error ->
        {
            applied.incrementAndGet();
            assertEquals(Errors.NONE, error);
            throw new IllegalStateException("simulated: applying the write to memory failed");
        });
        final AgentInvoker logThreadInvoker = new AgentInvoker(logThread.faults(), null, logThread);
        logThreadInvoker.start();
        try
        {
            await(() ->
            {
                logThreadInvoker.invoke();
                return logThread.hasReturned(1);
            }, Duration.ofSeconds(20), "the log thread answered the write");
        }
        finally
        {
            logThreadInvoker.close();
        }
        assertThrows(IllegalStateException.class, log::drain);
        assertEquals(1, applied.get(), "the answer was applied (and threw)");
        assertFalse(write.done(), "not done: what waits for it times out");
        final AwaitingWrites<String> awaiting = new AwaitingWrites<>("commit", List.of(write), 0);
        assertFalse(awaiting.complete(AwaitingWrites.TIMEOUT_MS - 1));
        assertTrue(awaiting.complete(AwaitingWrites.TIMEOUT_MS));
        assertEquals(Errors.COORDINATOR_NOT_AVAILABLE, awaiting.firstOutcome(Errors.NONE));
    }

    /**
     * An OffsetCommit's stored timestamp (in its record and in memory: what offset retention counts
     * from) is the coordinator's wall clock in the pass that runs the commit, as Kafka's coordinator
     * stamps a commit when it handles it: a test that moves that clock sees it. The commit goes the
     * whole way — a real socket, a network thread and its group handlers, this agent, the log
     * thread — each stepped here, and the clock is moved between the steps. Before, the network thread
     * stamped the offsets with System.currentTimeMillis() while it decoded the request.
     */
    @Test
    void anOffsetCommitIsStampedWithTheCoordinatorsWallClockInThePassThatRunsIt() throws Exception
    {
        topics.create("orders", 1, Map.of());
        final Apis apis = new Apis();
        final NetworkThread network = new NetworkThread(0, apis, 1 << 20);
        GroupHandlers.register(apis, coordinator, null, null, topics, 0, null, network::wakeup); // no transaction coordinator: no FindCoordinator here
        final AgentInvoker networkInvoker = new AgentInvoker(escaped::add, null, network);
        final AgentInvoker logThreadInvoker = new AgentInvoker(logThread.faults(), null, logThread);
        networkInvoker.start();
        logThreadInvoker.start();
        try (ServerSocketChannel listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
            SocketChannel client = SocketChannel.open(listener.getLocalAddress()))
        {
            network.accept(listener.accept());
            final short version = 8;
            final OffsetCommitRequestData commit = new OffsetCommitRequestData().setGroupId(GROUP).setGenerationIdOrMemberEpoch(-1)
                .setMemberId("").setTopics(List.of(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName("orders")
                    .setPartitions(List.of(new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0)
                        .setCommittedOffset(42)))));
            final ByteBuffer frame = new OffsetCommitRequest(commit, version)
                .serializeWithHeader(new RequestHeader(ApiKeys.OFFSET_COMMIT, version, "test-client", 7));
            final ByteBuffer framed = ByteBuffer.allocate(4 + frame.remaining()).putInt(frame.remaining()).put(frame).flip();
            while (framed.hasRemaining())
            {
                client.write(framed); // blocking: a few dozen bytes
            }
            client.configureBlocking(false);
            await(() ->
            {
                networkInvoker.invoke();
                return agent.queued() == 1;
            }, Duration.ofSeconds(20), "the network thread handed the commit to the agent");

            final long runAt = 1_600_000_000_000L; // years from the real time: the stamp tells which clock made it
            wall.update(runAt);
            invoker.invoke(); // runs the commit: checked, sent to the log thread
            wall.update(runAt + 5_000); // the write's answer is applied later: not the commit's time
            final ByteBuffer response = ByteBuffer.allocate(1024);
            await(() ->
            {
                logThreadInvoker.invoke();
                invoker.invoke();
                networkInvoker.invoke();
                client.read(response);
                return response.position() >= 4 && response.position() >= 4 + response.getInt(0);
            }, Duration.ofSeconds(20), "the commit answered");
            response.flip().getInt();
            ResponseHeader.parse(response, ApiKeys.OFFSET_COMMIT.responseHeaderVersion(version));
            final OffsetCommitResponseData answer = new OffsetCommitResponseData(new ByteBufferAccessor(response), version);
            assertEquals(Errors.NONE, answer.topics().get(0).partitions().get(0).errorCode());

            final Map<String, Group> replayed = new HashMap<>();
            GroupReplay.load(topics, replayed, 0);
            final Group.Offset stored = replayed.get(GROUP).offsets.get(new Group.TopicPartition("orders", 0));
            assertEquals(42, stored.offset());
            assertEquals(runAt, stored.commitTimestamp(), "the coordinator's wall time in the pass that ran the commit");
        }
        finally
        {
            logThreadInvoker.close();
            networkInvoker.close();
        }
    }

    /**
     * A follower's SyncGroup waits for the leader's assignment; its client times out and sends
     * SyncGroup again. The first is answered REBALANCE_IN_PROGRESS when the second replaces it (Kafka
     * 4.4 replaces it without answering; its connection is gone by then): before, it stayed in the
     * agent's waiting calls, settled on every pass, for the broker's life.
     */
    @Test
    void aSyncGroupReplacedByTheMembersNextOneIsAnsweredAndLeavesTheAgent()
    {
        final String[] members = twoMembersCompletingRebalance();
        final String follower = members[1];
        final AtomicInteger wokenFirst = new AtomicInteger();
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.SyncWaiter> first = sync(follower, 2, wokenFirst);
        assertTrue(agent.offer(first));
        invoker.invoke();
        assertFalse(first.answered(), "the follower's SyncGroup waits for the leader's assignment");
        assertEquals(1, agent.waiting());

        final AtomicInteger wokenSecond = new AtomicInteger();
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.SyncWaiter> second = sync(follower, 2, wokenSecond);
        assertTrue(agent.offer(second));
        invoker.invoke();
        assertTrue(first.answered(), "the replaced SyncGroup is answered");
        assertEquals(Errors.REBALANCE_IN_PROGRESS, first.result().error);
        assertEquals(1, wokenFirst.get(), "and its network thread woken");
        assertFalse(second.answered(), "the new one waits in its place");
        assertEquals(1, agent.waiting(), "only the new one waits on the agent");

        // the follower leaves: its waiting SyncGroup is failed and nothing is left on the agent
        assertTrue(agent.offer(new CoordinatorCall<>(coordinator, (c, now) -> c.leave(GROUP, List.of(new GroupCoordinator.MemberIdentity(follower, null))),
            (o, at, r) -> at, (o, at, e) -> at, () -> { })));
        invoker.invoke();
        assertTrue(second.answered());
        assertEquals(Errors.UNKNOWN_MEMBER_ID, second.result().error);
        assertEquals(1, wokenSecond.get());
        assertEquals(0, agent.waiting());
    }

    /**
     * A waiting SyncGroup whose connection closed ({@link CoordinatorCall#cancel}, by its network thread)
     * leaves the agent's waiting calls at the next pass, unanswered and without changing the group:
     * the member still waits for its assignment (a SyncGroup has no deadline of its own, so before
     * this it waited on the agent until the group moved on, or forever once replaced).
     */
    @Test
    void aWaitingCallWhoseConnectionClosedIsDroppedByTheNextPass()
    {
        final String[] members = twoMembersCompletingRebalance();
        final AtomicInteger woken = new AtomicInteger();
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.SyncWaiter> waiting = sync(members[1], 2, woken);
        assertTrue(agent.offer(waiting));
        invoker.invoke();
        assertEquals(1, agent.waiting());

        waiting.cancel(); // the network thread, as the connection closed
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.Description> describe = new CoordinatorCall<>(coordinator, (c, now) -> c.describe(GROUP),
            (o, at, r) -> at, (o, at, e) -> at, () -> { });
        assertTrue(agent.offer(describe));
        invoker.invoke();
        assertEquals(0, agent.waiting(), "dropped by the pass after its cancel");
        assertFalse(waiting.answered(), "not answered: nobody reads it");
        assertEquals(0, woken.get(), "its network thread not woken");
        assertEquals("CompletingRebalance", describe.result().state(), "the group unchanged");
        assertEquals(2, describe.result().members().size());
    }

    /**
     * Two members joined (the second made the group rebalance, the first rejoined): generation 2, in
     * CompletingRebalance, nothing waiting. Returns the leader's and the follower's member ids.
     */
    private String[] twoMembersCompletingRebalance()
    {
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> a = join("", 10_000, new AtomicInteger());
        assertTrue(agent.offer(a));
        invoker.invoke();
        final String leader = a.result().memberId;
        final CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> b = join("", 10_000, new AtomicInteger());
        assertTrue(agent.offer(b));
        invoker.invoke();
        assertTrue(agent.offer(join(leader, 10_000, new AtomicInteger())));
        invoker.invoke();
        assertTrue(b.answered());
        assertEquals(Errors.NONE, b.result().error);
        assertEquals(2, b.result().generationId);
        assertEquals(leader, b.result().leaderId);
        assertEquals(0, agent.waiting());
        assertEquals("CompletingRebalance", coordinator.describe(GROUP).state());
        return new String[] {leader, b.result().memberId};
    }

    private CoordinatorCall<GroupCoordinator, GroupCoordinator.SyncWaiter> sync(final String memberId, final int generation, final AtomicInteger woken)
    {
        return new CoordinatorCall<>(coordinator, (c, now) -> c.sync(GROUP, generation, memberId, null, null, null, java.util.Map.of()),
            (out, at, result) -> at, (out, at, error) -> at, woken::incrementAndGet);
    }

    private CoordinatorCall<GroupCoordinator, GroupCoordinator.JoinWaiter> join(final String memberId, final int sessionMs, final AtomicInteger woken)
    {
        return new CoordinatorCall<>(coordinator, (c, now) -> c.join(GROUP, memberId, null, "client", "/127.0.0.1", sessionMs, 60_000, "consumer",
            List.of(new Member.Protocol("range", new byte[] {1})), false, false),
            (out, at, result) -> at, (out, at, error) -> at, woken::incrementAndGet);
    }
}
