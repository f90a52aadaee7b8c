package io.ferrite.client;

/**
 * A static member ({@code group.instance.id}) fenced: another consumer joined the group with the same instance id, and
 * the coordinator answered this one FENCED_INSTANCE_ID (a Heartbeat, a JoinGroup or a SyncGroup): thrown once by
 * {@link Consumer#poll}, its partitions lost ({@link RebalanceListener#onLost}), and the next {@code poll} joins again
 * with the same instance id (fencing the other in turn), as a kafka-clients 4.4 consumer does
 * ({@code GroupMembershipInteropContract} runs one to show it). A commit so answered fails with the same code
 * ({@link OffsetCommitException#errorCode()}) and ends nothing: the next Heartbeat's answer does, as kafka-clients.
 */
public final class FencedInstanceIdException extends ConsumerException
{
    private static final long serialVersionUID = 1L;

    FencedInstanceIdException(final String message)
    {
        super(null, -1, GroupMembership.FENCED_INSTANCE_ID, message);
    }
}
