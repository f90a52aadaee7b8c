package io.ferrite.broker.metrics;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.SingleWriterRecorder;
import org.agrona.concurrent.status.AtomicCounter;

import java.util.concurrent.TimeUnit;

/**
 * One network thread's request times, per kind of request ({@link RequestKinds}) and stage ({@link Stage}), in
 * microseconds: an HdrHistogram {@link SingleWriterRecorder} each, made at the start (none made later). The network
 * thread records ({@link #record}): wait-free, no lock and nothing allocated (the recorder's phaser is one atomic
 * increment around a store into its active histogram). Readers ({@link RequestLatencies}) swap a recorder's
 * histograms to take what was recorded since the last swap ({@link #interval}): the swap copies into a histogram the
 * reader keeps, and takes the recorder's reader lock, never a lock the network thread takes.
 *
 * <p>A value beyond {@link #HIGHEST_MICROS} is recorded as that. {@link Stage#TOTAL} keeps two significant digits
 * (1%), the other stages one (within about 6%: the total is the precise figure), which keeps a network thread's
 * recorders near 3 MB for the 92 kinds, and as much again for the kinds requested once read (a recorder's second
 * histogram is made at its first swap; a kind never counted is not swapped).
 */
public final class RequestTimes
{
    /** Kafka's {@code RequestMetrics} histograms of request time that Ferrite has stages for. */
    public enum Stage
    {
        /** Received (the read that completed the request) -> its response written (or, without one, its end). */
        TOTAL("TotalTimeMs", 2),
        /** Received -> its handler starts (waiting behind the connection's earlier response: Kafka's request queue). */
        REQUEST_QUEUE("RequestQueueTimeMs", 1),
        /** The handler's run on the network thread, up to its answer or its deferral. */
        LOCAL("LocalTimeMs", 1),
        /** Deferred -> the answer ready (a produce's append and acks, a fetch waiting for data: Kafka's purgatory). */
        REMOTE("RemoteTimeMs", 1),
        /** The answer ready -> its last byte handed to the socket. */
        RESPONSE_SEND("ResponseSendTimeMs", 1);

        /** Kafka's MBean name of the histogram ({@code name=}). */
        public final String kafkaName;
        final int digits;

        Stage(final String kafkaName, final int digits)
        {
            this.kafkaName = kafkaName;
            this.digits = digits;
        }
    }

    /** The highest time recorded as itself: 60 s. */
    public static final long HIGHEST_MICROS = TimeUnit.SECONDS.toMicros(60);
    private static final Stage[] STAGES = Stage.values();

    /** [kind][stage]; null for an int that is no kind. */
    private final SingleWriterRecorder[][] recorders = new SingleWriterRecorder[RequestKinds.COUNT][];

    /** The thread's request counters by kind: a kind never counted has nothing recorded (its recorder is not swapped). */
    private final AtomicCounter[] requests;

    RequestTimes(final AtomicCounter[] requests)
    {
        this.requests = requests;
        for (int kind = 0; kind < RequestKinds.COUNT; kind++)
        {
            if (RequestKinds.name(kind) != null)
            {
                final SingleWriterRecorder[] stages = new SingleWriterRecorder[STAGES.length];
                for (final Stage stage : STAGES)
                {
                    stages[stage.ordinal()] = new SingleWriterRecorder(1, HIGHEST_MICROS, stage.digits);
                }
                recorders[kind] = stages;
            }
        }
    }

    /** An empty histogram of {@code stage}'s shape, to hand to {@link #interval}. */
    public static Histogram histogram(final Stage stage)
    {
        return new Histogram(1, HIGHEST_MICROS, stage.digits);
    }

    /**
     * A request of {@code kind} done, its stamps {@link System#nanoTime} readings: {@code receivedNs} the read that
     * completed it, {@code startNs} its handler started, {@code localNs} its handler returned, {@code readyNs} its
     * answer was ready ({@code localNs} unless deferred), {@code sentNs} the answer written. Network thread only.
     */
    public void record(final int kind, final long receivedNs, final long startNs, final long localNs, final long readyNs,
        final long sentNs)
    {
        final SingleWriterRecorder[] stages = recorders[kind];
        put(stages[Stage.TOTAL.ordinal()], sentNs - receivedNs);
        put(stages[Stage.REQUEST_QUEUE.ordinal()], startNs - receivedNs);
        put(stages[Stage.LOCAL.ordinal()], localNs - startNs);
        put(stages[Stage.REMOTE.ordinal()], readyNs - localNs);
        put(stages[Stage.RESPONSE_SEND.ordinal()], sentNs - readyNs);
    }

    private static void put(final SingleWriterRecorder recorder, final long nanos)
    {
        recorder.recordValue(Math.min(HIGHEST_MICROS, Math.max(0, nanos / 1000)));
    }

    /**
     * Copies what was recorded of {@code kind}, {@code stage} since the last call into {@code into} (from
     * {@link #histogram}; emptied first); false for an int that is no kind. Any thread but the network thread.
     */
    public boolean interval(final int kind, final Stage stage, final Histogram into)
    {
        final SingleWriterRecorder[] stages = recorders[kind];
        if (stages == null)
        {
            return false;
        }
        if (requests[kind] == null || requests[kind].get() == 0)
        {
            into.reset(); // no request of the kind yet: the recorder's second histogram is not made for nothing
            return true;
        }
        stages[stage.ordinal()].getIntervalHistogramInto(into);
        return true;
    }
}
