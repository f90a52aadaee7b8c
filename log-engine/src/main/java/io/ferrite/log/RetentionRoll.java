package io.ferrite.log;

import org.agrona.concurrent.EpochClock;

import java.io.IOException;

/**
 * The roll that lets retention delete a partition's active segment (Kafka 4.4's {@code UnifiedLog.deleteSegments}
 * rolls a new empty segment when every segment is to go, so the log end offset stays and the log start moves to it).
 * Retention runs on the scheduler's thread and may not roll — the writer appends to the active segment — so it asks:
 * {@link #request} sets a flag and tells the log manager's {@link WriterTasks}, the log's writer runs {@link #run}
 * between its appends, and its roll asks for a retention pass soon ({@link LogEnvironment#retentionSoon}), which
 * deletes the now inactive segment by the same rules (past retention, wholly below the high watermark). A record
 * appended between the request and the roll keeps the rolled segment for a later pass, as it would in Kafka's next one.
 *
 * <p>An embedded writer whose manager has {@link WriterTasks#NONE} calls {@link #run} itself now and then (a no-op
 * unless retention asked, so cheap enough for every idle turn).
 */
public final class RetentionRoll
{
    private final PartitionLog log;
    private final SegmentList segments;
    private final LogOffsets offsets;
    private final WriterGate gate;
    private final SegmentRoller roller;
    private final EpochClock clock;
    private final LogEnvironment env;
    /** Set by retention (any thread), cleared by the writer's {@link #run}. */
    private volatile boolean wanted;

    RetentionRoll(final PartitionLog log, final SegmentList segments, final LogOffsets offsets, final WriterGate gate,
        final SegmentRoller roller, final EpochClock clock, final LogEnvironment env)
    {
        this.log = log;
        this.segments = segments;
        this.offsets = offsets;
        this.gate = gate;
        this.roller = roller;
        this.clock = clock;
        this.env = env;
    }

    /**
     * Retention's, under the segments lock: the active segment is past retention and wholly below the high watermark.
     * Every pass that finds it so asks again (a request the writer never saw — its thread not started yet — is not lost;
     * one it ran twice rolls once, as the second finds the flag clear).
     */
    void request()
    {
        wanted = true;
        env.retentionRollWanted(log);
    }

    /** Whether retention asked for a roll the writer has not made yet (any thread). */
    public boolean wanted()
    {
        return wanted;
    }

    /**
     * Writer thread: when retention asked, rolls the active segment at the log end (unless it is empty: nothing to
     * delete) and asks for a retention pass soon. Entered as an append (a close waits for it; a closing log is left
     * alone). With a claim open — the writer is building a batch in place — it declines and the request stays: an
     * embedded writer that calls this in its loop rolls at a later turn, but the broker's {@code LogThreadTasks} posts
     * it once per request, so there the roll waits for the next retention pass to ask again
     * ({@code log.retention.check.interval.ms}); the log's deletion is only that much later.
     *
     * @return whether it rolled
     * @throws IOException when the new segment could not be made (the log is unchanged; retention asks again)
     */
    public boolean run() throws IOException
    {
        if (!wanted)
        {
            return false;
        }
        gate.recordWriter();
        assert gate.onWriterThread() : LogMessages.secondWriter(log);
        if (gate.openClaim() != null)
        {
            return false;
        }
        wanted = false;
        if (!gate.beginAppend())
        {
            return false;
        }
        try
        {
            if (segments.active().size() == 0)
            {
                return false;
            }
            roller.roll(offsets.logEndOffset(), clock.time());
        }
        finally
        {
            gate.endAppend();
        }
        env.retentionSoon();
        return true;
    }
}
