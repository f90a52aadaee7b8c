package io.ferrite.broker.cluster;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.replication.ClusterNode;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.DescribeClusterRequestDecoder;
import io.ferrite.wire.message.DescribeClusterResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.List;
import java.util.function.Supplier;

/**
 * DescribeCluster in a cluster, as Kafka's KRaft broker answers it: the live brokers of the image with their
 * endpoints (a fenced broker is listed, marked fenced, only when a v2 request sets {@code includeFencedBrokers}), a
 * random live broker as controller id, the cluster id.
 * Controller endpoints asked of a broker listener: MISMATCHED_ENDPOINT_TYPE (INVALID_REQUEST in v0), as the
 * single node's handler.
 */
final class ClusterDescribeHandler implements RequestHandler
{
    private static final byte BROKER_ENDPOINTS = 1;
    private static final byte CONTROLLER_ENDPOINTS = 2;
    /** Kafka's BROKER_NOT_AVAILABLE: asked before the node joined (the acceptor starts after it did: not seen). */
    private static final short BROKER_NOT_AVAILABLE = 8;

    private final Supplier<ClusterNode> node;
    private final DescribeClusterRequestDecoder request = new DescribeClusterRequestDecoder();
    private final DescribeClusterResponseEncoder response = new DescribeClusterResponseEncoder();

    ClusterDescribeHandler(final Supplier<ClusterNode> node)
    {
        this.node = node;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final ClusterNode cluster = node.get();
        request.wrap(in, offset, limit, version);
        final byte type = version >= 1 ? request.endpointType() : BROKER_ENDPOINTS;
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        final String clusterId = cluster == null ? "" : cluster.clusterId();
        if (type != BROKER_ENDPOINTS || cluster == null)
        {
            final short error = cluster == null ? BROKER_NOT_AVAILABLE : version == 0 ? Errors.INVALID_REQUEST :
                type == CONTROLLER_ENDPOINTS ? Errors.MISMATCHED_ENDPOINT_TYPE : Errors.UNSUPPORTED_ENDPOINT_TYPE;
            response.errorCode(error).errorMessage(cluster == null ? "not joined the cluster yet" : type == CONTROLLER_ENDPOINTS ?
                "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER" :
                "Unsupported endpoint type " + type)
                .endpointType(BROKER_ENDPOINTS).clusterId(clusterId).controllerId(-1).brokers(0);
        }
        else
        {
            // Kafka's KafkaApis (KIP-1073): v2 with includeFencedBrokers lists every registered broker, fenced ones marked
            final List<ClusterNode.BrokerEndpoint> brokers = cluster.brokers(version >= 2 && request.includeFencedBrokers());
            response.errorCode(Errors.NONE).errorMessage((CharSequence)null).endpointType(BROKER_ENDPOINTS)
                .clusterId(clusterId).controllerId(cluster.randomLiveBrokerId());
            final DescribeClusterResponseEncoder.DescribeClusterBroker b = response.brokers(brokers.size());
            for (final ClusterNode.BrokerEndpoint broker : brokers)
            {
                b.next().brokerId(broker.id()).host(broker.host()).port(broker.port()).rack((CharSequence)null).isFenced(broker.fenced());
            }
        }
        response.clusterAuthorizedOperations(Integer.MIN_VALUE);
        return outOffset + response.finish();
    }
}
