package io.ferrite.broker.metrics;

import io.ferrite.broker.metrics.RequestTimes.Stage;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.WriterReaderPhaser;

/**
 * One kind of request's times on one network thread: a histogram per {@link Stage}, double-buffered as HdrHistogram's
 * {@code SingleWriterRecorder} does it, but with one {@link WriterReaderPhaser} around a request's five stores (two
 * atomic increments per request, not two per stage). The network thread records ({@link #record}: wait-free, no lock,
 * nothing allocated); one reader at a time ({@link RequestLatencies}, under its monitor) swaps the two sets of
 * histograms ({@link #swap}) and reads the set the writer has left.
 */
final class KindTimes
{
    private static final Stage[] STAGES = Stage.values();

    private final WriterReaderPhaser phaser = new WriterReaderPhaser();
    private volatile Histogram[] active = histograms();
    /** The set the writer left at the last swap (the reader's; made at the first swap). */
    private Histogram[] inactive;

    private static Histogram[] histograms()
    {
        final Histogram[] stages = new Histogram[STAGES.length];
        for (final Stage stage : STAGES)
        {
            stages[stage.ordinal()] = RequestTimes.histogram(stage);
        }
        return stages;
    }

    /** One request's stages, in microseconds (each within the histograms' range). The network thread only. */
    void record(final long total, final long queue, final long local, final long remote, final long send)
    {
        final long critical = phaser.writerCriticalSectionEnter();
        try
        {
            final Histogram[] stages = active;
            stages[0].recordValue(total);
            stages[1].recordValue(queue);
            stages[2].recordValue(local);
            stages[3].recordValue(remote);
            stages[4].recordValue(send);
        }
        finally
        {
            phaser.writerCriticalSectionExit(critical);
        }
    }

    /**
     * Takes what was recorded since the last swap: the histograms per stage ({@link Stage#ordinal}), the caller's to
     * read until its next swap. One reader at a time.
     */
    Histogram[] swap()
    {
        Histogram[] next = inactive;
        if (next == null)
        {
            next = histograms();
        }
        else
        {
            for (final Histogram h : next)
            {
                h.reset();
            }
        }
        phaser.readerLock();
        try
        {
            final Histogram[] taken = active;
            active = next;
            phaser.flipPhase();
            inactive = taken;
            return taken;
        }
        finally
        {
            phaser.readerUnlock();
        }
    }
}
