package io.ferrite.client;

/**
 * The consumer's settings, with kafka-clients' names and defaults ({@code ConsumerConfig} 4.4). Fluent setters;
 * read once by {@link Consumer}.
 */
public final class ConsumerConfig extends ClientConfig<ConsumerConfig>
{
    /** {@code auto.offset.reset}: what a partition without a valid position does (kafka-clients' three values). */
    public enum OffsetReset
    {
        EARLIEST, LATEST, NONE
    }

    int fetchMinBytes = 1;
    int fetchMaxWaitMs = 500;
    int maxPartitionFetchBytes = 1_048_576;
    int fetchMaxBytes = 52_428_800;
    OffsetReset autoOffsetReset = OffsetReset.LATEST;

    public ConsumerConfig()
    {
        super("ferrite-consumer");
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

    /**
     * The transport's settings: the consumer's requests are small (Fetch and ListOffsets name partitions only), and a
     * connection has one Fetch in flight (the control slots take ListOffsets and Metadata).
     */
    TransportSettings transport()
    {
        return transport(64 * 1024, 1);
    }
}
