package io.ferrite.broker.quota;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The rates of one quota key, one {@link ByteRate} per set of tags (Kafka's sensors of one quota manager), made on a
 * connection's first resolution to them. A rate idle for the given time is dropped at a later resolution (swept at most
 * once a minute) and marked retired, so that a connection that cached it resolves again rather than record into a rate
 * nobody else reads. Resolutions only (allocating, off the request path once a connection is resolved).
 */
final class QuotaRates
{
    private static final long SWEEP_MS = 60_000;

    private final ConcurrentHashMap<QuotaLevels.Tags, ByteRate> rates = new ConcurrentHashMap<>();
    private final int threads;
    private final long idleMs;
    private volatile long sweptMs = System.currentTimeMillis();

    QuotaRates(final int threads, final long idleMs)
    {
        this.threads = threads;
        this.idleMs = idleMs;
    }

    ByteRate rate(final QuotaLevels.Tags tags)
    {
        final long now = System.currentTimeMillis();
        if (now - sweptMs >= SWEEP_MS)
        {
            sweptMs = now;
            rates.forEach((t, rate) ->
            {
                final long last = rate.lastRecordMs();
                if (last != Long.MIN_VALUE && now - last >= idleMs && rates.remove(t, rate))
                {
                    rate.retired = true;
                }
            });
        }
        return rates.computeIfAbsent(tags, t -> new ByteRate(threads));
    }
}
