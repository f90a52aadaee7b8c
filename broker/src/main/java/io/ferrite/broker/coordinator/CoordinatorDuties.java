package io.ferrite.broker.coordinator;

/**
 * What the {@link CoordinatorAgent} runs besides the calls: the coordinators' side of its pass
 * ({@link CoordinatorRuntime}). All on the agent; what a duty throws is reported and the agent runs on.
 */
public interface CoordinatorDuties
{
    /** Applies what the log threads answered to the coordinators' writes, oldest first; returns how many. */
    int applyAnsweredWrites();

    /**
     * At each pass's start, before its calls: what must never wait in (or be dropped by) the bounded request queue
     * (a partition's groups loaded or unloaded as this node's leadership of it changes); how many things it did.
     */
    default int beforeCalls()
    {
        return 0;
    }

    /** The timed work, every {@value CoordinatorAgent#TICK_MS} ms. */
    void tick(long nowMs);

    /**
     * At each pass's end, once its final answers are published (their network threads woken): what its
     * writes left that no answer waits for (a prepared transaction's markers); how many. Run at every pass,
     * one with no other work too, so what a pass left (its run threw) is run by the next.
     */
    default int afterAnswers()
    {
        return 0;
    }

    /**
     * On the agent as it starts, before it runs any call: work the coordinators' start leaves to
     * it (the groups' strays moved home). What it throws is reported and the agent runs on.
     */
    default void onStart()
    {
    }
}
