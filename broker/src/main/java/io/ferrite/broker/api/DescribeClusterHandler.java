package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.DescribeClusterRequestDecoder;
import io.ferrite.wire.message.DescribeClusterResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * DescribeCluster, as a Kafka broker answers it: the cluster id, this node as the only broker and
 * as the controller id. Asking a broker listener for controller endpoints is MISMATCHED_ENDPOINT_TYPE,
 * an unknown endpoint type UNSUPPORTED_ENDPOINT_TYPE (both INVALID_REQUEST in v0, as in Kafka). No ACL is needed (Kafka 4.4
 * neither); {@code include_cluster_authorized_operations} is answered as Kafka's ({@link Access#clusterOperations}).
 */
public final class DescribeClusterHandler implements RequestHandler
{
    private static final byte BROKER_ENDPOINTS = 1;
    private static final byte CONTROLLER_ENDPOINTS = 2;

    private final int nodeId;
    private final String clusterId;
    private final MetadataHandler metadata;
    private final DescribeClusterRequestDecoder request = new DescribeClusterRequestDecoder();
    private final DescribeClusterResponseEncoder response = new DescribeClusterResponseEncoder();

    /** {@code metadata} knows the advertised address. */
    public DescribeClusterHandler(final int nodeId, final String clusterId, final MetadataHandler metadata)
    {
        this.nodeId = nodeId;
        this.clusterId = clusterId;
        this.metadata = metadata;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final byte type = version >= 1 ? request.endpointType() : BROKER_ENDPOINTS;
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        if (type != BROKER_ENDPOINTS)
        {
            final short error = version == 0 ? Errors.INVALID_REQUEST :
                type == CONTROLLER_ENDPOINTS ? Errors.MISMATCHED_ENDPOINT_TYPE : Errors.UNSUPPORTED_ENDPOINT_TYPE;
            response.errorCode(error).errorMessage(type == CONTROLLER_ENDPOINTS ?
                "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER" :
                "Unsupported endpoint type " + type)
                .endpointType(BROKER_ENDPOINTS).clusterId(clusterId).controllerId(-1).brokers(0);
            response.clusterAuthorizedOperations(Integer.MIN_VALUE);
        }
        else
        {
            response.errorCode(Errors.NONE).errorMessage((CharSequence)null).endpointType(BROKER_ENDPOINTS)
                .clusterId(clusterId).controllerId(nodeId);
            response.brokers(1).next().brokerId(nodeId).host(metadata.advertisedHost(connection)).port(metadata.advertisedPort(connection))
                .rack((CharSequence)null).isFenced(false);
            // Kafka 4.4: when asked, the cluster's operations (none without DESCRIBE on it; every one without an authorizer)
            response.clusterAuthorizedOperations(request.includeClusterAuthorizedOperations() ? Access.clusterOperations(connection) :
                Integer.MIN_VALUE);
        }
        return outOffset + response.finish();
    }
}
