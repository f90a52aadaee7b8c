package io.ferrite.broker.metrics;

import org.HdrHistogram.Histogram;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * One network thread's request times, per kind of request ({@link RequestKinds}) and stage ({@link Stage}), in
 * microseconds: a {@link KindTimes} per kind (a double-buffered histogram per stage), made by the network thread at the
 * kind's first request — a one-time allocation while the broker warms up, none for kinds never requested — and
 * published with an ordered store. The network thread records ({@link #record}): wait-free, no lock and nothing
 * allocated once the kind's histograms exist (the phaser is one atomic increment on entry and one on exit around the
 * request's five stores). Readers ({@link RequestLatencies}) swap a kind's histograms to take what was recorded since
 * the last swap ({@link #swap}): the swap takes the phaser's reader lock, never a lock the network thread takes.
 *
 * <p>A value beyond {@link #HIGHEST_MICROS} is recorded as that. {@link Stage#TOTAL} keeps two significant digits
 * (1%), the other stages one (within about 6%: the total is the precise figure): a kind's five histograms are about
 * 35 KB, and as much again once read (the second set is made at the first swap).
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
    /** By kind: null until the kind's first request (written by the network thread only, read by the readers). */
    private final AtomicReferenceArray<KindTimes> kinds = new AtomicReferenceArray<>(RequestKinds.COUNT);

    RequestTimes()
    {
    }

    /** An empty histogram of {@code stage}'s shape, as {@link #swap} hands them. */
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
        KindTimes k = kinds.getPlain(kind); // this thread's own store, if any
        if (k == null)
        {
            k = new KindTimes(); // the kind's first request on this thread: made once, during the warm-up
            kinds.setRelease(kind, k);
        }
        k.record(micros(sentNs - receivedNs), micros(startNs - receivedNs), micros(localNs - startNs),
            micros(readyNs - localNs), micros(sentNs - readyNs));
    }

    private static long micros(final long nanos)
    {
        return Math.min(HIGHEST_MICROS, Math.max(0, nanos / 1000));
    }

    /**
     * What was recorded of {@code kind} since the last call: its histograms per stage ({@link Stage#ordinal}), valid
     * until the next call for the kind; null if nothing of the kind was ever recorded (or an int that is no kind). One
     * reader at a time, any thread but the network thread.
     */
    Histogram[] swap(final int kind)
    {
        if (kind < 0 || kind >= RequestKinds.COUNT)
        {
            return null;
        }
        final KindTimes k = kinds.get(kind);
        return k == null ? null : k.swap();
    }
}
