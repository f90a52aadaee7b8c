package io.ferrite.broker.txn;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The retry schedule of the transaction coordinator's markers and Complete* records: growing, capped, the first failure flagged. */
class RetryBackoffTest
{
    @Test
    void theDelayDoublesFromOneTickAndStopsAtTheCap()
    {
        final List<Long> delays = new ArrayList<>();
        for (int failures = 1; failures <= 10; failures++)
        {
            delays.add(RetryBackoff.delayMs(failures));
        }
        assertEquals(List.of(50L, 100L, 200L, 400L, 800L, 1600L, 3200L, 5000L, 5000L, 5000L), delays);
        assertEquals(RetryBackoff.MAX_MS, RetryBackoff.delayMs(Integer.MAX_VALUE), "no overflow after many failures");
    }

    @Test
    void aRetryIsDueAtItsDelayTakenOnceAndOnlyTheFirstFailureInARowIsFlagged()
    {
        final RetryBackoff backoff = new RetryBackoff();
        assertFalse(backoff.take(1_000), "nothing failed: nothing to retry");
        assertTrue(backoff.failed(1_000), "the first failure: logged");
        assertFalse(backoff.take(1_049), "before its 50 ms");
        assertTrue(backoff.take(1_050));
        assertFalse(backoff.take(1_050), "taken: on its way, not sent twice");
        assertFalse(backoff.failed(1_060), "a repeat: not logged");
        assertFalse(backoff.take(1_159), "the second retry waits 100 ms");
        assertTrue(backoff.take(1_160));
        for (int i = 0; i < 20; i++)
        {
            assertFalse(backoff.failed(2_000));
            assertTrue(backoff.take(backoff.dueMs()));
        }
        assertEquals(22, backoff.failures());
        assertEquals(2_000 + RetryBackoff.MAX_MS, backoff.dueMs(), "capped");
    }
}
