package io.ferrite.broker.txn;

import io.ferrite.broker.Diagnostics;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A diagnostics switch: where an EndTxn's time goes, stage by stage, in microseconds. Off unless the
 * broker's JVM runs with {@code -D}{@value #PROPERTY}{@code =true} ({@link Diagnostics}). Off, every
 * clock reading, stamp store and recording is behind this {@code static final} flag, which the JIT folds
 * away, and no histogram is made; what stays is room: each {@link TxnCoordinator.Pending} carries five
 * longs (40 bytes more for every coordinator call that makes one), each pooled AppendCommand and each
 * {@link TxnMetadata} carry their stamps' longs, and EndTxn's call captures one more long. On the
 * produce and fetch path nothing is read or stored when off. On, the
 * stamps are {@link System#nanoTime} readings kept in the request's {@link TxnCoordinator.Pending} and
 * in its {@link TxnMetadata} (the markers and Complete* after the answer), and each stage's time goes
 * into an HdrHistogram {@link Recorder} (wait-free for the recording threads: the network thread
 * records the answer's stages, the coordinators' agent the others); {@link #report} prints them all
 * (the broker logs it as it closes).
 *
 * <p>Every stage counts only EndTxns answered from a PrepareCommit/PrepareAbort they wrote (each stage has one
 * sample per such EndTxn; {@code markers} and {@code complete} only for the transactions those EndTxns
 * ended). An EndTxn answered without a write (an error, a retry answered from the state) is only counted,
 * as {@code unwritten}, and a transaction ended otherwise (a timeout's abort, an InitProducerId's fence, a
 * load completing a prepared one) is not in them. The recorders are static: brokers in one JVM share them. Stages, one after the other:
 * <pre>
 *   queued    the request decoded on its network thread  -> the coordinators' agent runs it
 *   to_log    the agent runs it (sends PrepareCommit)     -> its log thread takes the write in
 *   append    taken in                                    -> appended (and fsynced, in fsync durability), sent back
 *   return    the log thread answered                     -> the agent applied the answer
 *   respond   the agent applied it (the answer is final)  -> the network thread writes the response
 *   total     decoded                                     -> the response written
 *   markers   the answer final                            -> every marker written (the Complete* record sent)
 *   complete  the Complete* record sent                   -> its write applied (the transaction over)
 * </pre>
 */
public final class EndTxnTiming
{
    /** The system property that turns the timing on. */
    public static final String PROPERTY = Diagnostics.END_TXN_TIMING_PROPERTY;
    public static final boolean ENABLED = Diagnostics.END_TXN_TIMING;

    enum Stage
    {
        QUEUED, TO_LOG, APPEND, RETURN, RESPOND, TOTAL, MARKERS, COMPLETE
    }

    /** 1 us to 60 s at 3 significant digits; made only when the timing is on. */
    private static final Recorder[] RECORDERS = ENABLED ? recorders() : null;
    /** Every interval taken from the recorders so far (under this class's lock: {@link #report} only). */
    private static final Histogram[] TOTALS = ENABLED ? totals() : null;
    /** EndTxns answered without a write of their own (in no stage); made only when the timing is on. */
    private static final AtomicLong UNWRITTEN = ENABLED ? new AtomicLong() : null;

    private EndTxnTiming()
    {
    }

    private static Recorder[] recorders()
    {
        final Recorder[] r = new Recorder[Stage.values().length];
        for (int i = 0; i < r.length; i++)
        {
            r[i] = new Recorder(TimeUnit.SECONDS.toMicros(60), 3);
        }
        return r;
    }

    private static Histogram[] totals()
    {
        final Histogram[] h = new Histogram[Stage.values().length];
        for (int i = 0; i < h.length; i++)
        {
            h[i] = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
        }
        return h;
    }

    /** Records {@code toNs - fromNs} as {@code stage}'s time (a stamp never taken, 0, records nothing). */
    static void record(final Stage stage, final long fromNs, final long toNs)
    {
        if (ENABLED && fromNs != 0 && toNs != 0)
        {
            final long us = Math.max(0, (toNs - fromNs) / 1000);
            RECORDERS[stage.ordinal()].recordValue(Math.min(us, TimeUnit.SECONDS.toMicros(60)));
        }
    }

    /** On the network thread writing EndTxn's answer from {@code pending}: the request path's stages. */
    static void answered(final TxnCoordinator.Pending pending)
    {
        if (ENABLED)
        {
            if (pending.appliedNs == 0)
            {
                UNWRITTEN.incrementAndGet();
                return;
            }
            final long now = System.nanoTime();
            record(Stage.QUEUED, pending.decodedNs, pending.pickedNs);
            record(Stage.TO_LOG, pending.pickedNs, pending.takenNs);
            record(Stage.APPEND, pending.takenNs, pending.appendedNs);
            record(Stage.RETURN, pending.appendedNs, pending.appliedNs);
            record(Stage.RESPOND, pending.appliedNs, now);
            record(Stage.TOTAL, pending.decodedNs, now);
        }
    }

    /**
     * Every stage's count, p50, p90, p99, p99.9 and max in microseconds since the start (or since the
     * last {@link #reset}), one line each; "off" when the timing is off.
     */
    public static synchronized String report()
    {
        if (!ENABLED)
        {
            return "EndTxn timing off (-D" + PROPERTY + "=true turns it on)";
        }
        final StringBuilder s = new StringBuilder("EndTxn stages (us; EndTxns answered without a write, in none: "
            + UNWRITTEN.get() + "):");
        for (final Stage stage : Stage.values())
        {
            final Histogram h = total(stage);
            s.append(String.format("%n  %-8s n=%-7d p50=%-7d p90=%-7d p99=%-7d p99.9=%-7d max=%d", stage.name().toLowerCase(),
                h.getTotalCount(), h.getValueAtPercentile(50), h.getValueAtPercentile(90), h.getValueAtPercentile(99),
                h.getValueAtPercentile(99.9), h.getMaxValue()));
        }
        return s.toString();
    }

    /** {@code stage}'s recordings so far (its interval taken in); under this class's lock. */
    private static Histogram total(final Stage stage)
    {
        final Histogram h = TOTALS[stage.ordinal()];
        h.add(RECORDERS[stage.ordinal()].getIntervalHistogram());
        return h;
    }

    /**
     * How many times the stage named {@code stage} (as in {@link #report}, e.g. "to_log"; "unwritten" for the
     * EndTxns in no stage) was recorded since the start or the last {@link #reset}; -1 when the timing is off.
     */
    public static synchronized long count(final String stage)
    {
        if (!ENABLED)
        {
            return -1;
        }
        return "unwritten".equals(stage) ? UNWRITTEN.get() : total(Stage.valueOf(stage.toUpperCase())).getTotalCount();
    }

    /** Forgets what was recorded (a warm-up's). */
    public static synchronized void reset()
    {
        if (ENABLED)
        {
            for (final Stage stage : Stage.values())
            {
                RECORDERS[stage.ordinal()].getIntervalHistogram();
                TOTALS[stage.ordinal()].reset();
            }
            UNWRITTEN.set(0);
        }
    }
}
