package io.ferrite.broker.config;

import io.ferrite.log.config.ConfigException;

/**
 * Kafka 4.4's start-up checks between the follower's settings ({@code KafkaConfig.validateValues}): a fetch
 * that waits at the leader longer than the socket timeout would time out on every quiet partition, and one
 * that waits longer than {@code replica.lag.time.max.ms} would move the ISR for nothing. Kafka's messages.
 */
final class ReplicaChecks
{
    private ReplicaChecks()
    {
    }

    static void check(final BrokerConfig config)
    {
        final int waitMs = config.getInt(BrokerConfig.REPLICA_FETCH_WAIT_MAX_MS);
        final int socketTimeoutMs = config.getInt(BrokerConfig.REPLICA_SOCKET_TIMEOUT_MS);
        if (waitMs > socketTimeoutMs)
        {
            throw new ConfigException(BrokerConfig.REPLICA_SOCKET_TIMEOUT_MS + " should always be at least "
                + BrokerConfig.REPLICA_FETCH_WAIT_MAX_MS + " to prevent unnecessary socket timeouts (" + socketTimeoutMs
                + " < " + waitMs + ")");
        }
        if (waitMs > config.getLong(BrokerConfig.REPLICA_LAG_TIME_MAX_MS))
        {
            throw new ConfigException(BrokerConfig.REPLICA_FETCH_WAIT_MAX_MS + " should always be less than or equal to "
                + BrokerConfig.REPLICA_LAG_TIME_MAX_MS + " to prevent frequent changes in ISR");
        }
    }
}
