package io.ferrite.client;

/**
 * A partition the consumer cannot read: thrown once by {@link Consumer#poll} (kafka-clients throws from {@code poll}
 * too), with Kafka's error code or the client's ({@link ClientErrors}). The partition stays stopped until a seek.
 */
public final class ConsumerException extends RuntimeException
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
}
