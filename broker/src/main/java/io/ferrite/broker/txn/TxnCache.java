package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.PartitionOwnership;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/**
 * The coordinator's transactions by transactional id, and which {@code __transaction_state}
 * partitions it serves: a partition is not served until loaded (its ids answer NOT_COORDINATOR),
 * then loading (COORDINATOR_LOAD_IN_PROGRESS), then served; in a cluster, what its {@link TxnOwnership} says
 * (the partitions led here and loaded). Single-threaded: the agent's.
 */
public final class TxnCache
{
    private static final byte NOT_SERVED = 0;
    private static final byte LOADING = 1;
    private static final byte SERVED = 2;

    private final TxnConfig config;
    /**
     * Per partition, its state. Sized by the count its ids are placed by ({@link TxnConfig#stateLog}), and grown if that
     * count is fixed larger than it was when this was made (in a cluster, at the node's first metadata image).
     */
    private byte[] partitions;
    /** Per partition, how many times it was unloaded: a write sent in an earlier tenure is answered NOT_COORDINATOR. */
    private int[] tenures;
    private final Map<String, TxnMetadata> byId = new HashMap<>();
    private int loading;
    /** In a cluster, which partitions this node coordinates (null, or not following leaders: the states above). */
    private PartitionOwnership owner;

    public TxnCache(final TxnConfig config)
    {
        this.config = config;
        this.partitions = new byte[config.stateLogPartitions()];
        this.tenures = new int[config.stateLogPartitions()];
    }

    /** {@code partition}, once the arrays hold it. */
    private int slot(final int partition)
    {
        if (partition >= partitions.length)
        {
            final int size = Math.max(partition + 1, config.stateLogPartitions());
            partitions = java.util.Arrays.copyOf(partitions, size);
            tenures = java.util.Arrays.copyOf(tenures, size);
        }
        return partition;
    }

    public TxnConfig config()
    {
        return config;
    }

    /** The ownership that says, in a cluster, which partitions are served ({@link #lookupError}). */
    void followedBy(final PartitionOwnership ownership)
    {
        this.owner = ownership;
    }

    /** The partition is no longer coordinated here: its ids leave the cache and answer NOT_COORDINATOR. */
    void unloaded(final int partition)
    {
        byId.values().removeIf(m -> config.partitionFor(m.transactionalId()) == partition);
        set(partition, NOT_SERVED);
        tenures[slot(partition)]++;
    }

    /**
     * The tenure of the id's partition here: it changes when the partition is unloaded, so a write whose answer comes
     * back in another tenure than it was sent in belongs to a coordinator that is gone ({@link TxnWrites#stale}).
     */
    int tenure(final String transactionalId)
    {
        return tenures[slot(config.partitionFor(transactionalId))];
    }

    /** The partition's load has begun: its ids answer COORDINATOR_LOAD_IN_PROGRESS until {@link #loaded}. */
    public void loading(final int partition)
    {
        set(partition, LOADING);
    }

    /**
     * The partition is loaded with the transactions its log held ({@link TxnReplay}); its ids are
     * served. They replace whatever the cache held for the partition (an earlier load's ids, which
     * the log may since have removed).
     */
    public void loaded(final int partition, final Map<String, TxnMetadata> transactions)
    {
        for (final TxnMetadata m : transactions.values())
        {
            if (config.partitionFor(m.transactionalId()) != partition)
            {
                throw new IllegalArgumentException(m.transactionalId() + " is not in partition " + partition);
            }
        }
        byId.values().removeIf(m -> config.partitionFor(m.transactionalId()) == partition);
        byId.putAll(transactions);
        set(partition, SERVED);
    }

    private void set(final int partition, final byte state)
    {
        if (partitions[slot(partition)] == LOADING)
        {
            loading--;
        }
        if (state == LOADING)
        {
            loading++;
        }
        partitions[partition] = state;
    }

    /** NONE when the id's partition is served, else the error its requests get. */
    public short lookupError(final String transactionalId)
    {
        final PartitionOwnership o = owner;
        if (o != null && o.followingLeaders())
        {
            return o.partitionError(config.partitionFor(transactionalId)); // NONE once loaded in this tenure
        }
        switch (partitions[slot(config.partitionFor(transactionalId))])
        {
            case SERVED: return Errors.NONE;
            case LOADING: return Errors.COORDINATOR_LOAD_IN_PROGRESS;
            default: return Errors.NOT_COORDINATOR;
        }
    }

    /**
     * What a request for an existing transaction (AddPartitionsToTxn, AddOffsetsToTxn, EndTxn) gets
     * before its own checks: INVALID_REQUEST without an id, the partition's {@link #lookupError},
     * INVALID_PRODUCER_ID_MAPPING for an id not known; NONE when {@link #get} has it.
     */
    public short requestError(final String transactionalId)
    {
        if (transactionalId == null || transactionalId.isEmpty())
        {
            return Errors.INVALID_REQUEST;
        }
        final short lookup = lookupError(transactionalId);
        if (lookup != Errors.NONE)
        {
            return lookup;
        }
        return byId.containsKey(transactionalId) ? Errors.NONE : Errors.INVALID_PRODUCER_ID_MAPPING;
    }

    /** Whether some partition is loading (ListTransactions then answers COORDINATOR_LOAD_IN_PROGRESS). */
    public boolean anyLoading()
    {
        final PartitionOwnership o = owner;
        return loading > 0 || o != null && o.anyLoading();
    }

    /** The id's transaction, or null. */
    public TxnMetadata get(final String transactionalId)
    {
        return byId.get(transactionalId);
    }

    void put(final TxnMetadata m)
    {
        byId.put(m.transactionalId(), m);
    }

    void remove(final String transactionalId)
    {
        byId.remove(transactionalId);
    }

    public Collection<TxnMetadata> all()
    {
        return byId.values();
    }
}
