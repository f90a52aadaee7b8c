package io.ferrite.broker.txn;

/**
 * When a transaction coordinator write that failed retriably is sent again — a partition's marker, a
 * Complete* record: the first retry {@value #FIRST_MS} ms after the failure (one tick of the coordinators'
 * agent), each next one twice as late, at most {@value #MAX_MS} ms apart. Why a cap of 5 s: a retriable
 * failure (a full disk, a log being closed) may last minutes, and a retry every 5 s costs nothing while
 * a tick's retry flooded the log; past 5 s the wait would only delay the transaction once the cause is
 * gone. Counts the failures, so the caller logs the first one, and how many it took once one succeeds,
 * rather than one line per retry. Not thread-safe: on the coordinators' agent only, or (the producer id
 * reservations, {@code io.ferrite.broker.ProducerIds}) under its owner's lock.
 */
public final class RetryBackoff
{
    public static final long FIRST_MS = 50;
    public static final long MAX_MS = 5_000;

    private int failures;
    private long dueMs;
    /** Waiting to be sent again at {@link #dueMs} (false while the retry is on its way). */
    private boolean waiting;

    /** The delay after the {@code failures}-th failure in a row: 50, 100, 200 ... ms, at most {@link #MAX_MS}. */
    static long delayMs(final int failures)
    {
        return Math.min(MAX_MS, FIRST_MS << Math.min(Math.max(failures, 1) - 1, 16));
    }

    /**
     * A failure at {@code nowMs}: the next try is due a delay later.
     *
     * @return whether it is the first in a row (the one to log)
     */
    public boolean failed(final long nowMs)
    {
        failures++;
        dueMs = nowMs + delayMs(failures);
        waiting = true;
        return failures == 1;
    }

    /** Whether the retry is due at {@code nowMs}; if so it is taken (on its way from now on). */
    public boolean take(final long nowMs)
    {
        if (waiting && nowMs >= dueMs)
        {
            waiting = false;
            return true;
        }
        return false;
    }

    public int failures()
    {
        return failures;
    }

    long dueMs()
    {
        return dueMs;
    }
}
