package io.ferrite.log;

import java.io.IOException;

/**
 * When a partition log starts a new segment, and the roll itself (writer only): Kafka's conditions
 * — the batch would not fit in {@code segment.bytes}, the indexes are full, its offsets would
 * overflow the segment's relative offsets, or the segment is older than {@code segment.ms} (less
 * the jitter) by Kafka's record-timestamp rule. The sealed segment is flushed in the background.
 */
final class SegmentRoller
{
    /** No clock reading taken yet for this append: read it only if needed. */
    static final long UNKNOWN_TIME = Long.MIN_VALUE;

    private final PartitionLog log;
    private final WriteStrategy strategy;
    private final SegmentList segments;
    private final ProducerStateManager producers;
    private final RollSnapshots snapshots;
    private final BatchValidator validator;
    private final LogEnvironment env;

    SegmentRoller(final PartitionLog log, final WriteStrategy strategy, final SegmentList segments,
        final ProducerStateManager producers, final RollSnapshots snapshots, final BatchValidator validator, final LogEnvironment env)
    {
        this.snapshots = snapshots;
        this.log = log;
        this.strategy = strategy;
        this.segments = segments;
        this.producers = producers;
        this.validator = validator;
        this.env = env;
    }

    /** Rolls first if the batch is due to go in a new segment; returns the segment it goes in. */
    Segment maybeRoll(final LogConfig cfg, final int length, final long base, final long last, final long maxTimestamp,
        final long now) throws IOException
    {
        final Segment active = segments.active();
        if (!rollDue(cfg, active, length, base, last, maxTimestamp, now))
        {
            return active;
        }
        roll(base, now != UNKNOWN_TIME ? now : validator.readClock());
        return segments.active();
    }

    /**
     * Kafka's roll conditions for a batch about to go in {@code active} ({@code now} may be
     * {@link #UNKNOWN_TIME}: the clock is read only if the age needs it).
     */
    boolean rollDue(final LogConfig cfg, final Segment active, final int length, final long base, final long last,
        final long maxTimestamp, final long now)
    {
        final int size = active.size();
        if (size == 0)
        {
            // only a follower's batch, past a gap of its leader's, can start above an empty segment's base: as Kafka
            // (whose roll replaces the empty segment) one whose offsets the segment cannot hold goes in a new one
            return last - active.baseOffset > Integer.MAX_VALUE;
        }
        if (size > cfg.segmentBytes - length || active.indexesFull() || last - active.baseOffset > Integer.MAX_VALUE)
        {
            return true;
        }
        final long ageNow = now != UNKNOWN_TIME || active.rollsByBatchTimestamps() ? now : validator.readClock();
        return active.timeWaitedForRoll(ageNow, maxTimestamp) > cfg.rollMs - cfg.segmentJitterMs;
    }

    /** {@link #roll} at {@code logEnd}, now: a follower's, after an append that left a gap in the active segment. */
    void rollAtLogEnd(final long logEnd) throws IOException
    {
        roll(logEnd, validator.readClock());
    }

    /** Starts a new active segment at {@code baseOffset} (the log end); the old one is flushed in the background. */
    void roll(final long baseOffset, final long now) throws IOException
    {
        segments.lock();
        try
        {
            final Segment old = segments.active();
            // what can fail (a full disk) comes before anything that changes the log
            if (segments.isClosed())
            {
                // not reached through append or claim (a close shuts the writer out first): a guard, since a deleted
                // log's old directory path may be another partition's by now
                throw new IOException("log " + log + " is closed: no segment is made for it");
            }
            // the log's directory now: the renamed one once a deletion moved it (a roll then finds the log closed)
            final Segment next = SegmentOpener.create(log.dir(), baseOffset, log.config(), strategy, now);
            try
            {
                old.makeIndexFiles(); // an index that took no entry has no file yet: made while the roll can still be undone
                snapshots.takeAtRoll(producers);
                old.deactivate();
                next.log.takeLookaheadOf(old.log);
            }
            catch (final IOException | RuntimeException ex)
            {
                SegmentDeletion.deleteFiles(next);
                next.close();
                throw ex;
            }
            segments.add(next);
        }
        finally
        {
            segments.unlock();
        }
        env.flushInBackground(log);
    }
}
