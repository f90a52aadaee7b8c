package io.ferrite.broker.metrics;

import io.ferrite.broker.Errors;
import io.ferrite.wire.message.ApiKeys;

/**
 * The type ids of Ferrite's counters (Agrona's {@code typeId} in each counter's metadata) and the error codes counted
 * one by one. A reader (ferrite-stat now; the JMX and Prometheus bridges of issue 16 later) finds a figure by its type
 * id and its key — the network thread's index at key offset 0 (-1 for a broker-wide one), then an API key or an error
 * code (an int at 4) or a topic name (a length-prefixed UTF-8 string at 4) — and never by parsing the label. A label
 * ends with {@code " net=N"} for a counter of network thread N: the figure over the broker is the sum over N.
 */
public final class CounterTypes
{
    /**
     * Requests of a kind (key: thread, {@link RequestKinds} kind: the API key, Fetch's for consumers' fetches,
     * {@link RequestKinds#FETCH_FOLLOWER} for followers').
     */
    public static final int REQUESTS = 1001;
    /** Errors answered by an API, one per partition (Produce, Fetch) or topic (Metadata) answered with one (key: thread, API key). */
    public static final int API_ERRORS = 1002;
    /** Errors answered of one code over the APIs above (key: thread, error code; -1 for the codes not counted one by one). */
    public static final int ERROR_CODES = 1003;
    /**
     * Errors answered of one code by one kind of request (Kafka's {@code ErrorsPerSec,request=,error=}; key: thread, then
     * {@link #requestError} of the {@link RequestKinds} kind and the code; the kinds of {@link #ERROR_KINDS} only).
     */
    public static final int REQUEST_ERRORS = 1004;
    /** Records appended by produce requests (key: thread). */
    public static final int RECORDS_IN = 1010;
    /** Bytes of record batches appended by produce requests (key: thread). */
    public static final int BYTES_IN = 1011;
    // 1012 (records out) is no longer used: Kafka has no such figure, and counting it read every batch's header
    /** Bytes of record batches sent by consumers' fetch responses (key: thread). */
    public static final int BYTES_OUT = 1013;
    /** Bytes of record batches sent by followers' fetch responses (key: thread; Kafka's ReplicationBytesOutPerSec). */
    public static final int REPLICATION_BYTES_OUT = 1014;
    /** Records in, bytes in and bytes out (to consumers) per topic (key: thread, topic); 1022 is no longer used. */
    public static final int TOPIC_RECORDS_IN = 1020;
    public static final int TOPIC_BYTES_IN = 1021;
    public static final int TOPIC_BYTES_OUT = 1023;
    /** Connections a network thread took over from the acceptor (key: thread). */
    public static final int CONNECTIONS_ACCEPTED = 1030;
    /** Connections a network thread closed, for any reason (key: thread). */
    public static final int CONNECTIONS_CLOSED = 1031;
    /** Connections open on a network thread now (a gauge; key: thread). */
    public static final int CONNECTIONS_OPEN = 1032;
    /** Duty cycles of a network thread (key: thread). */
    public static final int DUTY_CYCLES = 1040;
    /**
     * A consumer group's lag on one partition, a gauge: the partition's high watermark minus the group's committed
     * offset (key: -1, the partition; the topic and group in the label, see {@link LagCounters}).
     */
    public static final int CONSUMER_LAG = 1050;
    /** Committed offsets whose lag has no counter (beyond {@link LagCounters#MAX}), a gauge (key: -1). */
    public static final int LAG_NOT_COUNTED = 1051;
    /** Classic groups in one state, a gauge (key: -1, the state's index in {@link GroupCounters#STATES}). */
    public static final int GROUPS = 1060;
    /** Committed offsets the coordinator holds, a gauge (key: -1; Kafka's NumOffsets, offset-count). */
    public static final int OFFSETS = 1061;
    /** Offsets committed by OffsetCommit, one per partition (key: -1; Kafka's offset-commit-count). */
    public static final int OFFSET_COMMITS = 1062;
    /** Offsets expired by offsets.retention.minutes (key: -1; Kafka's offset-expiration-count). */
    public static final int OFFSETS_EXPIRED = 1063;
    /** Offsets deleted by OffsetDelete (key: -1; Kafka's offset-deletion-count). */
    public static final int OFFSETS_DELETED = 1064;
    /** Classic groups' rebalances completed: their leader's assignment stored (key: -1; group-completed-rebalance-count). */
    public static final int REBALANCES_COMPLETED = 1065;

    /** The key's value for a code not counted one by one. */
    public static final int OTHER_CODE = -1;

    /**
     * The kinds of request whose errors are counted ({@link RequestKinds}: Produce, Fetch — every fetch, as Kafka's
     * ErrorsPerSec keeps them per API — and Metadata).
     */
    static final int[] ERROR_KINDS = {ApiKeys.PRODUCE.id, RequestKinds.FETCH_ALL, ApiKeys.METADATA.id};

    /** {@link #ERROR_KINDS} (a copy). */
    public static int[] errorKinds()
    {
        return ERROR_KINDS.clone();
    }

    /** A {@link #REQUEST_ERRORS} counter's key value: the kind in the high 16 bits, the code in the low 16. */
    public static int requestError(final int kind, final int code)
    {
        return kind << 16 | (code & 0xFFFF);
    }

    /** The kind of a {@link #REQUEST_ERRORS} key value. */
    public static int errorKind(final int key)
    {
        return key >>> 16;
    }

    /** The error code of a {@link #REQUEST_ERRORS} key value ({@link #OTHER_CODE} for the others). */
    public static int errorCode(final int key)
    {
        return (short)key;
    }

    /**
     * The error codes counted one by one: what a client of produce, fetch or metadata meets when a topic is missing or
     * moved, a batch is refused, or a disk fails. Every other code goes to one "other" counter.
     */
    static final short[] COUNTED_CODES = {
        Errors.OFFSET_OUT_OF_RANGE, Errors.CORRUPT_MESSAGE, Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_LEADER_OR_FOLLOWER,
        Errors.REQUEST_TIMED_OUT, Errors.MESSAGE_TOO_LARGE, Errors.INVALID_TOPIC_EXCEPTION, Errors.RECORD_LIST_TOO_LARGE,
        Errors.NOT_ENOUGH_REPLICAS, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER,
        Errors.INVALID_PRODUCER_EPOCH, Errors.KAFKA_STORAGE_ERROR, Errors.FENCED_LEADER_EPOCH, Errors.UNKNOWN_LEADER_EPOCH,
        Errors.INVALID_RECORD, Errors.UNKNOWN_TOPIC_ID};
    /** Kafka's names of {@link #COUNTED_CODES}, in the same order. */
    static final String[] COUNTED_NAMES = {
        "OFFSET_OUT_OF_RANGE", "CORRUPT_MESSAGE", "UNKNOWN_TOPIC_OR_PARTITION", "NOT_LEADER_OR_FOLLOWER",
        "REQUEST_TIMED_OUT", "MESSAGE_TOO_LARGE", "INVALID_TOPIC_EXCEPTION", "RECORD_LIST_TOO_LARGE",
        "NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND", "OUT_OF_ORDER_SEQUENCE_NUMBER",
        "INVALID_PRODUCER_EPOCH", "KAFKA_STORAGE_ERROR", "FENCED_LEADER_EPOCH", "UNKNOWN_LEADER_EPOCH",
        "INVALID_RECORD", "UNKNOWN_TOPIC_ID"};

    /** Kafka's name of error {@code code} if it is one of {@link #COUNTED_CODES}, else null. */
    public static String countedName(final int code)
    {
        for (int i = 0; i < COUNTED_CODES.length; i++)
        {
            if (COUNTED_CODES[i] == code)
            {
                return COUNTED_NAMES[i];
            }
        }
        return null;
    }

    private CounterTypes()
    {
    }
}
