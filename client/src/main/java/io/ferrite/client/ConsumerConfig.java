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
    /** Null: a dynamic member. */
    String groupInstanceId;
    /** Null: unset, true with a {@code group.id} (kafka-clients 4.4's default). */
    Boolean enableAutoCommit;
    long autoCommitIntervalNs = 5_000_000_000L;
    int sessionTimeoutMs = 45_000;
    long heartbeatIntervalNs = 3_000_000_000L;
    int maxPollIntervalMs = 300_000;

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
     * consumer joins no group unless it {@link Consumer#subscribe subscribes}. Unset (null) by default: no committed
     * offsets. With it, {@code enable.auto.commit} is true unless set false (as kafka-clients 4.4).
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
     * {@code group.instance.id}: a static member (KIP-345) — the coordinator keeps its partitions for the instance id
     * across a restart within {@code session.timeout.ms}, so it sends no LeaveGroup on close (kafka-clients' default
     * close) nor when {@code max.poll.interval.ms} passes; a second consumer with the same id fences this one
     * ({@link FencedInstanceIdException}). Null (the default): a dynamic member. Checked as kafka-clients'
     * {@code JoinGroupRequest.validateGroupInstanceId}: not empty, not "." or "..", at most 249 characters of
     * {@code [a-zA-Z0-9._-]}.
     */
    public ConsumerConfig groupInstanceId(final String id)
    {
        if (id != null && (id.length() > 249 || !id.matches("[a-zA-Z0-9._-]+") || id.equals(".") || id.equals("..")))
        {
            throw new ConfigException("Group instance id \"" + id + "\" is illegal: it must be 1 to 249 characters of " +
                "ASCII alphanumerics, '.', '_' and '-', and not \".\" or \"..\"");
        }
        this.groupInstanceId = id;
        return this;
    }

    /**
     * {@code enable.auto.commit}: the consumed positions are committed every {@code auto.commit.interval.ms}, before
     * the partitions are revoked in a rebalance and on close (true by default once a {@code group.id} is set, as
     * kafka-clients 4.4; without a {@code group.id} setting it true throws at the consumer's construction).
     */
    public ConsumerConfig enableAutoCommit(final boolean enable)
    {
        this.enableAutoCommit = enable;
        return this;
    }

    /** {@code auto.commit.interval.ms}: 5 000 ms, as kafka-clients. */
    public ConsumerConfig autoCommitIntervalMs(final long ms)
    {
        this.autoCommitIntervalNs = ms * 1_000_000L;
        return this;
    }

    /** {@code session.timeout.ms}: the coordinator drops a member that sent no heartbeat for this long (45 000 ms). */
    public ConsumerConfig sessionTimeoutMs(final int ms)
    {
        this.sessionTimeoutMs = ms;
        return this;
    }

    /** {@code heartbeat.interval.ms}: a member's heartbeats to its coordinator (3 000 ms, as kafka-clients). */
    public ConsumerConfig heartbeatIntervalMs(final long ms)
    {
        this.heartbeatIntervalNs = ms * 1_000_000L;
        return this;
    }

    /**
     * {@code max.poll.interval.ms}: a member that does not call {@code poll} for this long leaves its group (and joins
     * again at the next {@code poll}); also the rebalance timeout its JoinGroup carries (300 000 ms, as kafka-clients).
     */
    public ConsumerConfig maxPollIntervalMs(final int ms)
    {
        this.maxPollIntervalMs = ms;
        return this;
    }

    /** Whether offsets are committed automatically (the default with a {@code group.id}). */
    boolean autoCommit()
    {
        if (enableAutoCommit != null && enableAutoCommit && groupId == null)
        {
            throw new ConfigException("enable.auto.commit needs a group.id"); // kafka-clients' InvalidConfigurationException
        }
        return groupId != null && (enableAutoCommit == null || enableAutoCommit);
    }

    /**
     * The coordinator connection's settings: a JoinGroup is answered once every member has joined again, up to the
     * rebalance timeout ({@code max.poll.interval.ms}), so its request may wait that long and 5 s more (kafka-clients
     * gives the JoinGroup that timeout; here the connection's one timeout covers the group's other requests too).
     */
    TransportSettings coordinatorTransport(final boolean member)
    {
        final long timeoutNs = member ? Math.max(requestTimeoutNs, (maxPollIntervalMs + 5_000L) * 1_000_000L) : requestTimeoutNs;
        return new TransportSettings(bootstrap, clientId, timeoutNs, reconnectBackoffNs, reconnectBackoffMaxNs,
            retryBackoffNs, metadataMaxAgeNs, 64 * 1024, 1);
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
