package io.ferrite.client;

/**
 * A partition the consumer cannot read: thrown once by {@link Consumer#poll} (kafka-clients throws from {@code poll}
 * too), with Kafka's error code or the client's ({@link ClientErrors}). The partition stays stopped until a seek. A
 * group membership that stopped throws it too (no partition: topic null, partition -1), or its subclass
 * {@link FencedInstanceIdException}.
 */
public class ConsumerException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final String topic;
    private final int partition;
    private final short errorCode;

    ConsumerException(final String topic, final int partition, final short errorCode, final String message)
    {
        super(message);
        this.topic = topic;
        this.partition = partition;
        this.errorCode = errorCode;
    }

    /** The exception of a group membership that stopped with {@code error}. */
    static ConsumerException membershipFailed(final short error, final String groupId, final String instanceId)
    {
        if (error == GroupMembership.FENCED_INSTANCE_ID)
        {
            return new FencedInstanceIdException("Member " + instanceId + " of group " + groupId + " was fenced " +
                "(FENCED_INSTANCE_ID): another consumer joined with the same group.instance.id; the next poll joins again");
        }
        return new ConsumerException(null, -1, error, "Group " + groupId + " membership failed with error " + error +
            ": subscribe again to retry");
    }

    public String topic()
    {
        return topic;
    }

    public int partition()
    {
        return partition;
    }

    public short errorCode()
    {
        return errorCode;
    }

    /** The message of a stopped partition's exception. */
    static String describe(final FetchPosition p)
    {
        final String tp = p.topic.name + "-" + p.partition;
        switch (p.error)
        {
            case ClientErrors.UNKNOWN_TOPIC_OR_PARTITION:
                return "Topic partition " + tp + " does not exist (UNKNOWN_TOPIC_OR_PARTITION)";
            case ClientErrors.OFFSET_OUT_OF_RANGE:
                return "Fetch position " + p.fetchOffset + " is out of range for partition " + tp +
                    " and auto.offset.reset is none (OFFSET_OUT_OF_RANGE)";
            case ClientErrors.NO_OFFSET_FOR_PARTITION:
                return "Undefined offset with no reset policy for partition " + tp + " (auto.offset.reset is none)";
            case ClientErrors.CORRUPT_MESSAGE:
                return "A record batch of partition " + tp + " at or after offset " + p.position +
                    " is corrupt (CRC, frame, compression or a malformed record; CORRUPT_MESSAGE): seek past it to go on";
            default:
                return "Partition " + tp + " stopped with error code " + p.error;
        }
    }
}
