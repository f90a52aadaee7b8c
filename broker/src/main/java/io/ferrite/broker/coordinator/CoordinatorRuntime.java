package io.ferrite.broker.coordinator;

import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.topic.TopicRegistry;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;
import java.util.function.LongConsumer;

/**
 * What the coordinators share: one agent ({@link CoordinatorAgent}, one thread) that runs every
 * coordinator request and timer, one {@link CoordinatorLog} on its sender slot of the log threads'
 * queues, one clock. The group coordinator and the transaction coordinator run on it, so what one
 * tells the other (a transaction's marker on {@code __consumer_offsets} ending its pending offsets)
 * is a call on the same thread. Made by the broker, which loads each coordinator, then
 * {@link #start}s the agent.
 */
public final class CoordinatorRuntime implements CoordinatorDuties
{
    private final CoordinatorClock clock;
    private final CoordinatorLog log;
    private final CoordinatorAgent agent;
    private final List<LongConsumer> ticks = new ArrayList<>();
    private final List<Runnable> starts = new ArrayList<>();
    private final List<IntSupplier> afterAnswers = new ArrayList<>();
    private final List<IntSupplier> beforeCalls = new ArrayList<>();

    /** {@code sender}: the coordinators' slot on every log thread's queues (after the network threads'). */
    public CoordinatorRuntime(final TopicRegistry topics, final AdminAgent admin, final LogThread[] logThreads, final int sender,
        final CoordinatorClock clock)
    {
        this.clock = clock;
        this.log = new CoordinatorLog(topics, admin, logThreads, sender, clock);
        this.agent = new CoordinatorAgent(this, clock);
    }

    public CoordinatorClock clock()
    {
        return clock;
    }

    public CoordinatorLog log()
    {
        return log;
    }

    public CoordinatorAgent agent()
    {
        return agent;
    }

    /** A coordinator's timed work, run by the agent every {@value CoordinatorAgent#TICK_MS} ms (register before {@link #start}). */
    public void onTick(final LongConsumer tick)
    {
        ticks.add(tick);
    }

    /** A coordinator's work as the agent starts, on the agent, before any request (register before {@link #start}). */
    public void onStart(final Runnable start)
    {
        starts.add(start);
    }

    /**
     * A coordinator's work at the end of every pass, after the pass's final answers are published
     * ({@link CoordinatorDuties#afterAnswers}; register before {@link #start}).
     */
    public void onAfterAnswers(final IntSupplier work)
    {
        afterAnswers.add(work);
    }

    /**
     * A coordinator's work at the start of every pass, before its calls ({@link CoordinatorDuties#beforeCalls}; register
     * before {@link #start}).
     */
    public void onBeforeCalls(final IntSupplier work)
    {
        beforeCalls.add(work);
    }

    /** Starts the agent on a thread of its own, once every coordinator has loaded. */
    public void start()
    {
        agent.start();
    }

    /** Stops the agent (after the network threads: their answers under way may wait for it). */
    public void close()
    {
        agent.close();
    }

    /** A log thread sent answers to the coordinators' writes back (called on that log thread): the agent applies them. */
    public void writesAnswered()
    {
        agent.wake();
    }

    @Override
    public int applyAnsweredWrites()
    {
        assert agent.isOwner() : Thread.currentThread() + " is not the coordinators' agent";
        return log.drain();
    }

    @Override
    public void onStart()
    {
        for (int i = 0; i < starts.size(); i++)
        {
            starts.get(i).run();
        }
    }

    @Override
    public int beforeCalls()
    {
        return sum(beforeCalls);
    }

    @Override
    public int afterAnswers()
    {
        return sum(afterAnswers);
    }

    private static int sum(final List<IntSupplier> works)
    {
        int n = 0;
        for (int i = 0; i < works.size(); i++)
        {
            n += works.get(i).getAsInt();
        }
        return n;
    }

    @Override
    public void tick(final long nowMs)
    {
        for (int i = 0; i < ticks.size(); i++)
        {
            ticks.get(i).accept(nowMs);
        }
    }
}
