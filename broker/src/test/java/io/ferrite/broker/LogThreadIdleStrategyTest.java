package io.ferrite.broker;

import io.ferrite.broker.config.BrokerConfig;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What {@code ferrite.idle.strategy} gives a log thread. Neither parking strategy yields: a log thread that yields
 * stays runnable behind a busy thread for a scheduler slice, and a command handed over meanwhile waits it out
 * (jmh-results/profiles.md, "Issue 13": a produce waited behind the log cleaner). Agrona's strategies say their
 * parameters in {@code toString}, which is what is compared.
 */
class LogThreadIdleStrategyTest
{
    @Test
    void theDefaultSpinsThenParksWithoutYielding()
    {
        final String configured = BrokerConfig.of(Map.of()).getString(BrokerConfig.IDLE_STRATEGY);
        assertEquals("backoff", configured);
        assertEquals("BackoffIdleStrategy{alias=backoff, maxSpins=100, maxYields=0, minParkPeriodNs=1000, maxParkPeriodNs=1000000}",
            Broker.idleStrategy(configured).toString());
    }

    @Test
    void parkSpinsThenParksTenMillisecondsWithoutYielding()
    {
        assertEquals("BackoffIdleStrategy{alias=backoff, maxSpins=100, maxYields=0, minParkPeriodNs=10000000, maxParkPeriodNs=10000000}",
            Broker.idleStrategy("park").toString());
    }
}
