package io.ferrite.broker.coordinator;

import io.ferrite.broker.Errors;
import io.ferrite.log.AppendResult;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A coordinator write retried until it succeeds is logged twice (its first failure, then its success), not once per try. */
class RepeatedWriteFailuresTest
{
    private final AppendResult result = new AppendResult();

    @Test
    void theFirstFailureInARowAndTheSuccessAfterItAreLoggedTheRepeatsOnlyCounted()
    {
        final RepeatedWriteFailures failures = new RepeatedWriteFailures();
        assertFalse(failures.written("__transaction_state", "transactional id", "tx", Errors.NONE, result), "a success: nothing");
        assertTrue(failures.written("__transaction_state", "transactional id", "tx", Errors.KAFKA_STORAGE_ERROR, result));
        for (int i = 0; i < 5; i++)
        {
            assertFalse(failures.written("__transaction_state", "transactional id", "tx", Errors.KAFKA_STORAGE_ERROR, result));
        }
        assertTrue(failures.written("__transaction_state", "transactional id", "other", Errors.KAFKA_STORAGE_ERROR, result),
            "another key's first failure");
        assertTrue(failures.written("__transaction_state", "transactional id", "tx", Errors.NONE, result), "the success after them");
        assertEquals(1, failures.failingKeys());
        assertTrue(failures.written("__transaction_state", "transactional id", "tx", Errors.KAFKA_STORAGE_ERROR, result),
            "a new run of failures is logged again");
    }

    @Test
    void pastTheKeysItFollowsAFailureIsLoggedEachTime()
    {
        final RepeatedWriteFailures failures = new RepeatedWriteFailures();
        for (int i = 0; i < RepeatedWriteFailures.MAX_KEYS; i++)
        {
            assertTrue(failures.written("__consumer_offsets", "group", "g" + i, Errors.KAFKA_STORAGE_ERROR, result));
        }
        assertTrue(failures.written("__consumer_offsets", "group", "one-too-many", Errors.KAFKA_STORAGE_ERROR, result));
        assertTrue(failures.written("__consumer_offsets", "group", "one-too-many", Errors.KAFKA_STORAGE_ERROR, result),
            "not followed: logged again rather than the map grown");
        assertEquals(RepeatedWriteFailures.MAX_KEYS, failures.failingKeys());
    }
}
