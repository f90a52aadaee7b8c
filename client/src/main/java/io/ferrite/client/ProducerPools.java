package io.ferrite.client;

import io.ferrite.wire.compress.Codecs;

/**
 * The producer's memory: its batches, at most {@code buffer.memory / batch.size} of them, and the
 * contexts of its requests in flight, both reused through free lists so that steady state allocates
 * nothing. A batch is made on demand up to the bound; the contexts a connection may need
 * ({@code max.in.flight.requests.per.connection} each) are made when it becomes ready, off the send path.
 */
final class ProducerPools
{
    private final Codecs codecs = new Codecs();
    private final BatchQueue freeBatches = new BatchQueue();
    private final int batchSize;
    private final int maxBatches;
    private int batches;
    private ProduceContext freeContexts;
    private int contexts;
    private final int contextsPerConnection;

    ProducerPools(final ProducerConfig config)
    {
        this.batchSize = config.batchSize;
        this.contextsPerConnection = config.maxInFlight;
        this.maxBatches = (int)Math.max(1, config.bufferMemory / (config.batchSize + ProducerBatch.BATCH_OVERHEAD));
    }

    /** A free batch, or a new one while fewer than {@code buffer.memory} allows exist; null when all are in use. */
    ProducerBatch takeBatch()
    {
        ProducerBatch b = freeBatches.pollFirst();
        if (b == null && batches < maxBatches)
        {
            b = new ProducerBatch(batchSize, codecs);
            batches++;
        }
        return b;
    }

    /** Batches made so far (for the tests: the pool has reached its bound once this is {@link #maxBatches()}). */
    int batchesMade()
    {
        return batches;
    }

    int maxBatches()
    {
        return maxBatches;
    }

    /** Returns a completed batch to the pool. */
    void releaseBatch(final ProducerBatch b)
    {
        b.release();
        freeBatches.addFirst(b);
    }

    /** A context for one request, with room for one batch of each of {@code partitions} partitions. */
    ProduceContext takeContext(final int partitions)
    {
        ProduceContext ctx = freeContexts;
        if (ctx == null)
        {
            ctx = new ProduceContext();
        }
        else
        {
            freeContexts = ctx.next;
            ctx.next = null;
        }
        ctx.ensureCapacity(partitions);
        return ctx;
    }

    void releaseContext(final ProduceContext ctx)
    {
        ctx.clear();
        ctx.next = freeContexts;
        freeContexts = ctx;
    }

    /** Makes the contexts {@code connections} connections may have in flight, on the control path (a connection ready). */
    void ensureContexts(final int connections)
    {
        while (contexts < contextsPerConnection * connections)
        {
            releaseContext(new ProduceContext());
            contexts++;
        }
    }
}
