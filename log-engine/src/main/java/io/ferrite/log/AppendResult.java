package io.ferrite.log;

/**
 * The outcome of one append, reused by its caller (no allocation per append). {@link #status} is
 * {@link #OK}, {@link #DUPLICATE} (an idempotent retry: the original offsets are given and nothing
 * was appended) or one of the negative error codes, which the broker maps to Kafka's errors.
 */
public final class AppendResult
{
    public static final int OK = 0;
    public static final int DUPLICATE = 1;
    /** The batch's frame or CRC is wrong (CORRUPT_MESSAGE). */
    public static final int CORRUPT_MESSAGE = -1;
    /** Larger than max.message.bytes (MESSAGE_TOO_LARGE). */
    public static final int RECORD_TOO_LARGE = -2;
    /** A magic other than 2 (UNSUPPORTED_FOR_MESSAGE_FORMAT). */
    public static final int UNSUPPORTED_MAGIC = -3;
    /** Well-formed but not acceptable: a control batch from a client, offsets out of order, more than one batch (INVALID_RECORD). */
    public static final int INVALID_RECORD = -4;
    /** A record timestamp outside message.timestamp.before/after.max.ms (INVALID_TIMESTAMP). */
    public static final int INVALID_TIMESTAMP = -5;
    /** An epoch older than the producer's current one, or a marker's breaking the epoch rules (INVALID_PRODUCER_EPOCH). */
    public static final int INVALID_PRODUCER_EPOCH = -6;
    /** A sequence that does not follow the producer's last one (OUT_OF_ORDER_SEQUENCE_NUMBER). */
    public static final int OUT_OF_ORDER_SEQUENCE = -7;
    /** The disk refused the write (KAFKA_STORAGE_ERROR); the log is unchanged. */
    public static final int STORAGE_ERROR = -8;
    /** The log is closed or offline (KAFKA_STORAGE_ERROR / NOT_LEADER...). */
    public static final int LOG_CLOSED = -9;
    /**
     * A non-transactional batch from a producer whose transaction is open on the partition
     * (INVALID_TXN_STATE, Kafka's {@code ProducerAppendInfo.appendDataBatch}).
     */
    public static final int INVALID_TXN_STATE = -10;
    /** A marker whose coordinator epoch is older than the producer's last one (TRANSACTION_COORDINATOR_FENCED). */
    public static final int TRANSACTION_COORDINATOR_FENCED = -11;
    /**
     * Not appended: a transactional batch that would open its producer's transaction must first be
     * verified with the transaction coordinator, then appended again with {@link #verificationGuard}
     * (see {@link LogTransactions#append}).
     */
    public static final int VERIFICATION_NEEDED = -12;
    /**
     * A follower's append ({@link PartitionLog#appendAsFollower}) whose first batch starts below the log end:
     * Kafka 4.4's {@code UnexpectedAppendOffsetException}. Nothing was appended.
     */
    public static final int UNEXPECTED_APPEND_OFFSET = -13;
    /**
     * A follower's append whose batches' offsets do not increase (a batch's last offset not above the one
     * before's, or its base not above it): Kafka 4.4's {@code OffsetsOutOfOrderException}. Nothing was appended.
     */
    public static final int OFFSETS_OUT_OF_ORDER = -14;

    public int status;
    public long firstOffset;
    public long lastOffset;
    /** The LogAppendTime set on the batch, or -1 (CreateTime). */
    public long logAppendTime;
    public long logStartOffset;
    /** For INVALID_TIMESTAMP and INVALID_RECORD: the index of the first bad record, else -1. */
    public int recordIndex;
    /** For {@link #VERIFICATION_NEEDED}: what the batch's next append passes as its verification. */
    public long verificationGuard;
    /**
     * For a marker refused {@link #INVALID_PRODUCER_EPOCH} or {@link #TRANSACTION_COORDINATOR_FENCED} only
     * (set with that status, stale otherwise): the first offset of the producer's transaction still open on
     * the partition, or -1 when none is (the marker is moot: nothing of the producer waits for it). Read on
     * the writer in the same step as the refusal, so nothing came in between.
     */
    public long refusedMarkerOpenTxnFirstOffset;
    /** With {@link #refusedMarkerOpenTxnFirstOffset}: the coordinator epoch the partition knows for the producer (-1: none). */
    public int refusedMarkerCoordinatorEpoch;
    /** Detail for errors (only allocated on the error path). */
    public String message;

    void reset()
    {
        status = OK;
        firstOffset = -1;
        lastOffset = -1;
        logAppendTime = -1;
        logStartOffset = -1;
        recordIndex = -1;
        message = null;
    }

    AppendResult fail(final int status, final String message)
    {
        this.status = status;
        this.message = message;
        return this;
    }

    public boolean succeeded()
    {
        return status >= 0;
    }

    @Override
    public String toString()
    {
        return "AppendResult(status=" + status + ", offsets " + firstOffset + ".." + lastOffset +
            (message != null ? ", " + message : "") + ")";
    }
}
