package io.ferrite.broker.cluster;

import io.ferrite.broker.ProducerIdBlocks;
import io.ferrite.broker.ProducerIdFile;
import io.ferrite.broker.ProducerIds;
import io.ferrite.replication.ClusterNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * A cluster node's producer id blocks: from the active controller (AllocateProducerIds with this broker's id and the
 * epoch it registered with, {@link ClusterNode#allocateProducerIds}), which writes each block's end to the metadata log
 * before it answers — so no two nodes, and no node before and after a restart or a change of active controller, get
 * the same id (Kafka's brokers: {@code RPCProducerIdManager}). Before the node joined, or while no controller answers
 * (the channel itself sends again on NOT_CONTROLLER and a lost connection until {@code request.timeout.ms}), there is
 * no block: {@link ProducerIdBlocks.Unavailable}, tried again after {@link ProducerIds}' backoff.
 *
 * <p>A node that was alone before does not give its own old ids again: a block below the end in its file
 * ({@link ProducerIdFile}) is skipped (given up: the controller's next one is higher). Other nodes may still be given
 * ids below that end (the controller does not know it): not guarded. And each block taken raises that
 * file to past the block and past the controller's next id as this node's image has it, so the node, if it is later
 * started alone again, gives neither its own cluster ids nor those the controller had given any node up to then. (Ids
 * the controller gives other nodes after this node's last block are not known to it; a node taken out of a cluster
 * holds copies of their producers' batches only in replicas of the cluster's topics.)
 *
 * <p>Called on {@link ProducerIds}' reserver thread only, which waits for the controller's answer.
 */
final class ControllerProducerIdBlocks implements ProducerIdBlocks
{
    private static final Logger LOG = LoggerFactory.getLogger(ControllerProducerIdBlocks.class);
    /** Longer than the channel's own {@code request.timeout.ms} (30 s), after which it fails the request itself. */
    private static final long ANSWER_WAIT_MS = 60_000;

    private final Supplier<ClusterNode> node;
    private final ProducerIdFile file;
    /** The answer {@link #reserve} waits for, if any: cancelled by {@link #stopWaiting}. */
    private volatile CompletableFuture<long[]> waiting;
    private volatile boolean stopped;

    ControllerProducerIdBlocks(final Supplier<ClusterNode> node, final ProducerIdFile file)
    {
        this.node = node;
        this.file = file;
    }

    @Override
    public long reserve() throws IOException
    {
        final ClusterNode joined = node.get();
        if (joined == null)
        {
            throw new Unavailable("the node has not joined the cluster yet", null);
        }
        long skipped = 0;
        while (true)
        {
            if (stopped)
            {
                throw new Unavailable("closing: no producer id block asked for", null);
            }
            final long[] block = allocate(joined);
            if (block[1] != ProducerIds.BLOCK)
            {
                throw new IOException("the controller gave a block of " + block[1] + " producer ids from " + block[0] +
                    ", not " + ProducerIds.BLOCK);
            }
            if (block[0] >= file.end())
            {
                if (skipped > 0)
                {
                    LOG.info("skipped {} producer id blocks below {} (this node's ids before it was in a cluster)", skipped,
                        file.end());
                }
                file.raise(Math.max(block[0] + block[1], joined.nextProducerIdSeen()));
                return block[0];
            }
            skipped++; // below ids this node gave alone: given up, the next one is higher
        }
    }

    private long[] allocate(final ClusterNode joined) throws Unavailable
    {
        final CompletableFuture<long[]> answer = joined.allocateProducerIds();
        waiting = answer;
        try
        {
            if (stopped) // stopWaiting ran before this answer was published to it
            {
                answer.cancel(false);
            }
            return answer.get(ANSWER_WAIT_MS, TimeUnit.MILLISECONDS);
        }
        catch (final CancellationException ex)
        {
            throw new Unavailable("closing: AllocateProducerIds no longer awaited", ex);
        }
        catch (final ExecutionException ex)
        {
            throw new Unavailable("AllocateProducerIds failed: " + ex.getCause(), ex.getCause());
        }
        catch (final TimeoutException ex)
        {
            throw new Unavailable("AllocateProducerIds not answered within " + ANSWER_WAIT_MS + " ms", ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new Unavailable("interrupted while waiting for AllocateProducerIds", ex);
        }
        finally
        {
            waiting = null;
        }
    }

    @Override
    public void stopWaiting()
    {
        stopped = true;
        final CompletableFuture<long[]> answer = waiting;
        if (answer != null)
        {
            answer.cancel(false);
        }
    }

    @Override
    public boolean reservedAtStart()
    {
        return false; // the node joins after the broker is made: the first block once it did (ProducerIds.prefetch)
    }

    @Override
    public String toString()
    {
        return "the controller (floor " + file + ")";
    }
}
