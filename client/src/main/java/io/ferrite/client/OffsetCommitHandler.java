package io.ferrite.client;

/**
 * Told the outcome of {@link Consumer#commitAsync}: called once per commit on the consumer's duty-cycle thread, with
 * the application's {@code tag} and {@link ClientErrors#NONE} or the first error the commit met (Kafka's code:
 * COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS and REQUEST_TIMED_OUT are retriable, as
 * kafka-clients' {@code RetriableCommitFailedException}; UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION mean the group has
 * members, kafka-clients' {@code CommitFailedException}; or the client's CLIENT_CLOSED). No object per call.
 */
@FunctionalInterface
public interface OffsetCommitHandler
{
    void onComplete(long tag, short errorCode);
}
