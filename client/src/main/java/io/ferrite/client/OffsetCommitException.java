package io.ferrite.client;

/**
 * An offset commit or a committed-offset lookup that failed ({@link Consumer#commitSync}, {@link Consumer#committed}):
 * Kafka's error code ({@link #errorCode()}) or REQUEST_TIMED_OUT when the time given ran out with retriable errors.
 * UNKNOWN_MEMBER_ID and ILLEGAL_GENERATION are kafka-clients' {@code CommitFailedException}: the group has members,
 * and a consumer outside it (manual assignment, no generation) may not commit for it.
 */
public final class OffsetCommitException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final short errorCode;

    OffsetCommitException(final short errorCode, final String message)
    {
        super(message);
        this.errorCode = errorCode;
    }

    public short errorCode()
    {
        return errorCode;
    }

    static OffsetCommitException of(final String groupId, final short errorCode)
    {
        switch (errorCode)
        {
            case ClientErrors.UNKNOWN_MEMBER_ID:
            case ClientErrors.ILLEGAL_GENERATION:
                return new OffsetCommitException(errorCode, "Group " + groupId + " has members (error " + errorCode +
                    "): a consumer outside the group (assign(), no generation) cannot commit offsets for it");
            default:
                return new OffsetCommitException(errorCode, "Offsets of group " + groupId + " failed with error code " +
                    errorCode);
        }
    }
}
