package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import org.agrona.concurrent.AgentInvoker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The group coordinator's agent stepped one duty cycle at a time with an AgentInvoker (this test's
 * thread is the agent's): a group request is run, answered and its network thread woken only by a
 * pass of the agent, a waiting JoinGroup only by the pass that completes its rebalance, a session
 * expires on the agent's tick, and a call that throws an Error costs only that call.
 */
class GroupAgentTest
{
    private static final String GROUP = "packers";

    @TempDir
    Path dir;

    private LogManager logs;
    private GroupCoordinator coordinator;
    private GroupAgent agent;
    private AgentInvoker invoker;
    private final List<Throwable> escaped = new ArrayList<>();
    private long expectedErrors;

    @BeforeEach
    void open() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        final TopicRegistry topics = new TopicRegistry(logs, 1);
        topics.load(); // this thread is the topics' writer (no admin agent runs here)
        // the expiry case writes the emptied group: to a log thread that never runs (nobody waits for that write)
        topics.create(GroupCoordinator.OFFSETS_TOPIC, 1, java.util.Map.of());
        // one network thread's sender slot (0) and the coordinator's after it (1), as the broker sets them up
        final LogThread logThread = new LogThread(0, 2, 64, new LogThread.Completion()
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
        coordinator = new GroupCoordinator(topics, new AdminAgent(topics),
            new GroupCoordinator.Settings(10, 300_000, 0, 100, 7L * 24 * 3600 * 1000, 600_000, 1, 1 << 20, 4096),
            new LogThread[] {logThread}, 1);
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
        assertEquals(expectedErrors, agent.errors(), "errors the agent met and carried on after");
    }

    @Test
    void aJoinGroupIsAnsweredAndItsNetworkThreadWokenOnlyByThePassThatCompletesItsRebalance()
    {
        final AtomicInteger wokenA = new AtomicInteger();
        final GroupCall<GroupCoordinator.JoinWaiter> a = join("", 10_000, wokenA);
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
        final GroupCall<GroupCoordinator.JoinWaiter> b = join("", 10_000, wokenB);
        assertTrue(agent.offer(b));
        invoker.invoke();
        assertFalse(b.answered(), "the second join waits for the rebalance");
        assertEquals(0, wokenB.get(), "nobody woke its network thread");
        assertEquals(1, agent.waiting(), "the join waits on the agent");
        invoker.invoke();
        assertFalse(b.answered(), "a pass that changed nothing answers nothing");

        final AtomicInteger wokenRejoin = new AtomicInteger();
        final GroupCall<GroupCoordinator.JoinWaiter> rejoin = join(memberA, 10_000, wokenRejoin);
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
    void aSessionExpiresOnTheAgentsTick()
    {
        final GroupCall<GroupCoordinator.JoinWaiter> a = join("", 10, new AtomicInteger());
        assertTrue(agent.offer(a));
        invoker.invoke();
        assertEquals(Errors.NONE, a.result().error);
        assertEquals(1, coordinator.describe(GROUP).members().size());
        // no heartbeat, no sync: only the agent's timed work (every 50 ms) can remove the member
        await(() ->
        {
            invoker.invoke();
            return coordinator.describe(GROUP).members().isEmpty();
        }, Duration.ofSeconds(20), "the member's 10 ms session expired on a tick of the agent");
        assertEquals("Empty", coordinator.describe(GROUP).state());
    }

    @Test
    void aCallThatThrowsAnErrorCostsOnlyThatCall()
    {
        final AtomicInteger woken = new AtomicInteger();
        final GroupCall<Object> failing = new GroupCall<>((c, now) ->
        {
            throw new StackOverflowError("a defect in a group request");
        }, (out, at, result) -> at, (out, at, error) -> at, woken::incrementAndGet);
        final GroupCall<GroupCoordinator.JoinWaiter> after = join("", 10_000, new AtomicInteger());
        assertTrue(agent.offer(failing));
        assertTrue(agent.offer(after));
        invoker.invoke();
        assertTrue(failing.answered(), "the failed call is ended (its connection closes)");
        assertNull(failing.result());
        assertEquals(1, woken.get());
        assertEquals(1, agent.errors(), "counted by the agent's error handler");
        expectedErrors = 1;
        assertTrue(after.answered(), "the agent carries on");
        assertEquals(Errors.NONE, after.result().error);
        assertSame(invoker.agent(), agent);
        assertFalse(invoker.isClosed(), "the agent still runs");
    }

    private GroupCall<GroupCoordinator.JoinWaiter> join(final String memberId, final int sessionMs, final AtomicInteger woken)
    {
        return new GroupCall<>((c, now) -> c.join(GROUP, memberId, null, "client", "/127.0.0.1", sessionMs, 60_000, "consumer",
            List.of(new Member.Protocol("range", new byte[] {1})), false, false),
            (out, at, result) -> at, (out, at, error) -> at, woken::incrementAndGet);
    }
}
