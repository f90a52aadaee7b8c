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

    /** {@code isolation.level}: what a Fetch may return of transactional records (kafka-clients' two values). */
    public enum IsolationLevel
    {
        /** Every record, the aborted too (the default, as kafka-clients). */
        READ_UNCOMMITTED((byte)0),
        /** Records up to the last stable offset, those of aborted transactions left out. */
        READ_COMMITTED((byte)1);

        final byte id;

        IsolationLevel(final byte id)
        {
            this.id = id;
        }
    }

    int fetchMinBytes = 1;
    int fetchMaxWaitMs = 500;
    int maxPartitionFetchBytes = 1_048_576;
    int fetchMaxBytes = 52_428_800;
    OffsetReset autoOffsetReset = OffsetReset.LATEST;
    IsolationLevel isolationLevel = IsolationLevel.READ_UNCOMMITTED;
    String groupId;

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

    /** {@code isolation.level}: read_uncommitted by default, as kafka-clients. */
    public ConsumerConfig isolationLevel(final IsolationLevel level)
    {
        this.isolationLevel = level;
        return this;
    }

    /**
     * {@code group.id}: the group whose committed offsets the consumer reads (a partition's first position is its
     * committed offset when there is one, {@code auto.offset.reset} otherwise) and writes ({@link Consumer#commitSync},
     * {@link Consumer#commitAsync}), as a kafka-clients consumer with {@code assign()} and no subscription: the
     * consumer joins no group. Unset (null) by default: no committed offsets. There is no auto-commit
     * ({@code enable.auto.commit}, true by default in kafka-clients, is not supported: commits are the application's).
     */
    public ConsumerConfig groupId(final String groupId)
    {
        if (groupId != null && groupId.isEmpty())
        {
            throw new ConfigException("group.id must not be empty");
        }
        this.groupId = groupId;
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
