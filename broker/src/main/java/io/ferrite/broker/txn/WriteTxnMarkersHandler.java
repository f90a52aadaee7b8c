package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.api.PartitionLookup;
import io.ferrite.broker.coordinator.CoordinatorAgent;
import io.ferrite.broker.coordinator.CoordinatorApiHandler;
import io.ferrite.broker.coordinator.CoordinatorCall;
import io.ferrite.broker.coordinator.CoordinatorLog;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.WriteTxnMarkersRequestDecoder;
import io.ferrite.wire.message.WriteTxnMarkersResponseEncoder;
import org.agrona.MutableDirectBuffer;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * WriteTxnMarkers sent by a client (kafka-transactions.sh abort, Admin.abortTransaction): per marker
 * and partition, a COMMIT or ABORT control batch of the producer's transaction, appended by the
 * partition's log thread — sent through the coordinators' agent with {@link CoordinatorLog#writeMarker},
 * the path the transaction coordinator's own markers take, so the marker is answered like an append at
 * acks=all (in fsync durability once the fsync covers it). The request's TransactionVersion (v2; 0 in v1)
 * picks the epoch rule: 2 and up, the marker's epoch must be above the producer's (the epoch bumped
 * at the end of each transaction), else at least its epoch. Each partition is answered with its log's
 * error (INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED, ...), an unknown one with
 * UNKNOWN_TOPIC_OR_PARTITION; the response goes once every marker is answered.
 *
 * <p>A marker to {@code __consumer_offsets} also ends the transaction's offsets pending in the group
 * coordinator, as Kafka's does: {@link CoordinatorLog} tells it of every marker appended.
 *
 * <p>With an authorizer, the request needs CLUSTER_ACTION on the cluster (a broker's right, as in Kafka 4.4): without it
 * every partition of every marker is answered CLUSTER_AUTHORIZATION_FAILED and nothing is written.
 */
final class WriteTxnMarkersHandler extends CoordinatorApiHandler<CoordinatorLog, WriteTxnMarkersRequestDecoder>
{
    /** The first version whose TransactionVersion 2 bumps the epoch at each marker. */
    private static final int EPOCH_BUMP_VERSION = 2;

    private final TopicRegistry topics;
    private final WriteTxnMarkersResponseEncoder response = new WriteTxnMarkersResponseEncoder();

    WriteTxnMarkersHandler(final CoordinatorLog log, final CoordinatorAgent agent, final TopicRegistry topics,
        final Runnable waker)
    {
        super(log, agent, waker, new WriteTxnMarkersRequestDecoder());
        this.topics = topics;
    }

    @Override
    protected int handle(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final WriteTxnMarkersRequestDecoder.WritableTxnMarker m = request.markers();
        final Marker[] markers = new Marker[m.elementCount()];
        for (int i = 0; m.hasNext(); i++)
        {
            m.next();
            final WriteTxnMarkersRequestDecoder.WritableTxnMarkerTopic t = m.topics();
            final Marker marker = new Marker(m.producerId(), m.producerEpoch(), m.coordinatorEpoch(), m.transactionResult(),
                m.transactionVersion() >= EPOCH_BUMP_VERSION, t.elementCount());
            markers[i] = marker;
            for (int j = 0; t.hasNext(); j++)
            {
                t.next();
                final String name = t.name();
                final Topic topic = topics.topic(name);
                final int count = t.partitionIndexesCount();
                marker.names[j] = name;
                marker.indexes[j] = new int[count];
                marker.partitions[j] = new Partition[count];
                marker.errors[j] = new short[count];
                for (int k = 0; k < count; k++)
                {
                    final int index = t.partitionIndexes(k);
                    marker.indexes[j][k] = index;
                    marker.partitions[j][k] = PartitionLookup.partition(topic, index);
                    marker.errors[j][k] = marker.partitions[j][k] == null ? PartitionLookup.notFound(topic, false) : Errors.NONE;
                }
            }
        }
        final Appends appends = new Appends(markers);
        if (!Access.cluster(connection, AclCodes.CLUSTER_ACTION)) // a broker's request: refused whole, as Kafka's
        {
            for (final Marker marker : markers)
            {
                for (final short[] errors : marker.errors)
                {
                    Arrays.fill(errors, Errors.CLUSTER_AUTHORIZATION_FAILED);
                }
            }
            return write(out, outOffset, version, appends, Errors.NONE);
        }
        return submit(connection, out, outOffset, (log, now) -> appends.send(log), (o, at, done) -> write(o, at, version, done, Errors.NONE),
            (o, at, error) -> write(o, at, version, appends, error));
    }

    /**
     * The answer as Kafka's: one entry per producer id of the request (in the order they first appear),
     * with every topic and partition of its markers, each partition once (a later marker's answer for
     * the same partition replaces the earlier, as Kafka's error map per producer id does).
     */
    private int write(final MutableDirectBuffer out, final int outOffset, final short version, final Appends appends, final short refused)
    {
        final Map<Long, Map<String, Map<Integer, Short>>> byProducer = new LinkedHashMap<>();
        for (final Marker marker : appends.markers)
        {
            final Map<String, Map<Integer, Short>> byTopic = byProducer.computeIfAbsent(marker.producerId, id -> new LinkedHashMap<>());
            for (int j = 0; j < marker.names.length; j++)
            {
                final Map<Integer, Short> byIndex = byTopic.computeIfAbsent(marker.names[j], name -> new LinkedHashMap<>());
                for (int k = 0; k < marker.indexes[j].length; k++)
                {
                    final boolean sent = marker.partitions[j][k] != null;
                    byIndex.put(marker.indexes[j][k], sent && refused != Errors.NONE ? refused : marker.errors[j][k]);
                }
            }
        }
        final WriteTxnMarkersResponseEncoder.WritableTxnMarkerResult r = response.wrap(out, outOffset, version).markers(byProducer.size());
        for (final Map.Entry<Long, Map<String, Map<Integer, Short>>> producer : byProducer.entrySet())
        {
            final WriteTxnMarkersResponseEncoder.WritableTxnMarkerTopicResult rt = r.next().producerId(producer.getKey())
                .topics(producer.getValue().size());
            for (final Map.Entry<String, Map<Integer, Short>> topic : producer.getValue().entrySet())
            {
                final WriteTxnMarkersResponseEncoder.WritableTxnMarkerPartitionResult rp = rt.next().name(topic.getKey())
                    .partitions(topic.getValue().size());
                topic.getValue().forEach((index, error) -> rp.next().partitionIndex(index).errorCode(error));
            }
        }
        return outOffset + response.finish();
    }

    /** One marker of the request: the partitions it goes to (null: unknown) and each one's answer. */
    private static final class Marker
    {
        final long producerId;
        final short producerEpoch;
        final int coordinatorEpoch;
        final boolean commit;
        final boolean epochBump;
        final String[] names;
        final int[][] indexes;
        final Partition[][] partitions;
        /** Written on the agent as each append is answered, read by the network thread after the call is answered. */
        final short[][] errors;

        Marker(final long producerId, final short producerEpoch, final int coordinatorEpoch, final boolean commit, final boolean epochBump,
            final int topicCount)
        {
            this.producerId = producerId;
            this.producerEpoch = producerEpoch;
            this.coordinatorEpoch = coordinatorEpoch;
            this.commit = commit;
            this.epochBump = epochBump;
            this.names = new String[topicCount];
            this.indexes = new int[topicCount][];
            this.partitions = new Partition[topicCount][];
            this.errors = new short[topicCount][];
        }
    }

    /** The request's appends, on the agent: complete once every one is answered. */
    private static final class Appends implements CoordinatorCall.Outcome
    {
        final Marker[] markers;
        /** The appends not answered yet (the agent's only). */
        int remaining;

        Appends(final Marker[] markers)
        {
            this.markers = markers;
        }

        Appends send(final CoordinatorLog log)
        {
            for (final Marker marker : markers)
            {
                for (int j = 0; j < marker.partitions.length; j++)
                {
                    for (int k = 0; k < marker.partitions[j].length; k++)
                    {
                        final Partition partition = marker.partitions[j][k];
                        if (partition != null)
                        {
                            remaining++;
                            final short[] errors = marker.errors[j];
                            final int at = k;
                            log.writeMarker(partition, marker.producerId, marker.producerEpoch, marker.coordinatorEpoch, marker.commit,
                                marker.epochBump, error ->
                                {
                                    errors[at] = error;
                                    remaining--;
                                });
                        }
                    }
                }
            }
            return this;
        }

        @Override
        public boolean complete(final long nowMs)
        {
            return remaining == 0;
        }
    }
}
