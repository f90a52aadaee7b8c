package io.ferrite.client;

/**
 * Error codes: Kafka's (the ones the producer acts on, with the retriable classification of
 * kafka-clients' {@code Errors}: a code is retriable where Kafka's exception is a
 * {@code RetriableException}), and the client's own from 1000, outside Kafka's range.
 */
public final class ClientErrors
{
    public static final short NONE = 0;
    public static final short UNKNOWN_SERVER_ERROR = -1;
    public static final short OFFSET_OUT_OF_RANGE = 1;
    public static final short CORRUPT_MESSAGE = 2;
    public static final short UNKNOWN_TOPIC_OR_PARTITION = 3;
    public static final short LEADER_NOT_AVAILABLE = 5;
    public static final short NOT_LEADER_OR_FOLLOWER = 6;
    public static final short REQUEST_TIMED_OUT = 7;
    public static final short MESSAGE_TOO_LARGE = 10;
    public static final short NETWORK_EXCEPTION = 13;
    public static final short COORDINATOR_LOAD_IN_PROGRESS = 14;
    public static final short COORDINATOR_NOT_AVAILABLE = 15;
    public static final short NOT_COORDINATOR = 16;
    public static final short INVALID_TOPIC_EXCEPTION = 17;
    public static final short NOT_ENOUGH_REPLICAS = 19;
    public static final short ILLEGAL_GENERATION = 22;
    public static final short UNKNOWN_MEMBER_ID = 25;
    public static final short REBALANCE_IN_PROGRESS = 27;
    public static final short GROUP_AUTHORIZATION_FAILED = 30;
    public static final short NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20;
    public static final short INVALID_REQUIRED_ACKS = 21;
    public static final short CLUSTER_AUTHORIZATION_FAILED = 31;
    /** A record's timestamp outside the topic's {@code message.timestamp.before/after.max.ms}: not retriable. */
    public static final short INVALID_TIMESTAMP = 32;
    public static final short DUPLICATE_SEQUENCE_NUMBER = 34;
    public static final short UNSUPPORTED_VERSION = 35;
    public static final short OUT_OF_ORDER_SEQUENCE_NUMBER = 45;
    public static final short INVALID_PRODUCER_EPOCH = 47;
    public static final short INVALID_PRODUCER_ID_MAPPING = 49;
    public static final short CONCURRENT_TRANSACTIONS = 51;
    public static final short TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53;
    public static final short KAFKA_STORAGE_ERROR = 56;
    public static final short FENCED_LEADER_EPOCH = 74;
    public static final short UNKNOWN_LEADER_EPOCH = 75;
    public static final short UNKNOWN_PRODUCER_ID = 59;
    public static final short PRODUCER_FENCED = 90;
    public static final short UNSTABLE_OFFSET_COMMIT = 88;
    public static final short UNKNOWN_TOPIC_ID = 100;

    /** The producer was closed before the record was acknowledged. */
    public static final short CLIENT_CLOSED = 1000;
    /** The record was not acknowledged within {@code delivery.timeout.ms}, retries included. */
    public static final short DELIVERY_TIMEOUT = 1001;
    /** The consumer: a partition has no position and {@code auto.offset.reset} is none (kafka-clients' NoOffsetForPartitionException). */
    public static final short NO_OFFSET_FOR_PARTITION = 1002;

    private ClientErrors()
    {
    }

    /** As kafka-clients: the errors whose exception is a {@code RetriableException}, of those the two clients meet. */
    public static boolean retriable(final short code)
    {
        switch (code)
        {
            case CORRUPT_MESSAGE:
            case UNKNOWN_TOPIC_OR_PARTITION:
            case LEADER_NOT_AVAILABLE:
            case NOT_LEADER_OR_FOLLOWER:
            case REQUEST_TIMED_OUT:
            case NETWORK_EXCEPTION:
            case COORDINATOR_LOAD_IN_PROGRESS:
            case COORDINATOR_NOT_AVAILABLE:
            case NOT_COORDINATOR:
            case CONCURRENT_TRANSACTIONS:
            case NOT_ENOUGH_REPLICAS:
            case NOT_ENOUGH_REPLICAS_AFTER_APPEND:
            case KAFKA_STORAGE_ERROR:
            case FENCED_LEADER_EPOCH:
            case UNKNOWN_LEADER_EPOCH:
            case UNKNOWN_TOPIC_ID:
            case UNSTABLE_OFFSET_COMMIT:
                return true;
            default:
                return false;
        }
    }

    /**
     * The idempotent producer's fatal errors (kafka-clients' {@code TransactionManager} moves to its fatal state on
     * their exceptions): every record not yet acknowledged fails with it and later sends are refused.
     */
    public static boolean fatalForIdempotence(final short code)
    {
        switch (code)
        {
            case CLUSTER_AUTHORIZATION_FAILED:
            case TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
            case PRODUCER_FENCED:
            case UNSUPPORTED_VERSION:
            case INVALID_PRODUCER_ID_MAPPING:
                return true;
            default:
                return false;
        }
    }

    /** The errors after which the leader of a partition is looked up again (kafka-clients' {@code Sender} does the same). */
    public static boolean refreshesMetadata(final short code)
    {
        switch (code)
        {
            case UNKNOWN_TOPIC_OR_PARTITION:
            case LEADER_NOT_AVAILABLE:
            case NOT_LEADER_OR_FOLLOWER:
            case NETWORK_EXCEPTION:
            case KAFKA_STORAGE_ERROR:
            case FENCED_LEADER_EPOCH:
            case UNKNOWN_LEADER_EPOCH:
            case UNKNOWN_TOPIC_ID:
                return true;
            default:
                return false;
        }
    }
}
