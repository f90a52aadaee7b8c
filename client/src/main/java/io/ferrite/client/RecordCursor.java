package io.ferrite.client;

import io.ferrite.wire.record.CorruptRecordException;
import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchDescriptor;
import io.ferrite.wire.record.RecordReader;
import io.ferrite.wire.message.FetchResponseDecoder;

/**
 * Walks one Fetch answer ({@link NodeFetcher#draining}) record by record, across {@code poll} calls: topics,
 * partitions, batches (CRC checked), records — read in place, a compressed batch decompressed once into the reader's
 * reused off-heap buffer through wire's codecs (the reader and flyweight of the answer's buffer, {@link NodeFetcher.Answer}). A partition's records are handed out only while its position is the
 * offset the Fetch asked for and no seek came since; records below the position inside a batch, whole batches below
 * it and control batches are skipped, and the position moves past each batch (so the next answer, asked from there,
 * follows on). read_uncommitted hands out every transactional batch (aborted records too); read_committed leaves out
 * those of aborted transactions by the answer's list ({@link AbortedTransactions}). The broker answers read_committed
 * with batches below the last stable offset only, so the position never passes it.
 */
final class RecordCursor
{
    /** kafka-clients' {@code ControlRecordType}: the key's second int16; ABORT is 0, COMMIT 1. */
    private static final short ABORT_MARKER = 0;
    /** A control record's key: version (int16), type (int16). */
    private static final int CONTROL_KEY_LENGTH = 4;

    private final FetchResponseDecoder response = new FetchResponseDecoder();
    /** Null under read_uncommitted. */
    private final AbortedTransactions aborted;

    private NodeFetcher fetcher;
    /** The draining answer's own flyweight ({@link NodeFetcher.Answer}). */
    private RecordBatch batch;
    private RecordReader reader;
    private FetchResponseDecoder.FetchableTopicResponse topics;
    private FetchResponseDecoder.PartitionData partitions;
    private FetchPosition current;
    private int generation;
    private int at;
    private int end;
    private long batchNextOffset;
    private boolean inBatch;

    RecordCursor(final boolean readCommitted)
    {
        this.aborted = readCommitted ? new AbortedTransactions() : null;
    }

    boolean active()
    {
        return fetcher != null;
    }

    NodeFetcher fetcher()
    {
        return fetcher;
    }

    void start(final NodeFetcher f)
    {
        fetcher = f;
        batch = f.draining.batch;
        reader = f.draining.reader;
        response.wrap(f.draining.bytes, 0, f.draining.length, f.draining.version);
        topics = response.responses();
        partitions = null;
        current = null;
        inBatch = false;
    }

    /** The partition of the record {@link #next} returned. */
    FetchPosition current()
    {
        return current;
    }

    /**
     * The next record to hand out, or null when the answer is done ({@link NodeFetcher#doneDraining} called).
     *
     * A batch or record that does not hold together stops its partition with CORRUPT_MESSAGE (nothing is thrown here).
     */
    Record next()
    {
        while (true)
        {
            if (current != null && current.generation != generation)
            {
                current = null; // a seek since: the rest of this partition is stale
                inBatch = false;
            }
            if (inBatch)
            {
                final Record r = nextInBatch();
                if (r != null)
                {
                    if (r.offset() >= current.position)
                    {
                        current.position = r.offset() + 1;
                        return r;
                    }
                    continue;
                }
                if (current != null)
                {
                    current.position = Math.max(current.position, batchNextOffset);
                }
                continue;
            }
            if (current != null && end - at >= RecordBatchDescriptor.LOG_OVERHEAD)
            {
                if (nextBatch())
                {
                    continue;
                }
                at = end;
                continue;
            }
            if (partitions != null && partitions.hasNext())
            {
                partitions.next();
                enterPartition();
                continue;
            }
            if (topics.hasNext())
            {
                topics.next();
                partitions = topics.partitions();
                continue;
            }
            fetcher.doneDraining();
            fetcher = null;
            current = null;
            return null;
        }
    }

    private void enterPartition()
    {
        final NodeFetcher f = fetcher;
        current = null;
        final NodeFetcher.Asked asked = f.draining.asked;
        for (int i = 0; i < asked.count; i++)
        {
            final FetchPosition p = asked.parts[i];
            if (p.partition == partitions.partitionIndex() &&
                p.topic.nameEquals(f.draining.bytes, topics.topicOffset(), topics.topicLength()))
            {
                if (partitions.errorCode() == ClientErrors.NONE && p.state == FetchPosition.State.FETCHING &&
                    asked.offsets[i] == p.position && asked.generations[i] == p.generation)
                {
                    current = p;
                    generation = p.generation;
                    at = partitions.recordsOffset();
                    end = at + Math.max(partitions.recordsLength(), 0);
                    if (aborted != null)
                    {
                        aborted.load(partitions);
                    }
                }
                return;
            }
        }
    }

    /** Steps over one batch, entering it when it holds records to hand out: false at a partial or corrupt batch. */
    private boolean nextBatch()
    {
        batch.wrap(fetcher.draining.bytes, at);
        final int size = batch.sizeInBytes();
        if (size < RecordBatchDescriptor.LOG_OVERHEAD || size > end - at)
        {
            return false; // the partial batch a size-bounded answer ends with
        }
        final int check = batch.check(end - at);
        if (check != RecordBatch.OK)
        {
            failPartition();
            return false;
        }
        at += size;
        final long next = batch.lastOffset() + 1;
        if (aborted != null && batch.producerId() >= 0)
        {
            final boolean abortMarker;
            try
            {
                abortMarker = batch.isControl() && isAbortMarker();
            }
            catch (final CorruptRecordException e)
            {
                failPartition();
                return false;
            }
            if (aborted.skip(batch, abortMarker))
            {
                current.position = Math.max(current.position, next); // an aborted transaction's batch, or its marker
                return true;
            }
        }
        if (next <= current.position)
        {
            return true;
        }
        if (batch.isControl())
        {
            current.position = next; // a transaction marker: nothing for the application
            return true;
        }
        try
        {
            reader.reset(batch);
        }
        catch (final CorruptRecordException e)
        {
            failPartition(); // a bad record count or compression id, or a batch that does not decompress
            return false;
        }
        batchNextOffset = next;
        inBatch = true;
        return true;
    }

    /** Whether the control batch's record is an ABORT marker (a control batch holds one record). */
    private boolean isAbortMarker()
    {
        reader.reset(batch);
        if (!reader.hasNext())
        {
            return false;
        }
        final Record r = reader.next();
        return r.keyLength() >= CONTROL_KEY_LENGTH &&
            r.buffer().getShort(r.keyOffset() + 2, java.nio.ByteOrder.BIG_ENDIAN) == ABORT_MARKER;
    }

    /**
     * The batch's next record, or null at its end ({@code inBatch} cleared) or at a malformed record: then the
     * partition stops with CORRUPT_MESSAGE, its position left before the record, and the rest of the answer goes on.
     */
    private Record nextInBatch()
    {
        try
        {
            if (reader.hasNext())
            {
                return reader.next();
            }
        }
        catch (final CorruptRecordException e)
        {
            failPartition();
            at = end;
            return null;
        }
        inBatch = false;
        return null;
    }

    /** The current partition stops with CORRUPT_MESSAGE ({@code poll} reports it, naming it); its position stays. */
    private void failPartition()
    {
        current.fail(ClientErrors.CORRUPT_MESSAGE);
        current = null;
        inBatch = false;
    }
}
