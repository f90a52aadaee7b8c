package io.ferrite.broker.coordinator;

import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.SystemNanoClock;

/**
 * The coordinators' time, read once per pass of their agent ({@link #update}) and given to what
 * the pass runs. Two readings, for two uses:
 * <ul>
 * <li>{@link #nowMs}: what deadlines are set by and due by — sessions, rebalance and initial delays,
 * member ids given out with MEMBER_ID_REQUIRED, a write's answer ({@link AwaitingWrites}), the tick
 * and the retention check's period. It moves with a monotonic clock (the wall time at the start,
 * advanced by the elapsed {@link NanoClock} time), so a step of the wall clock neither expires every
 * session at once nor holds expiries back (Kafka times its delayed heartbeats and joins on its
 * high-resolution monotonic clock likewise).</li>
 * <li>{@link #wallMs}: what is kept as a time of day — a group's state timestamp (written in its
 * record, and what offset retention counts from), the records' timestamps — and what retention
 * compares with, and the commit timestamps (a commit is stamped in the pass that runs it).</li>
 * </ul>
 * Production uses the system clocks; a test gives clocks it moves by hand and steps the agent.
 * Not thread-safe: the agent's (and a coordinator's load before the agent runs).
 */
public final class CoordinatorClock
{
    private final EpochClock wall;
    private final NanoClock monotonic;
    private final long startMs;
    private final long startNs;
    private long nowMs;
    private long wallMs;

    public CoordinatorClock(final EpochClock wall, final NanoClock monotonic)
    {
        this.wall = wall;
        this.monotonic = monotonic;
        this.startMs = wall.time();
        this.startNs = monotonic.nanoTime();
        this.nowMs = startMs;
        this.wallMs = startMs;
    }

    public static CoordinatorClock system()
    {
        return new CoordinatorClock(SystemEpochClock.INSTANCE, SystemNanoClock.INSTANCE);
    }

    /** Reads both clocks (at the start of a pass); returns {@link #nowMs}. */
    public long update()
    {
        wallMs = wall.time();
        nowMs = startMs + (monotonic.nanoTime() - startNs) / 1_000_000L;
        return nowMs;
    }

    /** Monotonic milliseconds (on the wall clock's scale at the start) as of the last {@link #update}: for deadlines. */
    public long nowMs()
    {
        return nowMs;
    }

    /** The wall time as of the last {@link #update}: for timestamps kept or written. */
    public long wallMs()
    {
        return wallMs;
    }
}
