package io.ferrite.client;

/**
 * A static member ({@code group.instance.id}) fenced: another consumer joined the group with the same instance id, and
 * the coordinator answered this one FENCED_INSTANCE_ID (a Heartbeat, a JoinGroup or a SyncGroup): thrown once by
 * {@link Consumer#poll}, its partitions lost ({@link RebalanceListener#onLost}), and the next {@code poll} joins again
 * with the same instance id (fencing the other in turn), as a kafka-clients 4.4 consumer did in most runs of
 * {@code GroupMembershipInteropContract} (in one against Kafka 4.4 it threw at every poll instead). A commit so answered fails with the same code
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
