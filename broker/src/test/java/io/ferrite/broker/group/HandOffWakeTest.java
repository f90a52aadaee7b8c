package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.coordinator.AwaitingWrites;
import io.ferrite.broker.coordinator.CoordinatorAgent;
import io.ferrite.broker.coordinator.CoordinatorCall;
import io.ferrite.broker.coordinator.CoordinatorClock;
import io.ferrite.broker.coordinator.CoordinatorRuntime;
import io.ferrite.broker.logthread.AppendCommand;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.logthread.LogThreadRunner;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.AppendResult;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every hand-off of a coordinator write's path wakes its receiver: the coordinators' agent and a log thread run on
 * threads of their own whose idle strategy parks for an hour after a pass with no work, so that nothing but the
 * sender's wake-up can make them look at what they were handed. Each hand-off is made only once the receiver is
 * seen parked ({@link Thread.State#TIMED_WAITING}: the idle's park is the only timed wait those threads make), and
 * its outcome awaited with a deadline far below the hour. The hops, as a transactional commit's EndTxn crosses them
 * (jmh-results/profiles.md, "the paced commit's hops"): a network thread queues a call to the agent
 * ({@link CoordinatorAgent#offer}: an unpark), the agent sends its write to the partition's log thread
 * ({@code LogThread.offer}: an unpark when the log thread says it idles), the log thread answers the agent
 * ({@link CoordinatorRuntime#writesAnswered}, as the broker's completion calls it: an unpark), and the agent wakes the
 * network thread with the final answer (the call's waker; a network thread's is {@code Selector.wakeup}).
 * A hop whose wake-up were missing would leave its receiver in its park: with the broker's idle strategies the
 * hand-off would wait out up to the receiver's longest park (the agent's 50 ms, a log thread's 1 ms, 10 ms with
 * {@code ferrite.idle.strategy=park}), here the hour, and the test fails at its deadline.
 */
class HandOffWakeTest
{
    private static final String GROUP = "wakers";
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    private static final int HAND_OFFS = 5;

    /** Parks an hour after a pass that found no work: only an unpark ends the park (or a spurious return, which is rare). */
    private static final IdleStrategy PARKS_AN_HOUR = new IdleStrategy()
    {
        @Override
        public void idle(final int workCount)
        {
            if (workCount == 0)
            {
                idle();
            }
        }

        @Override
        public void idle()
        {
            LockSupport.parkNanos(TimeUnit.HOURS.toNanos(1));
        }

        @Override
        public void reset()
        {
        }
    };

    @TempDir
    Path dir;

    private LogManager logs;
    private Partition orders;
    private LogThread logThread;
    private LogThreadRunner logRunner;
    private CoordinatorRuntime runtime;
    private GroupCoordinator coordinator;
    private CoordinatorAgent agent;
    /** Commands the log thread sent back to network thread 0 (this test's thread plays it). */
    private final AtomicInteger returnedToNetworkThread = new AtomicInteger();

    @BeforeEach
    void open() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        final TopicRegistry topics = new TopicRegistry(logs, 1);
        topics.load(); // this thread is the topics' writer (no admin agent runs here)
        topics.create(GroupCoordinator.OFFSETS_TOPIC, 1, Map.of());
        orders = topics.create("orders", 1, Map.of()).partitions[0];
        final AtomicReference<CoordinatorRuntime> coordinators = new AtomicReference<>();
        // one network thread's sender slot (0) and the coordinators' after it (1), and the completion the broker gives
        // its log threads: the coordinators' answers wake the agent (CoordinatorRuntime.writesAnswered)
        logThread = new LogThread(0, 2, 64, new LogThread.Completion()
        {
            @Override
            public void completed(final int networkThread)
            {
                if (networkThread == 0)
                {
                    returnedToNetworkThread.incrementAndGet();
                }
                else
                {
                    coordinators.get().writesAnswered();
                }
            }

            @Override
            public void highWatermarkAdvanced(final Partition partition)
            {
            }
        });
        runtime = new CoordinatorRuntime(topics, new AdminAgent(topics), new LogThread[] {logThread}, 1, CoordinatorClock.system());
        coordinators.set(runtime);
        final GroupCoordinator.Settings settings = new GroupCoordinator.Settings(10, 300_000, 0, 100, 7L * 24 * 3600 * 1000,
            600_000, 1, 1 << 20, 4096);
        coordinator = new GroupCoordinator(topics, settings, runtime);
        coordinator.load();
        agent = runtime.agent();
        logRunner = new LogThreadRunner(logThread, PARKS_AN_HOUR);
        logRunner.start();
        agent.start(PARKS_AN_HOUR);
    }

    @AfterEach
    void close() throws Exception
    {
        agent.close();
        logRunner.close();
        logs.close();
        assertEquals(0, agent.errors(), "errors the agent met");
    }

    @Test
    void aCallQueuedToTheParkedAgentWakesIt() throws Exception
    {
        final Thread agentThread = agent.call(null, (none, nowMs) -> Thread.currentThread()).get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        for (int i = 0; i < HAND_OFFS; i++)
        {
            awaitParked(agentThread, "the coordinators' agent");
            final int n = i;
            assertEquals(n, agent.call(null, (none, nowMs) -> n).get(DEADLINE.toSeconds(), TimeUnit.SECONDS),
                "the call queued to the parked agent was run");
        }
    }

    @Test
    void aCommandOfferedToTheParkedLogThreadWakesIt() throws Exception
    {
        final Thread thread = logThreadsThread();
        for (int i = 0; i < HAND_OFFS; i++)
        {
            awaitParked(thread, "the log thread");
            final AppendCommand command = append();
            assertTrue(logThread.offer(0, command));
            await(() -> returnedToNetworkThread.get() > 0 && logThread.hasReturned(0), DEADLINE,
                "the log thread appended the command offered while it parked and sent it back");
            assertSame(command, logThread.poll(0));
            returnedToNetworkThread.decrementAndGet();
            assertEquals(AppendResult.OK, command.result.status);
            assertEquals(i, command.result.firstOffset);
        }
    }

    /**
     * An OffsetCommit's whole way on the broker's side, each hop to a parked receiver: queued to the agent, its write
     * sent to the log thread, the write's answer back to the agent, the final answer's wake of the network thread.
     * The commit's answer waits for its write (AwaitingWrites, with a 5 s timeout that only a pass of the agent could
     * see): only the log thread's wake of the agent ends it.
     */
    @Test
    void anOffsetCommitCrossesTheParkedAgentAndLogThreadToItsAnswer() throws Exception
    {
        final Thread agentThread = agent.call(null, (none, nowMs) -> Thread.currentThread()).get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        final Thread logThreadThread = logThreadsThread();
        for (int i = 0; i < HAND_OFFS; i++)
        {
            awaitParked(agentThread, "the coordinators' agent");
            awaitParked(logThreadThread, "the log thread");
            final long offset = 100 + i;
            final CountDownLatch woken = new CountDownLatch(1);
            final CoordinatorCall<GroupCoordinator, AwaitingWrites<OffsetCommits.Result>> commit = new CoordinatorCall<>(coordinator,
                (c, nowMs) ->
                {
                    final OffsetCommits.Result result = c.commitOffsets(GROUP, -1, "", null, (short)8,
                        Map.of(new Group.TopicPartition("orders", 0), new OffsetCommits.Asked(offset, -1, "")));
                    assertNotNull(result.write(), "the commit writes its offset");
                    return new AwaitingWrites<>(result, List.of(result.write()), nowMs);
                },
                (out, at, result) -> at, (out, at, error) -> at, woken::countDown);
            assertTrue(agent.offer(commit));
            assertTrue(woken.await(DEADLINE.toSeconds(), TimeUnit.SECONDS), "the commit's answer woke its network thread");
            assertTrue(commit.answered());
            assertEquals(Errors.NONE, commit.result().firstOutcome(Errors.NONE), "the commit's write was answered OK, not timed out");
            final GroupCoordinator.Committed committed = agent.call(coordinator, (c, nowMs) -> c.committed(GROUP, "orders", 0))
                .get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
            assertEquals(offset, committed.offset());
        }
    }

    /**
     * The close of an agent parked in its idle wakes it: Agrona's {@code AgentRunner.close} only clears the runner's
     * flag, which the agent saw at the end of its park (up to one tick in production). Before, this close waited its
     * 10 s for the parked thread and then interrupted it (an error the agent reported).
     */
    @Test
    void closingTheParkedAgentEndsItsThreadAtOnce() throws Exception
    {
        final Thread agentThread = agent.call(null, (none, nowMs) -> Thread.currentThread()).get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        awaitParked(agentThread, "the coordinators' agent");
        agent.close();
        assertTrue(!agentThread.isAlive(), "the agent's thread ended when its close returned");
        assertEquals(0, agent.errors(), "the agent's thread was not interrupted to end it");
        assertTrue(agent.call(null, (none, nowMs) -> 1).isCompletedExceptionally(), "a call after the close is refused");
    }

    /** The log thread's own thread (it runs the task: an execute wakes it too). */
    private Thread logThreadsThread() throws Exception
    {
        final CountDownLatch ran = new CountDownLatch(1);
        final AtomicReference<Thread> thread = new AtomicReference<>();
        logThread.execute(() ->
        {
            thread.set(Thread.currentThread());
            ran.countDown();
        });
        assertTrue(ran.await(DEADLINE.toSeconds(), TimeUnit.SECONDS), "the log thread ran a task");
        return thread.get();
    }

    private static void awaitParked(final Thread thread, final String what)
    {
        await(() -> thread.getState() == Thread.State.TIMED_WAITING, DEADLINE, () -> what + " parks in its idle; it is " + thread.getState());
    }

    /** A command of one small batch for {@code orders}, from network thread 0. */
    private AppendCommand append()
    {
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);
        final RecordBatchBuilder builder = new RecordBatchBuilder().wrap(buffer, 0);
        builder.appendRecord(System.currentTimeMillis(), null, 0, -1, new UnsafeBuffer(new byte[10]), 0, 10);
        final AppendCommand command = new AppendCommand();
        command.set(0, null, 0, orders, buffer, 0, builder.build(), (short)1);
        return command;
    }
}
