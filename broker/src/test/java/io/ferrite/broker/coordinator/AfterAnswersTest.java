package io.ferrite.broker.coordinator;

import io.ferrite.broker.admin.AdminAgent;
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

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The coordinators' agent's last step of a pass, {@link CoordinatorDuties#afterAnswers} (registered with
 * {@link CoordinatorRuntime#onAfterAnswers}), stepped with an AgentInvoker (this test's thread is the agent's)
 * over a real log thread, itself stepped. Each call here waits for a write, as an EndTxn waits for its
 * PrepareCommit, and the write's answer leaves a job, as the PrepareCommit's leaves its markers
 * ({@code txn.TxnCoordinator#startMarkers}, which the hook here copies: a queue drained in order, the job in hand
 * lost to a throw, the rest left in the queue). The jobs start in the pass that applies the answers, after the
 * calls' answers are published (their network threads woken); a job the pass could not start (the start before
 * it threw) is started by the next pass, one with nothing else to do.
 */
class AfterAnswersTest
{
    private static final String TOPIC = "__coordinated";

    @TempDir
    Path dir;

    private LogManager logs;
    private LogThread logThread;
    private AgentInvoker logThreadInvoker;
    private CoordinatorRuntime runtime;
    private CoordinatorTopic store;
    private AgentInvoker invoker;
    private final List<Throwable> escaped = new ArrayList<>();
    /** What happened, in order, on this (the agent's) thread. */
    private final List<String> events = new ArrayList<>();
    /** The jobs the writes' answers left, started by the hook. */
    private final ArrayDeque<String> toStart = new ArrayDeque<>();
    private final Map<String, CoordinatorCall<Void, AwaitingWrites<String>>> calls = new HashMap<>();
    /** The name of a job whose start throws, once; null for none. */
    private String failing;

    @BeforeEach
    void open() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        final TopicRegistry topics = new TopicRegistry(logs, 1);
        topics.load(); // this thread is the topics' writer (no admin agent runs here)
        topics.create(TOPIC, 1, Map.of());
        // one network thread's sender slot (0) and the coordinators' after it (1), as the broker sets them up
        logThread = SteppedLogThreads.silent(2, 64);
        logThreadInvoker = new AgentInvoker(logThread.faults(), null, logThread);
        logThreadInvoker.start();
        final CachedEpochClock wall = new CachedEpochClock();
        wall.update(1_700_000_000_000L);
        runtime = new CoordinatorRuntime(topics, new AdminAgent(topics), new LogThread[] {logThread}, 1,
            new CoordinatorClock(wall, new CachedNanoClock()));
        store = runtime.log().topic(TOPIC, "key", PartitionCount.fixedAt(TOPIC, 1), Map.of(), CoordinatorLog::ofFailedWrite);
        runtime.onAfterAnswers(this::startJobs);
        invoker = new AgentInvoker(escaped::add, null, runtime.agent());
        invoker.start();
    }

    @AfterEach
    void close() throws Exception
    {
        invoker.close();
        logThreadInvoker.close();
        logs.close();
        assertEquals(List.of(), escaped, "errors that escaped the agent's duty cycle");
    }

    @Test
    void theJobsAPasssWritesLeftStartAfterItsAnswersArePublished()
    {
        offer("a");
        offer("b");
        invoker.invoke();
        assertEquals(List.of(), events, "the writes are sent, not answered yet: no answer, no job");
        assertFalse(calls.get("a").answered());

        logThreadAnswers();
        assertEquals(List.of(), events, "the log thread's answers wait for the agent's pass");
        assertTrue(invoker.invoke() > 0);
        assertEquals(List.of("applied a", "applied b", "answered a", "answered b", "start a (a answered)",
            "start b (b answered)"), events, "within the one pass: the answers applied, the calls answered, then the jobs");
        assertEquals(0, runtime.agent().errors());
    }

    @Test
    void aJobThePassCouldNotStartIsStartedByTheNextPass()
    {
        failing = "a";
        offer("a");
        offer("b");
        invoker.invoke();
        logThreadAnswers();
        assertTrue(invoker.invoke() > 0, "a pass whose hook threw counts as work: its runner does not park with a job left");
        assertEquals(List.of("applied a", "applied b", "answered a", "answered b"), events,
            "a's start threw (reported), b's was not tried in that pass");
        assertEquals(1, runtime.agent().errors(), "the throw reported");
        assertEquals(List.of("b"), List.copyOf(toStart), "b left for the next pass");

        events.clear();
        invoker.invoke(); // nothing queued, nothing answered: the hook runs all the same
        assertEquals(List.of("start b (b answered)"), events, "the next pass starts what the last one left");
        assertTrue(toStart.isEmpty());

        offer("c"); // and the agent carries on
        invoker.invoke();
        logThreadAnswers();
        events.clear();
        invoker.invoke();
        assertEquals(List.of("applied c", "answered c", "start c (c answered)"), events);
        assertEquals(1, runtime.agent().errors());
    }

    /** A call whose work writes one record and waits for it; the write's answer leaves the job {@code name}. */
    private void offer(final String name)
    {
        final CoordinatorCall<Void, AwaitingWrites<String>> call = new CoordinatorCall<>(null, (none, nowMs) ->
        {
            final CoordinatorLog.Write write = store.write(name, name.getBytes(StandardCharsets.UTF_8),
                "value".getBytes(StandardCharsets.UTF_8), error ->
                {
                    assertEquals(0, error, name + "'s write");
                    events.add("applied " + name);
                    toStart.add(name);
                });
            return new AwaitingWrites<>(name, List.of(write), nowMs);
        }, (out, outOffset, result) -> outOffset, (out, outOffset, error) -> outOffset, () -> events.add("answered " + name));
        calls.put(name, call);
        assertTrue(runtime.agent().offer(call));
    }

    /** The hook: the jobs in the order left, each recording whether its call's answer was published before it started. */
    private int startJobs()
    {
        int n = 0;
        for (String job; (job = toStart.poll()) != null; n++)
        {
            if (job.equals(failing))
            {
                failing = null;
                throw new IllegalStateException("simulated: starting " + job + "'s job failed");
            }
            events.add("start " + job + " (" + job + (calls.get(job).answered() ? " answered)" : " NOT answered)"));
        }
        return n;
    }

    /** Steps the log thread until it has returned the coordinators' writes (sender slot 1) and has nothing left to do. */
    private void logThreadAnswers()
    {
        await(() -> logThreadInvoker.invoke() == 0 && logThread.hasReturned(1), Duration.ofSeconds(20),
            "the log thread answered every write");
    }
}
