package io.ferrite.client;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * What the transport ({@link NodeConnection}, {@link ClusterMetadata}) takes from a client's settings, so the
 * producer and the consumer share one transport: each config makes one of these when its client is built.
 */
final class TransportSettings
{
    final List<InetSocketAddress> bootstrap;
    final String clientId;
    final long requestTimeoutNs;
    final long reconnectBackoffNs;
    final long reconnectBackoffMaxNs;
    final long retryBackoffNs;
    final long metadataMaxAgeNs;
    /** The send buffer's first capacity: the largest request the client writes, with room for the headers. */
    final int sendBufferSize;
    /** Requests in flight per connection besides {@link NodeConnection#CONTROL_SLOTS}. */
    final int maxInFlight;

    TransportSettings(final List<InetSocketAddress> bootstrap, final String clientId, final long requestTimeoutNs,
        final long reconnectBackoffNs, final long reconnectBackoffMaxNs, final long retryBackoffNs,
        final long metadataMaxAgeNs, final int sendBufferSize, final int maxInFlight)
    {
        this.bootstrap = List.copyOf(bootstrap);
        this.clientId = clientId;
        this.requestTimeoutNs = requestTimeoutNs;
        this.reconnectBackoffNs = reconnectBackoffNs;
        this.reconnectBackoffMaxNs = reconnectBackoffMaxNs;
        this.retryBackoffNs = retryBackoffNs;
        this.metadataMaxAgeNs = metadataMaxAgeNs;
        this.sendBufferSize = sendBufferSize;
        this.maxInFlight = maxInFlight;
    }
}
