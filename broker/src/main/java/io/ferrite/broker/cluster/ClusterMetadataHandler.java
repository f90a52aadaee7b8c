package io.ferrite.broker.cluster;

import io.ferrite.broker.Errors;
import io.ferrite.broker.api.MetadataHandler;
import io.ferrite.broker.api.TopicNames;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.replication.ClusterNode;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.ArrayEncoder;
import io.ferrite.wire.message.MetadataRequestDecoder;
import io.ferrite.wire.message.MetadataResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Metadata in a cluster, from this node's metadata image as Kafka's KRaft broker answers it ({@code KafkaApis}
 * with its {@code KRaftMetadataCache}): every live (unfenced) broker with the endpoint it registered; as controller
 * id a random live broker (clients send the controller nothing in KRaft mode); per partition the leader, leader
 * epoch, replicas, ISR and offline replicas of the image, LEADER_NOT_AVAILABLE for a partition without a leader; a
 * topic the image does not have UNKNOWN_TOPIC_OR_PARTITION (by name) or UNKNOWN_TOPIC_ID (by id); with
 * {@code auto.create.topics.enable} and a request that allows it, a legal name is sent to the controller to create
 * with its defaults and answered LEADER_NOT_AVAILABLE meanwhile (the client asks again), an illegal one
 * INVALID_TOPIC_EXCEPTION, as Kafka's broker does; the local coordinators' topics ({@code __consumer_offsets},
 * {@code __transaction_state}) are never sent to the controller (UNKNOWN_TOPIC_OR_PARTITION). Allocates (the image is read through plain records): a control path.
 */
final class ClusterMetadataHandler implements RequestHandler
{
    private static final int AUTHORIZED_OPERATIONS_OMITTED = Integer.MIN_VALUE;

    private final Supplier<ClusterNode> node;
    /** This node's single-node handler: answers while the node has not joined yet (none is sent then: not unfenced). */
    private final MetadataHandler local;
    /** {@code auto.create.topics.enable}. */
    private final boolean autoCreate;
    private final MetadataRequestDecoder request = new MetadataRequestDecoder();
    private final MetadataResponseEncoder response = new MetadataResponseEncoder();

    ClusterMetadataHandler(final Supplier<ClusterNode> node, final MetadataHandler local, final boolean autoCreate)
    {
        this.node = node;
        this.local = local;
        this.autoCreate = autoCreate;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final ClusterNode cluster = node.get();
        if (cluster == null)
        {
            return local.handle(api, version, in, offset, limit, out, outOffset, connection);
        }
        request.wrap(in, offset, limit, version);
        final MetadataRequestDecoder.MetadataRequestTopic requested = request.topics();
        final boolean all = requested.isNullArray() || (version == 0 && requested.elementCount() == 0);
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        final List<ClusterNode.BrokerEndpoint> brokers = cluster.liveBrokers();
        final MetadataResponseEncoder.MetadataResponseBroker b = response.brokers(brokers.size());
        for (final ClusterNode.BrokerEndpoint broker : brokers)
        {
            b.next().nodeId(broker.id()).host(broker.host()).port(broker.port()).rack((CharSequence)null);
        }
        response.clusterId(cluster.clusterId()).controllerId(cluster.randomLiveBrokerId());
        if (all)
        {
            final Collection<ClusterNode.TopicState> topics = cluster.topics();
            final MetadataResponseEncoder.MetadataResponseTopic t = response.topics(topics.size());
            for (final ClusterNode.TopicState topic : topics)
            {
                describe(t.next(), topic);
            }
        }
        else
        {
            final MetadataResponseEncoder.MetadataResponseTopic t = response.topics(requested.elementCount());
            while (requested.hasNext())
            {
                requested.next();
                final boolean byName = !requested.nameIsNull();
                final Optional<ClusterNode.TopicState> topic = byName ? cluster.topic(requested.name()) :
                    cluster.topic(requested.topicIdMostSignificantBits(), requested.topicIdLeastSignificantBits());
                t.next();
                if (topic.isPresent())
                {
                    describe(t, topic.get());
                    continue;
                }
                short error = byName ? Errors.UNKNOWN_TOPIC_OR_PARTITION : Errors.UNKNOWN_TOPIC_ID;
                if (byName && autoCreate && (version < 4 || request.allowAutoTopicCreation()))
                {
                    final String name = requested.name();
                    // Kafka's broker: a legal name is sent to the controller to create, LEADER_NOT_AVAILABLE meanwhile
                    error = TopicNames.illegal(name) != null ? Errors.INVALID_TOPIC_EXCEPTION : Errors.LEADER_NOT_AVAILABLE;
                    if (TopicConfigs.notAutoCreated(name))
                    {
                        // the coordinators' topics: Kafka's brokers create them only through
                        // their coordinators (AutoTopicCreationManager), never as a plain topic of the controller's
                        error = Errors.UNKNOWN_TOPIC_OR_PARTITION;
                    }
                    else if (error == Errors.LEADER_NOT_AVAILABLE)
                    {
                        cluster.autoCreate(name);
                    }
                }
                MetadataHandler.notFound(t, error, in, requested);
            }
        }
        response.clusterAuthorizedOperations(AUTHORIZED_OPERATIONS_OMITTED);
        return outOffset + response.finish();
    }

    private static void describe(final MetadataResponseEncoder.MetadataResponseTopic t, final ClusterNode.TopicState topic)
    {
        t.errorCode(Errors.NONE).name(topic.name()).topicId(topic.idMsb(), topic.idLsb()).isInternal(topic.name().startsWith("__"));
        final MetadataResponseEncoder.MetadataResponsePartition p = t.partitions(topic.partitions().size());
        for (final ClusterNode.PartitionState state : topic.partitions())
        {
            p.next().errorCode(state.leader() < 0 ? Errors.LEADER_NOT_AVAILABLE : Errors.NONE)
                .partitionIndex(state.partition()).leaderId(state.leader()).leaderEpoch(state.leaderEpoch());
            ints(p.replicaNodes(state.replicas().length), state.replicas());
            ints(p.isrNodes(state.isr().length), state.isr());
            ints(p.offlineReplicas(state.offlineReplicas().length), state.offlineReplicas());
        }
        t.topicAuthorizedOperations(AUTHORIZED_OPERATIONS_OMITTED);
    }

    private static void ints(final ArrayEncoder array, final int[] values)
    {
        for (final int value : values)
        {
            array.addInt32(value);
        }
    }
}
