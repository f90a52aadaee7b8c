package io.ferrite.broker.replica;

/**
 * The answers of an acks=all append that replication gives, in the log engine's status field
 * ({@code AppendResult.status}, whose own codes are 1 to -12: these are far from them), so that
 * every sender of a command — the produce, and the coordinators, which read that field only — sees
 * a failure. Mapped to Kafka's errors by {@code Errors.ofAppend}.
 */
public final class ReplicaStatus
{
    /** The ISR was below min.insync.replicas before the append: nothing appended (Kafka's NOT_ENOUGH_REPLICAS). */
    public static final int NOT_ENOUGH_REPLICAS = -101;
    /** Appended and committed, but the ISR shrank below min.insync.replicas meanwhile (NOT_ENOUGH_REPLICAS_AFTER_APPEND). */
    public static final int NOT_ENOUGH_REPLICAS_AFTER_APPEND = -102;
    /** Appended, but the high watermark did not pass it within the request's timeout (REQUEST_TIMED_OUT). */
    public static final int TIMED_OUT = -103;
    /** The partition is followed here: the leader takes its produce (NOT_LEADER_OR_FOLLOWER). */
    public static final int NOT_LEADER = -104;

    private ReplicaStatus()
    {
    }
}
