package io.ferrite.testing;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The one way a test waits: on a condition, up to a deadline, failing with what it waited for and
 * what it saw last. Never a sleep that proves something did not happen — wait for the state that
 * makes the absence certain, then assert.
 *
 * <p>The condition runs on the calling thread, first at once, then after pauses that grow from
 * 1 ms to {@value #MAX_PAUSE_MS} ms: short enough that a condition met in a millisecond costs one,
 * long enough that a condition asking the broker (an Admin round trip) does not load the two shared
 * cores a test machine has. A condition that blocks by itself (a consumer's poll) sets its own pace.
 * An exception from the condition ends the wait at once: a probe that throws is a failure, not a
 * "not yet".
 */
public final class Await
{
    private static final long MAX_PAUSE_MS = 50;

    /** A condition that may ask something that throws (an Admin call's {@code get()}). */
    @FunctionalInterface
    public interface Condition
    {
        boolean test() throws Exception;
    }

    /** Something to look at until it is acceptable. */
    @FunctionalInterface
    public interface Probe<T>
    {
        T get() throws Exception;
    }

    private Await()
    {
    }

    /**
     * Waits until {@code condition} holds.
     *
     * @param whatWasExpected describes the condition and the state seen; asked only on failure, so it
     *                        can read the state then
     * @throws AssertionError when the deadline passes first
     */
    public static void await(final Condition condition, final Duration deadline, final Supplier<String> whatWasExpected)
    {
        poll(condition::test, Boolean::booleanValue, deadline, whatWasExpected, last -> "");
    }

    /** {@link #await(Condition, Duration, Supplier)} with a fixed description. */
    public static void await(final Condition condition, final Duration deadline, final String whatWasExpected)
    {
        await(condition, deadline, () -> whatWasExpected);
    }

    /**
     * Asks {@code probe} until {@code accept} takes its answer and returns that answer.
     *
     * @throws AssertionError when the deadline passes first, naming what was expected and the last answer
     */
    public static <T> T awaitValue(final Probe<T> probe, final Predicate<? super T> accept, final Duration deadline,
        final Supplier<String> whatWasExpected)
    {
        return poll(probe, accept, deadline, whatWasExpected, last -> "; last observed: " + last);
    }

    private static <T> T poll(final Probe<T> probe, final Predicate<? super T> accept, final Duration deadline,
        final Supplier<String> whatWasExpected, final Function<T, String> observed)
    {
        final long start = System.nanoTime();
        final long limit = deadline.toNanos();
        long pauseMs = 1;
        while (true)
        {
            final T value = ask(probe);
            if (accept.test(value))
            {
                return value;
            }
            final long waited = System.nanoTime() - start;
            if (waited >= limit)
            {
                throw new AssertionError("awaited " + whatWasExpected.get() + " for " + format(deadline) +
                    observed.apply(value));
            }
            LockSupport.parkNanos(Math.min(TimeUnit.MILLISECONDS.toNanos(pauseMs), limit - waited));
            if (Thread.interrupted())
            {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while awaiting " + whatWasExpected.get() + observed.apply(value));
            }
            pauseMs = Math.min(MAX_PAUSE_MS, pauseMs * 2);
        }
    }

    /** {@link #awaitValue(Probe, Predicate, Duration, Supplier)} with a fixed description. */
    public static <T> T awaitValue(final Probe<T> probe, final Predicate<? super T> accept, final Duration deadline,
        final String whatWasExpected)
    {
        return awaitValue(probe, accept, deadline, () -> whatWasExpected);
    }

    private static <T> T ask(final Probe<T> probe)
    {
        try
        {
            return probe.get();
        }
        catch (final RuntimeException | Error ex)
        {
            throw ex;
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while awaiting", ex);
        }
        catch (final Exception ex)
        {
            throw new AssertionError("the awaited condition threw " + ex, ex);
        }
    }

    private static String format(final Duration d)
    {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }
}
