package io.ferrite.broker.coordinator;

import java.util.ArrayList;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The calls the {@link CoordinatorAgent} ran whose answer is not final yet (a JoinGroup for its rebalance, a
 * commit for its write): asked again after a pass that changed anything ({@link #settle}), and answered
 * COORDINATOR_NOT_AVAILABLE when the agent ends ({@link #abandonAll}). No order is kept: a connection has one
 * coordinator request at the agent at most, so removal swaps in the last. Agent only.
 */
final class WaitingCalls
{
    private final ArrayList<CoordinatorCall<?, ?>> calls = new ArrayList<>();

    void add(final CoordinatorCall<?, ?> call)
    {
        calls.add(call);
    }

    int size()
    {
        return calls.size();
    }

    boolean isEmpty()
    {
        return calls.isEmpty();
    }

    /**
     * Publishes the answers that are final now, and drops the calls whose connection closed; a call whose
     * settling threw goes to {@code report} and is ended as failed (its connection closes). Stops early once
     * {@code stop} says so (the agent met a fault it cannot survive: {@link #abandonAll} answers the rest).
     */
    void settle(final long nowMs, final Consumer<Throwable> report, final BooleanSupplier stop)
    {
        for (int i = 0; i < calls.size() && !stop.getAsBoolean(); )
        {
            final CoordinatorCall<?, ?> call = calls.get(i);
            boolean ended;
            try
            {
                ended = call.cancelled() || call.settle(nowMs);
            }
            catch (final Throwable fault)
            {
                report.accept(fault);
                call.failed();
                ended = true;
            }
            if (!ended)
            {
                i++;
                continue;
            }
            final int last = calls.size() - 1;
            calls.set(i, calls.get(last));
            calls.remove(last);
        }
    }

    /** Ends every waiting call with {@code end} (as abandoned) and forgets them. */
    void abandonAll(final Consumer<CoordinatorCall<?, ?>> end)
    {
        for (final CoordinatorCall<?, ?> w : calls)
        {
            end.accept(w);
        }
        calls.clear();
    }
}
