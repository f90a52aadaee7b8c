package io.ferrite.broker.quota;

/**
 * The quota keys Kafka 4.4 accepts per kind of entity ({@code QuotaConfig}): a user, a client id or both take the byte
 * rates, {@code request_percentage} and {@code controller_mutation_rate}; an IP address takes
 * {@code connection_creation_rate}. Which of them Ferrite enforces: {@link ClientQuotas}.
 */
public final class QuotaKeys
{
    public static final String PRODUCER_BYTE_RATE = "producer_byte_rate";
    public static final String CONSUMER_BYTE_RATE = "consumer_byte_rate";
    public static final String REQUEST_PERCENTAGE = "request_percentage";
    public static final String CONTROLLER_MUTATION_RATE = "controller_mutation_rate";
    public static final String CONNECTION_CREATION_RATE = "connection_creation_rate";

    /** A key's type in Kafka's config definition, which decides what values it takes. */
    public enum Type
    {
        INT, LONG, DOUBLE
    }

    private QuotaKeys()
    {
    }

    /** The type of {@code key} on {@code entity}, or null: not a key of that kind of entity. */
    static Type type(final QuotaEntity entity, final String key)
    {
        if (entity.hasIp())
        {
            return CONNECTION_CREATION_RATE.equals(key) ? Type.INT : null;
        }
        switch (key)
        {
            case PRODUCER_BYTE_RATE:
            case CONSUMER_BYTE_RATE:
                return Type.LONG;
            case REQUEST_PERCENTAGE:
            case CONTROLLER_MUTATION_RATE:
                return Type.DOUBLE;
            default:
                return null;
        }
    }
}
