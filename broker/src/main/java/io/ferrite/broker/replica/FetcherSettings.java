package io.ferrite.broker.replica;

import io.ferrite.broker.config.BrokerConfig;

/**
 * A follower fetcher's knobs, Kafka 4.4's names and defaults: {@code replica.fetch.wait.max.ms} 500,
 * {@code replica.fetch.min.bytes} 1, {@code replica.fetch.response.max.bytes} 10 MiB,
 * {@code replica.fetch.max.bytes} 1 MiB (per partition), {@code replica.fetch.backoff.ms} 1000 (after an
 * error, and before a lost connection is made again), {@code replica.socket.timeout.ms} 30000 (a request
 * whose answer has not come by then drops the connection), {@code socket.connection.setup.timeout.ms}
 * 10000 (the connect's bound), {@code replica.socket.receive.buffer.bytes} 65536 (SO_RCVBUF; -1: the OS's).
 */
public record FetcherSettings(int maxWaitMs, int minBytes, int responseMaxBytes, int partitionMaxBytes, long backoffMs,
    int socketTimeoutMs, int connectTimeoutMs, int receiveBufferBytes)
{
    public static final FetcherSettings KAFKA_DEFAULTS = new FetcherSettings(500, 1, 10 * 1024 * 1024, 1024 * 1024, 1000,
        30_000, 10_000, 65_536);

    /** The defaults with the broker's {@code replica.*} and {@code socket.connection.setup.timeout.ms} values. */
    public static FetcherSettings of(final BrokerConfig config)
    {
        return new FetcherSettings(KAFKA_DEFAULTS.maxWaitMs, KAFKA_DEFAULTS.minBytes, KAFKA_DEFAULTS.responseMaxBytes,
            KAFKA_DEFAULTS.partitionMaxBytes, config.getInt(BrokerConfig.REPLICA_FETCH_BACKOFF_MS),
            config.getInt(BrokerConfig.REPLICA_SOCKET_TIMEOUT_MS), (int)Math.min(Integer.MAX_VALUE, config.getLong(BrokerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS)),
            config.getInt(BrokerConfig.REPLICA_SOCKET_RECEIVE_BUFFER_BYTES));
    }
}
