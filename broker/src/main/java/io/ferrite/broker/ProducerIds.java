package io.ferrite.broker;

import io.ferrite.broker.txn.ProducerIdSource;
import io.ferrite.broker.txn.RetryBackoff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Producer ids for InitProducerId, never handed out twice: ids are taken in blocks of {@link #BLOCK} from its
 * {@link ProducerIdBlocks} — on a node alone the node's file ({@link ProducerIdFile}: the end of a block written to disk,
 * durably, before any id in it is given; a restart continues after the last block reserved, wasting at most two
 * blocks, the current one and the one reserved ahead); in a cluster the active controller
 * ({@code ControllerProducerIdBlocks}: AllocateProducerIds, the block's end in the metadata log before the answer, as
 * Kafka's brokers get theirs), so no two nodes give the same id.
 *
 * <p>The block after the current one is reserved ahead, by a background thread, once 90% of the current
 * block is given (as Kafka's {@code RPCProducerIdManager} prefetches its next block): the callers (the
 * coordinators' agent, the network threads) never wait for the disk or the controller in steady state. When the ids
 * run out before that block arrived (more than a tenth of a block asked for within one reservation), {@link #next}
 * answers {@link ProducerIdSource#NONE_YET} at once — the request is answered COORDINATOR_LOAD_IN_PROGRESS,
 * which clients retry, as Kafka answers while its next block has not arrived. A failed reservation is
 * thrown by the next {@link #next} that finds no id (KAFKA_STORAGE_ERROR) unless a later reservation has
 * succeeded since, or unless it was only {@link ProducerIdBlocks.Unavailable} (no controller answer yet: NONE_YET), and
 * tried again after a backoff ({@link RetryBackoff}: 50 ms, doubling, at most 5 s; Kafka's {@code RPCProducerIdManager}
 * waits 50 ms after a failed request), not at every call: the first failure of a run is logged, the next ones counted,
 * and the count logged when a reservation succeeds. A node alone reserves its first block in the constructor, at start,
 * before any request; a cluster node once it joined ({@link #prefetch}).
 */
public final class ProducerIds implements ProducerIdSource, AutoCloseable
{
    static final String FILE = ProducerIdFile.FILE;
    /** The ids in a block: Kafka's {@code ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE}, what its controller gives. */
    public static final long BLOCK = 1000;
    /** How many ids of the current block are left when the next block is reserved: Kafka's prefetch at 90%. */
    private static final long PREFETCH_LEFT = BLOCK / 10;
    private static final Logger LOG = LoggerFactory.getLogger(ProducerIds.class);

    private final ProducerIdBlocks blocks;
    private final ExecutorService reserver;
    /** The next id and the end of the current block (guarded by this, as all below). */
    private long next;
    private long blockEnd;
    /** The block reserved ahead, on disk ({@link ProducerIdSource#NONE_YET}: none yet). */
    private long aheadStart = NONE_YET;
    private long aheadEnd;
    /** A reservation is queued or under way. */
    private boolean reserving;
    /** The last reservation's failure, thrown by the next {@link #next} that finds no id; cleared by a success. */
    private IOException failure;
    /** The failed reservations in a row and when the next may be tried (null: the last one succeeded). */
    private RetryBackoff backoff;
    private final LongSupplier clockMs;

    /** A node alone: the blocks from the node's file in {@code dir}. */
    public ProducerIds(final Path dir) throws IOException
    {
        this(new ProducerIdFile(dir));
    }

    /** The blocks from {@code blocks}. */
    public ProducerIds(final ProducerIdBlocks blocks)
    {
        this(blocks, Executors.newSingleThreadExecutor(r ->
        {
            final Thread t = new Thread(r, "producer-id-reserver");
            t.setDaemon(true);
            return t;
        }), () -> System.nanoTime() / 1_000_000);
    }

    /** With the executor the blocks ahead are reserved on (tests: one they run by hand). */
    ProducerIds(final Path dir, final ExecutorService reserver) throws IOException
    {
        this(new ProducerIdFile(dir), reserver, () -> System.nanoTime() / 1_000_000);
    }

    /** With the executor and the monotonic clock (ms) the backoff after a failed reservation is timed by. */
    ProducerIds(final Path dir, final ExecutorService reserver, final LongSupplier clockMs) throws IOException
    {
        this(new ProducerIdFile(dir), reserver, clockMs);
    }

    ProducerIds(final ProducerIdBlocks blocks, final ExecutorService reserver, final LongSupplier clockMs)
    {
        this.blocks = blocks;
        this.reserver = reserver;
        this.clockMs = clockMs;
        if (blocks.reservedAtStart())
        {
            // the first block, on this thread; a failure is kept and tried again after a backoff, as the reserver's
            reserving = true;
            reserve();
        }
    }

    /** Reserves the next block now, unless one is at hand or under way (a cluster node once it joined). */
    public synchronized void prefetch()
    {
        if (next >= blockEnd)
        {
            reserveAhead();
        }
    }

    /** The next id, {@link ProducerIdSource#NONE_YET} when the next block is not on disk yet; never waits for the disk. */
    @Override
    public synchronized long next() throws IOException
    {
        if (next >= blockEnd)
        {
            if (aheadStart == NONE_YET)
            {
                final IOException failed = failure;
                failure = null;
                reserveAhead();
                if (failed != null)
                {
                    throw failed;
                }
                return NONE_YET;
            }
            next = aheadStart;
            blockEnd = aheadEnd;
            aheadStart = NONE_YET;
        }
        final long id = next++;
        if (blockEnd - next <= PREFETCH_LEFT)
        {
            reserveAhead();
        }
        return id;
    }

    /** Queues the reservation of the next block unless one is under way, or a failed one's backoff is not over. */
    private void reserveAhead()
    {
        if (!reserving && aheadStart == NONE_YET && !reserver.isShutdown()
            && (backoff == null || backoff.take(clockMs.getAsLong())))
        {
            reserving = true;
            try
            {
                reserver.execute(this::reserve);
            }
            catch (final RejectedExecutionException ex)
            {
                reserving = false; // closed meanwhile
            }
        }
    }

    /** On the reserver: the next block from {@link #blocks}, reserved for good, then handed to {@link #next}. */
    private void reserve()
    {
        try
        {
            final long start = blocks.reserve();
            final RetryBackoff failedBefore;
            synchronized (this)
            {
                aheadStart = start;
                aheadEnd = start + BLOCK;
                reserving = false;
                failure = null; // recovered from: no longer the answer when the ids run out
                failedBefore = backoff;
                backoff = null;
            }
            if (failedBefore != null)
            {
                LOG.info("reserved producer ids {} to {} in {} after {} failed reservations", start, start + BLOCK - 1, blocks,
                    failedBefore.failures());
            }
        }
        catch (final IOException ex)
        {
            final boolean first;
            synchronized (this)
            {
                // no block yet is not a storage failure: the callers keep getting NONE_YET until one comes
                failure = ex instanceof ProducerIdBlocks.Unavailable ? null : ex;
                reserving = false;
                if (backoff == null)
                {
                    backoff = new RetryBackoff();
                }
                first = backoff.failed(clockMs.getAsLong());
            }
            if (first && ex instanceof ProducerIdBlocks.Unavailable)
            {
                LOG.warn("no producer id block from {} yet (tried again after a backoff; the next failures in a row are counted,"
                    + " not logged): {}", blocks, ex.getMessage());
            }
            else if (first)
            {
                LOG.error("cannot reserve producer ids in {} (tried again after a backoff; the next failures in a row are"
                    + " counted, not logged)", blocks, ex);
            }
        }
    }

    /**
     * Stops the reserver, waiting (10 s at most) for a reservation under way to be on disk; one still waiting for the
     * controller's answer gives up at once ({@link ProducerIdBlocks#stopWaiting}: the cluster's channel, closed first,
     * never answers it).
     */
    @Override
    public void close()
    {
        reserver.shutdown();
        blocks.stopWaiting();
        try
        {
            if (!reserver.awaitTermination(10, TimeUnit.SECONDS))
            {
                LOG.warn("the producer id reservation under way did not end in 10 s");
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
