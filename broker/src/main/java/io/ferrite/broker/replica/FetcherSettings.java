package io.ferrite.broker.replica;

/**
 * A follower fetcher's knobs, Kafka's names and defaults: {@code replica.fetch.wait.max.ms} 500,
 * {@code replica.fetch.min.bytes} 1, {@code replica.fetch.response.max.bytes} 10 MiB,
 * {@code replica.fetch.max.bytes} 1 MiB (per partition), {@code replica.fetch.backoff.ms} 1000,
 * {@code replica.socket.timeout.ms} 30000 (here the connect timeout only: reads block until the
 * leader answers or the connection goes).
 */
public record FetcherSettings(int maxWaitMs, int minBytes, int responseMaxBytes, int partitionMaxBytes, long backoffMs,
    int socketTimeoutMs)
{
    public static final FetcherSettings KAFKA_DEFAULTS = new FetcherSettings(500, 1, 10 * 1024 * 1024, 1024 * 1024, 1000, 30_000);
}
