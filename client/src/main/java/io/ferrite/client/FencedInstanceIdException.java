package io.ferrite.client;

/**
 * A static member ({@code group.instance.id}) fenced: another consumer joined the group with the same instance id, and
 * the coordinator answered this one FENCED_INSTANCE_ID (a Heartbeat, a commit, a JoinGroup or a SyncGroup). Fatal, as
 * kafka-clients' {@code FencedInstanceIdException}: thrown once by {@link Consumer#poll}, the membership stopped (its
 * partitions lost, {@link RebalanceListener#onLost}); the member does not join again unless the application subscribes
 * again. A commit so answered fails with the same code ({@link OffsetCommitException#errorCode()}).
 */
public final class FencedInstanceIdException extends ConsumerException
{
    private static final long serialVersionUID = 1L;

    FencedInstanceIdException(final String message)
    {
        super(null, -1, GroupMembership.FENCED_INSTANCE_ID, message);
    }
}
