package io.ferrite.broker.cluster;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.txn.RemoteVerifier;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The leader's retries of a produce's add answered CONCURRENT_TRANSACTIONS, as cluster mode reads them from the broker's
 * settings for its {@link RemoteVerifier} (review M1): {@code add.partitions.to.txn.retry.backoff.ms} is the backoff,
 * {@code add.partitions.to.txn.retry.backoff.max.ms} the bound, and the bound is at most Kafka's broker
 * {@code request.timeout.ms} (30 s), as Kafka 4.4's {@code ReplicaManager.handleProduceAppend} takes
 * {@code min(addPartitionsToTxnRetryBackoffMaxMs, requestTimeoutMs)}; unset, Kafka's defaults (20 and 100).
 */
class ClusterModeRetriesTest
{
    @Test
    void theBackoffAndTheBoundAreTheTwoSettingsTheBoundAtMostTheRequestTimeout()
    {
        assertEquals(new RemoteVerifier.Retries(20, 100), ClusterMode.retries(BrokerConfig.of(Map.of())), "Kafka's defaults");
        assertEquals(new RemoteVerifier.Retries(7, 250), retries("7", "250"), "backoff 7 ms, asked again for 250 ms");
        assertEquals(new RemoteVerifier.Retries(1, 0), retries("1", "0"), "a bound of 0: answered at the first answer");
        assertEquals(new RemoteVerifier.Retries(20, 30_000), retries("20", "30000"), "the bound at request.timeout.ms");
        assertEquals(new RemoteVerifier.Retries(20, 30_000), retries("20", "600000"), "a longer bound cut to request.timeout.ms");
    }

    private static RemoteVerifier.Retries retries(final String backoffMs, final String maxMs)
    {
        return ClusterMode.retries(BrokerConfig.of(Map.of(BrokerConfig.ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MS, backoffMs,
            BrokerConfig.ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MAX_MS, maxMs)));
    }
}
