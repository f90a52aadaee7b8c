package io.ferrite.broker.txn;

/**
 * Where the transaction coordinator sends a marker for a partition: this node's own log ({@link Route#LOCAL}, always
 * alone), the partition's leader on another node (a WriteTxnMarkers over {@link RemoteMarkers}, as Kafka's
 * TransactionMarkerChannelManager sends it to each partition's current leader), nowhere yet ({@link Route#NO_LEADER}:
 * tried again after a backoff, the leader looked up again then), or nowhere ({@link Route#GONE}: its topic was
 * deleted, the partition is dropped from the job as Kafka does). Called on the coordinators' agent.
 */
@FunctionalInterface
public interface MarkerRouting
{
    /** A single node: every partition is this node's. */
    MarkerRouting ALONE = (topic, partition) -> Route.LOCAL;

    /** The route of a marker to {@code topic}'s {@code partition} now. */
    Route route(String topic, int partition);

    /** A leader on another node, or one of the constants (compared by identity). */
    record Route(int nodeId, String host, int port)
    {
        public static final Route LOCAL = new Route(-1, "local", -1);
        public static final Route NO_LEADER = new Route(-1, "no leader", -1);
        public static final Route GONE = new Route(-1, "gone", -1);
    }
}
