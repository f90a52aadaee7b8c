package io.ferrite.broker.coordinator;

import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.CachedNanoClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A call waiting on an answer that changes no state of the agent's — another node's answer to a TxnOffsetCommit's
 * AddPartitionsToTxn, which completes the call's outcome and wakes the agent ({@code group.RemoteTxnCheck}) — is settled
 * by the pass that wake brings, not at the next tick. The agent is stepped with an AgentInvoker (this thread is its
 * thread) on a clock that never moves past the first tick, so a tick cannot be what settles it.
 */
class WakeSettlesTest
{
    private final List<Throwable> escaped = new ArrayList<>();
    private CoordinatorAgent agent;
    private AgentInvoker invoker;

    @BeforeEach
    void open()
    {
        final CachedEpochClock wall = new CachedEpochClock();
        wall.update(1_700_000_000_000L);
        agent = new CoordinatorAgent(new CoordinatorDuties()
        {
            @Override
            public int applyAnsweredWrites()
            {
                return 0;
            }

            @Override
            public void tick(final long nowMs)
            {
            }
        }, new CoordinatorClock(wall, new CachedNanoClock()));
        invoker = new AgentInvoker(escaped::add, null, agent);
        invoker.start();
    }

    @AfterEach
    void close()
    {
        invoker.close();
        assertEquals(List.of(), escaped, "errors that escaped the agent's duty cycle");
    }

    @Test
    void theWakeOfAnAnswerSettlesTheCallWaitingOnIt()
    {
        final AtomicBoolean answered = new AtomicBoolean();
        final CoordinatorCall.Outcome waitsForTheAnswer = nowMs -> answered.get();
        final CompletableFuture<CoordinatorCall.Outcome> run = agent.call(null, (none, nowMs) -> waitsForTheAnswer);
        invoker.invoke(); // runs the call (and the first tick): it waits
        assertTrue(run.isDone(), "the call ran");
        assertEquals(1, agent.waiting(), "the call waits for its answer");
        invoker.invoke();
        assertEquals(1, agent.waiting(), "nothing answered: it still waits");

        answered.set(true); // the answer arrives on another thread, which then wakes the agent
        agent.wake();
        invoker.invoke(); // the clock has not moved: no tick in this pass
        assertEquals(0, agent.waiting(), "the pass the answer's wake brought settled the call");
    }
}
