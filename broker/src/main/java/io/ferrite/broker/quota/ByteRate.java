package io.ferrite.broker.quota;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The byte rate of one quota entity (one set of Kafka's metric tags: user, client id), measured as Kafka's
 * {@code Rate} over a {@code SampledStat} measures it with the quota's {@code MetricConfig}: samples of
 * {@value #WINDOW_MS} ms ({@code quota.window.size.seconds} = 1), {@value #SAMPLES} of them
 * ({@code quota.window.num} = 11) and one more kept, a sample started at the first record after the previous one
 * completed; a sample without a record for {@value #SAMPLES} windows is obsolete (counted as empty, starting now); the
 * rate is the sum of the samples over the time since the oldest one started, counted as at least
 * {@value #SAMPLES} - 1 whole windows. {@link #record} answers Kafka's throttle time when the rate with the bytes
 * recorded is over the bound: {@code (rate - bound) / bound * window}, the time without traffic that brings the rate
 * back to the bound.
 *
 * <p>Threads: a client's connections may be on several network threads, and Kafka's rate is the entity's over all of
 * them. Each network thread writes samples of its own (single writer: plain reads, release stores, no lock, nothing
 * allocated); a measure sums every thread's with acquire reads. A sample of another thread read while it is being
 * written may be a record behind (its bytes counted at the next measure) — the rate is then off by one request for
 * one measure, which Kafka's lock would have made exact; an obsolete sample of another thread is counted as reset
 * without being written (its owner resets it at its next record).
 */
public final class ByteRate
{
    /** {@code quota.window.size.seconds}, Kafka's default: 1. */
    static final long WINDOW_MS = 1_000;
    /** {@code quota.window.num}, Kafka's default: 11. */
    static final int SAMPLES = 11;
    /** Kafka keeps one sample more than {@link #SAMPLES}, so that a whole window of them stays while the next starts. */
    private static final int SLOTS = SAMPLES + 1;
    private static final long EXPIRE_MS = SAMPLES * WINDOW_MS;

    // per thread: [current slot, slots in use, then per slot: start ms, last record ms, bytes]
    private static final int CURRENT = 0;
    private static final int USED = 1;
    private static final int FIRST_SLOT = 2;
    private static final int START = 0;
    private static final int LAST = 1;
    private static final int BYTES = 2;
    private static final int SLOT_LONGS = 3;
    private static final int THREAD_LONGS = FIRST_SLOT + SLOTS * SLOT_LONGS;

    private final AtomicLongArray samples;
    private final int threads;
    /** Set once the registry dropped it (idle for an hour): a connection that cached it looks it up again. */
    volatile boolean retired;

    ByteRate(final int threads)
    {
        this.threads = threads;
        this.samples = new AtomicLongArray(threads * THREAD_LONGS);
    }

    /**
     * Adds {@code bytes} (negative: takes them back, as Kafka's {@code unrecordQuotaSensor}) at {@code nowMs} from network
     * thread {@code thread}, and returns the throttle time Kafka answers for the rate then against {@code bound} bytes a
     * second, 0 when within it. With {@code check} false it only records (Kafka's {@code record(value, time, false)}).
     */
    int record(final int thread, final long bytes, final long nowMs, final double bound, final boolean check)
    {
        final int base = thread * THREAD_LONGS;
        int used = (int)samples.getPlain(base + USED);
        int current = (int)samples.getPlain(base + CURRENT);
        if (used == 0)
        {
            start(base, 0, nowMs);
            used = 1;
            samples.setRelease(base + USED, used);
        }
        else if (nowMs - samples.getPlain(slot(base, current) + START) >= WINDOW_MS)
        {
            current = (current + 1) % SLOTS;
            start(base, current, nowMs);
            if (current >= used)
            {
                used = current + 1;
                samples.setRelease(base + USED, used);
            }
            samples.setRelease(base + CURRENT, current);
        }
        final int at = slot(base, current);
        samples.setRelease(at + BYTES, samples.getPlain(at + BYTES) + bytes);
        samples.setRelease(at + LAST, nowMs);
        if (!check)
        {
            return 0;
        }
        return throttleMs(thread, nowMs, bound);
    }

    /** Kafka's throttle time for the rate now against {@code bound}, 0 when within it; obsolete samples of {@code thread} reset. */
    private int throttleMs(final int thread, final long nowMs, final double bound)
    {
        long sum = 0;
        long oldest = Long.MAX_VALUE;
        for (int t = 0; t < threads; t++)
        {
            final int base = t * THREAD_LONGS;
            final int used = (int)samples.getAcquire(base + USED);
            for (int s = 0; s < used; s++)
            {
                final int at = slot(base, s);
                if (nowMs - samples.getAcquire(at + LAST) >= EXPIRE_MS)
                {
                    if (t == thread)
                    {
                        start(base, s, nowMs); // Kafka's purge: the sample starts again now, empty
                    }
                    oldest = Math.min(oldest, nowMs);
                    continue;
                }
                sum += samples.getAcquire(at + BYTES);
                oldest = Math.min(oldest, samples.getAcquire(at + START));
            }
        }
        final long window = windowMs(oldest == Long.MAX_VALUE ? nowMs : oldest, nowMs);
        final double rate = sum / (window / 1000.0);
        if (rate <= bound)
        {
            return 0;
        }
        return (int)Math.min(Integer.MAX_VALUE, Math.round((rate - bound) / bound * window));
    }

    /** Kafka's {@code Rate.windowSize}: the time since the oldest sample started, at least {@code SAMPLES - 1} whole windows. */
    static long windowMs(final long oldestStartMs, final long nowMs)
    {
        long elapsed = nowMs - oldestStartMs;
        final long whole = elapsed / WINDOW_MS;
        if (whole < SAMPLES - 1)
        {
            elapsed += (SAMPLES - 1 - whole) * WINDOW_MS;
        }
        return elapsed;
    }

    /** The latest record of any thread (ms), for the registry's expiry of idle rates. */
    long lastRecordMs()
    {
        long last = Long.MIN_VALUE;
        for (int t = 0; t < threads; t++)
        {
            final int base = t * THREAD_LONGS;
            final int used = (int)samples.getAcquire(base + USED);
            for (int s = 0; s < used; s++)
            {
                last = Math.max(last, samples.getAcquire(slot(base, s) + LAST));
            }
        }
        return last;
    }

    private void start(final int base, final int slot, final long nowMs)
    {
        final int at = slot(base, slot);
        samples.setRelease(at + BYTES, 0);
        samples.setRelease(at + START, nowMs);
        samples.setRelease(at + LAST, nowMs);
    }

    private static int slot(final int base, final int slot)
    {
        return base + FIRST_SLOT + slot * SLOT_LONGS;
    }
}
