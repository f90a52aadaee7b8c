package io.ferrite.log;

import java.nio.ByteBuffer;

/**
 * The transaction surface of one partition's log ({@link PartitionLog#transactions()}): the
 * coordinator's markers, the producer state a produce verification and DescribeProducers ask about,
 * the last stable offset and the aborted transactions a read_committed fetch lists. A facade, as
 * {@link PartitionLog} is, over {@link LogAppender} (the markers go through the append path),
 * {@link LogReader} and {@link ProducerStateManager}: final fields of final classes, so a call
 * through it is static and inlined.
 */
public final class LogTransactions
{
    /** {@link #append}'s verification: none (an embedded writer; {@link PartitionLog#append}). */
    public static final long VERIFICATION_NOT_REQUIRED = 0;
    /** {@link #append}'s verification: a transactional batch that would open a transaction is to be verified first (transaction version below 2). */
    public static final long VERIFY_FIRST = -1;
    /** As {@link #VERIFY_FIRST} for a transaction version 2 producer (produce v12+: the coordinator adds the partition). */
    public static final long VERIFY_FIRST_EPOCH_BUMP = -2;

    private final LogOffsets offsets;
    private final LogAppender appender;
    private final LogReader reader;
    private final ProducerStateManager producers;
    private final org.agrona.concurrent.EpochClock clock;
    /** The time of the writer's last expiry check (written by the writer only; read by a cleaner's copy of the state). */
    private volatile long expiryCheckMs;
    private final long producerIdExpirationMs;

    LogTransactions(final LogOffsets offsets, final LogAppender appender, final LogReader reader, final ProducerStateManager producers,
        final org.agrona.concurrent.EpochClock clock, final long producerIdExpirationMs)
    {
        this.clock = clock;
        this.producerIdExpirationMs = producerIdExpirationMs;
        this.expiryCheckMs = clock.time(); // the open's recovery left out the snapshot's producers expired by about now
        this.offsets = offsets;
        this.appender = appender;
        this.reader = reader;
        this.producers = producers;
    }

    /**
     * Appends a transaction marker (single writer, as {@link PartitionLog#append}): a control batch it
     * builds itself (see {@link MarkerBatch}), checked as Kafka checks the coordinator's — with
     * {@code epochBump} (transaction version 2) the epoch must be above the producer's but for a
     * retry, else not below it: INVALID_PRODUCER_EPOCH; a coordinator epoch below the producer's
     * last: TRANSACTION_COORDINATOR_FENCED. The producer's open transaction, if any, ends; its epoch
     * and coordinator epoch become the marker's. A producer with no transaction open still gets its
     * marker. An ABORT that ends a transaction first writes the transaction's {@code .txnindex} entry
     * in the segment that will hold the marker, then the marker's bytes (so nothing sees the marker
     * without its entry); an entry that cannot be written fails the marker with STORAGE_ERROR and the
     * transaction stays open for the coordinator's retry ({@link BatchPlacer#place}).
     */
    public void appendMarker(final long producerId, final short producerEpoch, final int coordinatorEpoch, final boolean commit,
        final boolean epochBump, final AppendResult result)
    {
        appender.appendMarker(producerId, producerEpoch, coordinatorEpoch, commit, epochBump, result);
    }

    /**
     * Appends one batch as {@link PartitionLog#append} does, with Kafka's produce verification
     * (single writer). A transactional batch that would open its producer's transaction here (none
     * open with its epoch) and comes with {@link #VERIFY_FIRST} or {@link #VERIFY_FIRST_EPOCH_BUMP}
     * is not appended: it is answered {@link AppendResult#VERIFICATION_NEEDED} with a
     * {@link AppendResult#verificationGuard}; once the transaction coordinator says the partition is
     * in the producer's transaction, it is appended again with that guard, and refused
     * INVALID_TXN_STATE if a transactional batch or marker of the producer came in between (the
     * transaction it was verified for may have ended: see {@link TxnVerifications}). Any other batch
     * is appended as by {@link PartitionLog#append}; the verification costs a non-transactional
     * batch nothing but the flag's test the producer checks make anyway.
     *
     * @param verification {@link #VERIFICATION_NOT_REQUIRED}, {@link #VERIFY_FIRST}, {@link #VERIFY_FIRST_EPOCH_BUMP},
     *     or the guard of an earlier {@link AppendResult#VERIFICATION_NEEDED}
     */
    public void append(final org.agrona.MutableDirectBuffer buffer, final int offset, final int length, final long verification,
        final AppendResult result)
    {
        appender.append(buffer, offset, length, verification, result);
    }

    /**
     * Appends a batch a coordinator built (single writer, as {@link PartitionLog#append}), checked as
     * Kafka checks an append of origin COORDINATOR: the producer's epoch must not be below the one the
     * partition knows (INVALID_PRODUCER_EPOCH), and no sequence is checked or cached for duplicates
     * (the batch has none: base sequence -1). A transactional batch opens the producer's transaction
     * here as a client's does, so the last stable offset, the marker and the {@code .txnindex} treat it
     * as any other partition's: the group coordinator's offsets inside a transaction (TxnOffsetCommit).
     * Off the produce path: a client's append never comes here.
     */
    public void appendAsCoordinator(final org.agrona.MutableDirectBuffer buffer, final int offset, final int length,
        final AppendResult result)
    {
        appender.appendAsCoordinator(buffer, offset, length, result);
    }

    /** Writer thread: whether the producer has a transaction open here with this epoch (Kafka's hasOngoingTransaction). */
    public boolean hasOngoingTransaction(final long producerId, final short producerEpoch)
    {
        return producers.hasOngoingTransaction(producerId, producerEpoch);
    }

    /**
     * Writer thread: Kafka's {@code removeExpiredProducers} by the manager's clock — forgets each producer
     * whose last batch or marker timestamp is {@code producer.id.expiration.ms} or more ago and that has no
     * transaction open here, and the produce verifications started that long ago. A forgotten producer's
     * next batch is taken with any sequence, as a new producer's (Kafka 4.4 does the same), and no later
     * snapshot has it. Every {@code producer.id.expiration.check.interval.ms} the log manager's scheduler
     * tells the config's {@link WriterTasks} that it is due, and the writer calls this for each of its logs;
     * an embedded writer with {@link WriterTasks#NONE} calls it itself. Allocates nothing; a log with no
     * producer state costs two size reads; a no-op once the log is closing (entered as an append, so a
     * close waits for it).
     *
     * @return how many producers it forgot
     */
    public int removeExpiredProducers()
    {
        if (!hasProducerState())
        {
            return 0;
        }
        final WriterGate gate = appender.gate();
        gate.recordWriter();
        assert gate.onWriterThread() : "second writer: " + Thread.currentThread();
        if (!gate.beginAppend())
        {
            return 0;
        }
        try
        {
            final long now = clock.time();
            expiryCheckMs = now;
            return producers.expire(now, producerIdExpirationMs);
        }
        finally
        {
            gate.endAppend();
        }
    }

    /** Writer thread: whether the partition remembers any producer or produce verification (what {@link #removeExpiredProducers} scans). */
    public boolean hasProducerState()
    {
        return !producers.isEmpty();
    }

    /** Writer thread: each producer the partition remembers (DescribeProducers' active producers). */
    public void forEachProducer(final ProducerVisitor visitor)
    {
        producers.forEachProducer(visitor);
    }

    /**
     * The last stable offset (any thread): the first offset of the oldest transaction still open, or
     * of one whose marker the high watermark has not passed yet, raised to the log start (DeleteRecords
     * or retention may have passed it), capped by the high watermark ({@link OngoingTxns}). The high
     * watermark when no transaction was ever seen.
     */
    public long lastStableOffset()
    {
        final long highWatermark = offsets.highWatermark(); // read first: see OngoingTxns
        return producers.lastStableOffset(highWatermark, offsets.logStartOffset());
    }

    /**
     * The aborted transactions a read_committed fetch lists with the batches it returns (Kafka's
     * {@code LocalLog.addAbortedTransactions}): from the transaction index of the segment holding
     * {@code fetchOffset} on, every transaction with {@code lastOffset >= fetchOffset} (its ABORT
     * marker at or after the fetch) and {@code firstOffset < upperBoundOffset} (it began before the end
     * of what the fetch returns), given to {@code sink} as (producer id, first offset) in index order;
     * the walk stops after the entry whose last stable offset reaches {@code upperBoundOffset}.
     *
     * <p>{@code upperBoundOffset}: for a {@link PartitionLog#read} that returned batches, the region's
     * {@link FileRegion#nextOffset} (the offset after the last batch it holds; Kafka takes the next
     * offset-index entry past the bytes it returns, a coarser bound that may list transactions that
     * begin after them, which a consumer ignores). A fetch that returned nothing lists nothing, as
     * Kafka's. Safe from any thread, concurrently with the writer; allocates nothing: the index is
     * read through {@code scratch}, the caller's (at least 34 bytes, one entry; a direct buffer of a
     * few KiB reads up to a hundred entries a system call; its position, limit and byte order are the
     * walk's). A segment without an aborted transaction costs one volatile load.
     *
     * @return {@link PartitionLog#READ_OK}, or {@link PartitionLog#READ_FAILED} (the sink may have had some entries: discard them)
     * @throws LogClosedException when the log is closed, or its close overtook the walk
     */
    public int collectAbortedTransactions(final long fetchOffset, final long upperBoundOffset, final ByteBuffer scratch,
        final AbortedTxnSink sink)
    {
        return reader.collectAbortedTransactions(fetchOffset, upperBoundOffset, scratch, sink);
    }

    /** Takes each producer a partition remembers, for a log cleaner ({@link #lastBatchesOfProducers}). */
    @FunctionalInterface
    public interface LastBatchSink
    {
        /** @param lastDataOffset the last offset of the producer's last data batch, -1 when it has written only markers since its epoch */
        void lastBatch(long producerId, long lastDataOffset, short epoch);
    }

    /** Told of each batch {@link #lastBatchesOfProducers} reads (a cleaner's throttle and counts). */
    @FunctionalInterface
    public interface ReadListener
    {
        /** @throws InterruptedException to stop the copy (the cleaner thread is stopped) */
        void batchRead(int bytes) throws InterruptedException;
    }

    /**
     * A log cleaner's (any thread, not the writer's paths): each producer the partition remembers, with the last
     * offset of its last data batch and its epoch, as Kafka's {@code lastRecordsOfActiveProducers} — from a copy of
     * the producer state rebuilt from the newest snapshot and the log after it ({@link ProducerStateCopy}), since
     * the writer's own state is not for other threads. Allocates (once per clean). A producer is in the copy until
     * the writer's periodic expiry ({@link #removeExpiredProducers}) forgot it, as in Kafka's {@code activeProducers}:
     * the snapshot's producers are filtered by the time of the writer's last expiry check (or of the log's open),
     * not by the clean's clock.
     *
     * <p>The log must not be truncated while the copy is made: a copy that read the log end, then a snapshot, across a
     * truncation could name a truncated batch as a producer's last and leave its real last batch unprotected.
     * {@link LogTruncation} stops the log's clean first and waits for it, as Kafka's {@code truncateTo} does with
     * {@code abortAndPauseCleaning} ({@link LogEnvironment#abortAndPauseCleaning}).
     *
     * @param read told of each batch read after the snapshot (the bytes), before it is used
     * @throws java.io.IOException when a snapshot could not be read
     * @throws LogClosedException when the log is closed meanwhile
     * @throws InterruptedException when {@code read} says so
     */
    public void lastBatchesOfProducers(final ReadListener read, final LastBatchSink sink)
        throws java.io.IOException, InterruptedException
    {
        ProducerStateCopy.lastBatches(producers, offsets, reader, expiryCheckMs, producerIdExpirationMs, read, sink);
    }

    /** Tells {@code listener} of each aborted transaction too (tests; the writer's, set before the log is shared). */
    void abortedTxnListener(final AbortedTxnListener listener)
    {
        producers.abortedTxnListener(listener);
    }
}
