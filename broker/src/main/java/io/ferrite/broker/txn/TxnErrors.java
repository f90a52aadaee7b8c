package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;

/** The error translations around the coordinator's rules: by request version, and of a failed {@code __transaction_state} write. */
public final class TxnErrors
{
    private TxnErrors()
    {
    }

    /** InitProducerId before v4 knows no PRODUCER_FENCED: INVALID_PRODUCER_EPOCH instead. */
    public static short forInitProducerId(final short error, final short version)
    {
        return version < 4 && error == Errors.PRODUCER_FENCED ? Errors.INVALID_PRODUCER_EPOCH : error;
    }

    /** AddPartitionsToTxn, AddOffsetsToTxn and EndTxn before v2 know no PRODUCER_FENCED: INVALID_PRODUCER_EPOCH instead. */
    public static short forTxnRequest(final short error, final short version)
    {
        return version < 2 && error == Errors.PRODUCER_FENCED ? Errors.INVALID_PRODUCER_EPOCH : error;
    }

    /** The client's {@code transaction.version} an AddPartitionsToTxn version implies: v4+ (sent by a broker for a TV2 produce) 2, else 0. */
    public static short addPartitionsClientVersion(final short version)
    {
        return (short)(version > 3 ? 2 : 0);
    }

    /** The client's {@code transaction.version} an EndTxn version implies: v5+ 2, else 0. */
    public static short endTxnClientVersion(final short version)
    {
        return (short)(version > 4 ? 2 : 0);
    }

    /** What a request whose {@code __transaction_state} write failed with {@code error} (Kafka's code) answers. */
    public static short ofAppend(final short error)
    {
        switch (error)
        {
            case Errors.UNKNOWN_TOPIC_OR_PARTITION:
            case Errors.NOT_ENOUGH_REPLICAS:
            case Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
            case Errors.REQUEST_TIMED_OUT:
                return Errors.COORDINATOR_NOT_AVAILABLE;
            case Errors.NOT_LEADER_OR_FOLLOWER:
            case Errors.KAFKA_STORAGE_ERROR:
                return Errors.NOT_COORDINATOR;
            case Errors.MESSAGE_TOO_LARGE:
            case Errors.RECORD_LIST_TOO_LARGE:
                return Errors.UNKNOWN_SERVER_ERROR;
            default:
                return error;
        }
    }
}
