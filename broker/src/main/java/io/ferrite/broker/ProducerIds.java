package io.ferrite.broker;

import io.ferrite.broker.txn.ProducerIdSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Producer ids for InitProducerId, never handed out twice: ids are taken in blocks of {@link #BLOCK}, and
 * the end of a block is written to disk (fsynced) before any id in it is given, so a restart — clean or
 * after SIGKILL — continues after the last block reserved, wasting at most two blocks (the current one and
 * the one reserved ahead).
 *
 * <p>The block after the current one is reserved ahead, by a background thread, once 90% of the current
 * block is given (as Kafka's {@code RPCProducerIdManager} prefetches its next block): the callers (the
 * coordinators' agent, the network threads) never wait for the disk in steady state. When the ids run out
 * before that block is on disk (more than a tenth of a block asked for within one fsync), {@link #next}
 * answers {@link ProducerIdSource#NONE_YET} at once — the request is answered COORDINATOR_LOAD_IN_PROGRESS,
 * which clients retry, as Kafka answers while its next block has not arrived. A failed reservation is
 * thrown by the next {@link #next} that finds no id (KAFKA_STORAGE_ERROR), and tried again. The first block
 * is reserved by the constructor, at start, before any request.
 */
public final class ProducerIds implements ProducerIdSource, AutoCloseable
{
    static final String FILE = "ferrite-producer-ids";
    static final long BLOCK = 1000;
    /** How many ids of the current block are left when the next block is reserved: Kafka's prefetch at 90%. */
    private static final long PREFETCH_LEFT = BLOCK / 10;
    private static final Logger LOG = LoggerFactory.getLogger(ProducerIds.class);

    private final Path file;
    private final ExecutorService reserver;
    /** The end of the last block on disk: the reserver's only once constructed. */
    private long reservedEnd;
    /** The next id and the end of the current block (guarded by this, as all below). */
    private long next;
    private long blockEnd;
    /** The block reserved ahead, on disk ({@link ProducerIdSource#NONE_YET}: none yet). */
    private long aheadStart = NONE_YET;
    private long aheadEnd;
    /** A reservation is queued or under way. */
    private boolean reserving;
    /** The last reservation's failure, thrown by the next {@link #next} that finds no id. */
    private IOException failure;

    public ProducerIds(final Path dir) throws IOException
    {
        this(dir, Executors.newSingleThreadExecutor(r ->
        {
            final Thread t = new Thread(r, "producer-id-reserver");
            t.setDaemon(true);
            return t;
        }));
    }

    /** With the executor the blocks ahead are reserved on (tests: one they run by hand). */
    ProducerIds(final Path dir, final ExecutorService reserver) throws IOException
    {
        this.file = dir.resolve(FILE);
        this.reserver = reserver;
        final long start = Files.exists(file) ? Long.parseLong(Files.readString(file).trim()) : 0;
        write(start + BLOCK);
        reservedEnd = start + BLOCK;
        next = start;
        blockEnd = reservedEnd;
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

    private void reserveAhead()
    {
        if (!reserving && aheadStart == NONE_YET && !reserver.isShutdown())
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

    /** On the reserver: the block after the last one reserved, written to disk, then handed to {@link #next}. */
    private void reserve()
    {
        final long start = reservedEnd;
        try
        {
            write(start + BLOCK);
            reservedEnd = start + BLOCK;
            synchronized (this)
            {
                aheadStart = start;
                aheadEnd = start + BLOCK;
                reserving = false;
            }
        }
        catch (final IOException ex)
        {
            LOG.error("cannot reserve producer ids {} to {} in {}", start, start + BLOCK - 1, file, ex);
            synchronized (this)
            {
                failure = ex;
                reserving = false;
            }
        }
    }

    /** Writes {@code end} as the end of the ids reserved: a temporary file fsynced, then moved over the file. */
    private void write(final long end) throws IOException
    {
        final Path tmp = file.resolveSibling(FILE + ".tmp");
        Files.writeString(tmp, Long.toString(end));
        try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.WRITE))
        {
            channel.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** Stops the reserver, waiting (10 s at most) for a reservation under way to be on disk. */
    @Override
    public void close()
    {
        reserver.shutdown();
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
