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
    private static final long NOW = 1_000_000;
    private final AppendResult result = new AppendResult();

    @Test
    void theFirstFailureInARowAndTheSuccessAfterItAreLoggedTheRepeatsOnlyCounted()
    {
        final RepeatedWriteFailures failures = new RepeatedWriteFailures();
        assertFalse(failures.written("__transaction_state", "transactional id", "tx", Errors.NONE, result, NOW), "a success: nothing");
        assertTrue(failures.written("__transaction_state", "transactional id", "tx", Errors.KAFKA_STORAGE_ERROR, result, NOW));
        for (int i = 0; i < 5; i++)
        {
            assertFalse(failures.written("__transaction_state", "transactional id", "tx", Errors.KAFKA_STORAGE_ERROR, result, NOW));
        }
        assertTrue(failures.written("__transaction_state", "transactional id", "other", Errors.KAFKA_STORAGE_ERROR, result, NOW),
            "another key's first failure");
        assertTrue(failures.written("__transaction_state", "transactional id", "tx", Errors.NONE, result, NOW), "the success after them");
        assertEquals(1, failures.failingKeys());
        assertTrue(failures.written("__transaction_state", "transactional id", "tx", Errors.KAFKA_STORAGE_ERROR, result, NOW),
            "a new run of failures is logged again");
    }

    @Test
    void pastTheKeysItFollowsAFailureIsLoggedEachTime()
    {
        final RepeatedWriteFailures failures = new RepeatedWriteFailures();
        for (int i = 0; i < RepeatedWriteFailures.MAX_KEYS; i++)
        {
            assertTrue(failures.written("__consumer_offsets", "group", "g" + i, Errors.KAFKA_STORAGE_ERROR, result, NOW));
        }
        assertTrue(failures.written("__consumer_offsets", "group", "one-too-many", Errors.KAFKA_STORAGE_ERROR, result, NOW));
        assertTrue(failures.written("__consumer_offsets", "group", "one-too-many", Errors.KAFKA_STORAGE_ERROR, result, NOW),
            "not followed: logged again rather than the map grown");
        assertEquals(RepeatedWriteFailures.MAX_KEYS, failures.failingKeys());
    }

    @Test
    void aKeyNotTriedAgainIsForgottenOnceItsLastFailureIsOld()
    {
        final RepeatedWriteFailures failures = new RepeatedWriteFailures();
        assertTrue(failures.written("__consumer_offsets", "group", "deleted", Errors.KAFKA_STORAGE_ERROR, result, NOW));
        assertTrue(failures.written("__consumer_offsets", "group", "retried", Errors.KAFKA_STORAGE_ERROR, result, NOW));
        final long later = NOW + RepeatedWriteFailures.FORGET_AFTER_MS - 1;
        assertFalse(failures.written("__consumer_offsets", "group", "retried", Errors.KAFKA_STORAGE_ERROR, result, later));
        assertEquals(2, failures.failingKeys(), "nothing old enough yet");

        assertFalse(failures.written("__transaction_state", "transactional id", "tx", Errors.NONE, result,
            NOW + RepeatedWriteFailures.FORGET_AFTER_MS), "another key's success");
        assertEquals(1, failures.failingKeys(), "the key never written again is forgotten; the one retried since stays");
        assertTrue(failures.written("__consumer_offsets", "group", "deleted", Errors.KAFKA_STORAGE_ERROR, result,
            NOW + RepeatedWriteFailures.FORGET_AFTER_MS), "a forgotten key's next failure is logged anew");
        assertTrue(failures.written("__consumer_offsets", "group", "retried", Errors.NONE, result,
            NOW + RepeatedWriteFailures.FORGET_AFTER_MS), "the retried key's success is logged with its count");
    }
}
