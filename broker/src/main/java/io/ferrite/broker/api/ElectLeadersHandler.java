package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.ElectLeadersRequestDecoder;
import io.ferrite.wire.message.ElectLeadersResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * ElectLeaders on a single node ({@code kafka-leader-election.sh}, {@code Admin.electLeaders}), as a one-node Kafka 4.4
 * answers it (checked against one with {@code /work/shared/kafka-ref}): the node is every partition's only replica, its
 * preferred one and its leader, so a preferred or an unclean election of a partition that exists is ELECTION_NOT_NEEDED
 * with the error's message, "Leader election not needed for topic partition." (Kafka 4.4 sends it in every version); a
 * partition whose files failed ({@link Topic#isOffline}) has its one replica offline, so no election finds it a leader
 * (see {@link #offline}); an unknown topic is
 * UNKNOWN_TOPIC_OR_PARTITION "No such topic as T", an unknown partition "No such partition as T-P"; a request with null
 * partitions (every partition) is answered with no results, as Kafka lists only the partitions it elected. Results
 * follow the request's order. In cluster mode the request is forwarded to the controller instead
 * ({@code cluster.ForwardingHandler}). No authorisation yet (Kafka's CLUSTER_AUTHORIZATION_FAILED): the top-level error is
 * NONE. An admin request: it allocates (the messages), never on produce or fetch.
 */
public final class ElectLeadersHandler implements RequestHandler
{
    /** The request's election type for a preferred election (v0 has none: preferred); 1 is unclean. */
    private static final byte PREFERRED = 0;
    private static final String NOT_NEEDED = "Leader election not needed for topic partition.";
    private static final String PREFERRED_NOT_AVAILABLE = "The preferred leader was not available.";
    private static final String ELIGIBLE_NOT_AVAILABLE = "Eligible topic partition leaders are not available.";

    private final TopicRegistry topics;
    private final ElectLeadersRequestDecoder request = new ElectLeadersRequestDecoder();
    private final ElectLeadersResponseEncoder response = new ElectLeadersResponseEncoder();

    public ElectLeadersHandler(final TopicRegistry topics)
    {
        this.topics = topics;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        // Kafka 4.4: ALTER on the cluster, else the top-level error and each partition asked refused (no topic's existence told)
        final boolean allowed = Access.cluster(connection, AclCodes.ALTER);
        response.wrap(out, outOffset, version).throttleTimeMs(0).errorCode(allowed ? Errors.NONE : Errors.CLUSTER_AUTHORIZATION_FAILED);
        ElectLeadersRequestDecoder.TopicPartitions asked = request.topicPartitions();
        if (asked.isNullArray())
        {
            response.replicaElectionResults(0);
            return outOffset + response.finish();
        }
        int count = 0;
        while (asked.hasNext())
        {
            asked.next();
            count++;
        }
        final ElectLeadersResponseEncoder.ReplicaElectionResult result = response.replicaElectionResults(count);
        final boolean preferred = request.electionType() == PREFERRED;
        asked = request.topicPartitions();
        while (asked.hasNext())
        {
            asked.next();
            final String name = asked.topic();
            final Topic topic = topics.topic(name);
            final boolean known = topic != null && !topic.isDeleted();
            final ElectLeadersResponseEncoder.PartitionResult partitions = result.next().topic(name)
                .partitionResult(asked.partitionsCount());
            for (int i = 0; i < asked.partitionsCount(); i++)
            {
                final int index = asked.partitions(i);
                partitions.next().partitionId(index);
                if (!allowed)
                {
                    partitions.errorCode(Errors.CLUSTER_AUTHORIZATION_FAILED).errorMessage(Access.clusterRefusal(connection, AclCodes.ALTER));
                }
                else if (!known)
                {
                    partitions.errorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION).errorMessage("No such topic as " + name);
                }
                else if (!PartitionLookup.inMetadata(topic, index)) // one being made: the controller's answer, as Kafka's
                {
                    partitions.errorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION)
                        .errorMessage("No such partition as " + name + "-" + index);
                }
                else if (topic.isOffline(index)) // its files failed: its one replica is offline, no leader to elect
                {
                    offline(partitions, preferred);
                }
                else
                {
                    partitions.errorCode(Errors.ELECTION_NOT_NEEDED).errorMessage(NOT_NEEDED);
                }
            }
        }
        return outOffset + response.finish();
    }

    /**
     * A partition whose files failed ({@link Topic#isOffline}), as a live Kafka 4.4 answered for a single-replica
     * partition whose log directory failed (two log directories, one failed; leader -1, ISR empty): no election can give
     * it a leader — PREFERRED_LEADER_NOT_AVAILABLE to a preferred election, ELIGIBLE_LEADERS_NOT_AVAILABLE to an unclean
     * one, each with its error's message.
     */
    private static void offline(final ElectLeadersResponseEncoder.PartitionResult partition, final boolean preferred)
    {
        if (preferred)
        {
            partition.errorCode(Errors.PREFERRED_LEADER_NOT_AVAILABLE).errorMessage(PREFERRED_NOT_AVAILABLE);
        }
        else
        {
            partition.errorCode(Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE).errorMessage(ELIGIBLE_NOT_AVAILABLE);
        }
    }
}
