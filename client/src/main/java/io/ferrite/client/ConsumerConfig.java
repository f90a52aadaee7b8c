package io.ferrite.client;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * The consumer's settings, with kafka-clients' names and defaults ({@code ConsumerConfig} 4.4). Fluent setters;
 * read once by {@link Consumer}.
 */
public final class ConsumerConfig
{
    /** {@code auto.offset.reset}: what a partition without a valid position does (kafka-clients' three values). */
    public enum OffsetReset
    {
        EARLIEST, LATEST, NONE
    }

    final List<InetSocketAddress> bootstrap = new ArrayList<>();
    String clientId = "ferrite-consumer";
    int fetchMinBytes = 1;
    int fetchMaxWaitMs = 500;
    int maxPartitionFetchBytes = 1_048_576;
    int fetchMaxBytes = 52_428_800;
    OffsetReset autoOffsetReset = OffsetReset.LATEST;
    long retryBackoffNs = 100_000_000L;
    long requestTimeoutNs = 30_000_000_000L;
    long reconnectBackoffNs = 50_000_000L;
    long reconnectBackoffMaxNs = 1_000_000_000L;
    long metadataMaxAgeNs = 300_000_000_000L;

    /** {@code bootstrap.servers}: comma-separated {@code host:port} pairs. */
    public ConsumerConfig bootstrapServers(final String servers)
    {
        TransportSettings.parseBootstrap(servers, bootstrap);
        return this;
    }

    public ConsumerConfig clientId(final String clientId)
    {
        this.clientId = clientId;
        return this;
    }

    /** {@code fetch.min.bytes}: the broker holds a fetch until this much is ready or {@code fetch.max.wait.ms} passed (1). */
    public ConsumerConfig fetchMinBytes(final int bytes)
    {
        this.fetchMinBytes = bytes;
        return this;
    }

    /** {@code fetch.max.wait.ms}: how long the broker holds a fetch for {@code fetch.min.bytes} (500). */
    public ConsumerConfig fetchMaxWaitMs(final int ms)
    {
        this.fetchMaxWaitMs = ms;
        return this;
    }

    /** {@code max.partition.fetch.bytes}: a partition's share of a fetch answer (1 MiB; one batch is returned even if larger). */
    public ConsumerConfig maxPartitionFetchBytes(final int bytes)
    {
        this.maxPartitionFetchBytes = bytes;
        return this;
    }

    /** {@code fetch.max.bytes}: the whole fetch answer (50 MiB; one batch is returned even if larger). */
    public ConsumerConfig fetchMaxBytes(final int bytes)
    {
        this.fetchMaxBytes = bytes;
        return this;
    }

    /** {@code auto.offset.reset}: latest by default, as kafka-clients. */
    public ConsumerConfig autoOffsetReset(final OffsetReset reset)
    {
        this.autoOffsetReset = reset;
        return this;
    }

    public ConsumerConfig retryBackoffMs(final long ms)
    {
        this.retryBackoffNs = ms * 1_000_000L;
        return this;
    }

    public ConsumerConfig requestTimeoutMs(final long ms)
    {
        this.requestTimeoutNs = ms * 1_000_000L;
        return this;
    }

    public ConsumerConfig reconnectBackoffMs(final long ms, final long maxMs)
    {
        this.reconnectBackoffNs = ms * 1_000_000L;
        this.reconnectBackoffMaxNs = maxMs * 1_000_000L;
        return this;
    }

    public ConsumerConfig metadataMaxAgeMs(final long ms)
    {
        this.metadataMaxAgeNs = ms * 1_000_000L;
        return this;
    }

    /**
     * The transport's settings: the consumer's requests are small (Fetch and ListOffsets name partitions only), and a
     * connection has one Fetch in flight (the control slots take ListOffsets and Metadata).
     */
    TransportSettings transport()
    {
        return new TransportSettings(bootstrap, clientId, requestTimeoutNs, reconnectBackoffNs, reconnectBackoffMaxNs,
            retryBackoffNs, metadataMaxAgeNs, 64 * 1024, 1);
    }
}
