package io.ferrite.client;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * The settings the producer and the consumer share — the transport's ({@link TransportSettings}) — with
 * kafka-clients' names and defaults. Fluent setters returning the concrete config.
 *
 * @param <C> the concrete config
 */
public abstract class ClientConfig<C extends ClientConfig<C>>
{
    final List<InetSocketAddress> bootstrap = new ArrayList<>();
    String clientId;
    long retryBackoffNs = 100_000_000L;
    long requestTimeoutNs = 30_000_000_000L;
    long reconnectBackoffNs = 50_000_000L;
    long reconnectBackoffMaxNs = 1_000_000_000L;
    long metadataMaxAgeNs = 300_000_000_000L;

    ClientConfig(final String clientId)
    {
        this.clientId = clientId;
    }

    @SuppressWarnings("unchecked")
    private C self()
    {
        return (C)this;
    }

    /** {@code bootstrap.servers}: comma-separated {@code host:port} pairs. */
    public C bootstrapServers(final String servers)
    {
        for (final String s : servers.split(","))
        {
            final String hostPort = s.strip();
            final int colon = hostPort.lastIndexOf(':');
            if (colon <= 0)
            {
                throw new IllegalArgumentException("bootstrap.servers entry without a port: " + hostPort);
            }
            bootstrap.add(InetSocketAddress.createUnresolved(hostPort.substring(0, colon),
                Integer.parseInt(hostPort.substring(colon + 1))));
        }
        return self();
    }

    public C clientId(final String clientId)
    {
        this.clientId = clientId;
        return self();
    }

    public C retryBackoffMs(final long ms)
    {
        this.retryBackoffNs = ms * 1_000_000L;
        return self();
    }

    public C requestTimeoutMs(final long ms)
    {
        this.requestTimeoutNs = ms * 1_000_000L;
        return self();
    }

    public C reconnectBackoffMs(final long ms, final long maxMs)
    {
        this.reconnectBackoffNs = ms * 1_000_000L;
        this.reconnectBackoffMaxNs = maxMs * 1_000_000L;
        return self();
    }

    public C metadataMaxAgeMs(final long ms)
    {
        this.metadataMaxAgeNs = ms * 1_000_000L;
        return self();
    }

    /** The transport's settings, with the client's largest request ({@code sendBufferSize}) and requests in flight. */
    TransportSettings transport(final int sendBufferSize, final int maxInFlight)
    {
        return new TransportSettings(bootstrap, clientId, requestTimeoutNs, reconnectBackoffNs, reconnectBackoffMaxNs,
            retryBackoffNs, metadataMaxAgeNs, sendBufferSize, maxInFlight);
    }
}
