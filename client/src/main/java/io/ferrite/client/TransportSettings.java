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

    /** Adds the addresses of {@code bootstrap.servers} (comma-separated {@code host:port} pairs) to {@code into}. */
    static void parseBootstrap(final String servers, final List<InetSocketAddress> into)
    {
        for (final String s : servers.split(","))
        {
            final String hostPort = s.strip();
            final int colon = hostPort.lastIndexOf(':');
            if (colon <= 0)
            {
                throw new IllegalArgumentException("bootstrap.servers entry without a port: " + hostPort);
            }
            into.add(InetSocketAddress.createUnresolved(hostPort.substring(0, colon),
                Integer.parseInt(hostPort.substring(colon + 1))));
        }
    }
}
