package io.ferrite.client;

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
 * follows on). Transactional batches are all handed out (read_uncommitted: aborted records too).
 */
final class RecordCursor
{
    private final FetchResponseDecoder response = new FetchResponseDecoder();

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
     * @throws io.ferrite.wire.record.CorruptRecordException for a batch whose records do not hold together
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
                if (reader.hasNext())
                {
                    final Record r = reader.next();
                    if (r.offset() >= current.position)
                    {
                        current.position = r.offset() + 1;
                        return r;
                    }
                    continue;
                }
                inBatch = false;
                current.position = Math.max(current.position, batchNextOffset);
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
                    asked.offsets[i] == p.position)
                {
                    current = p;
                    generation = p.generation;
                    at = partitions.recordsOffset();
                    end = at + Math.max(partitions.recordsLength(), 0);
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
            current.fail(ClientErrors.CORRUPT_MESSAGE);
            current = null;
            return false;
        }
        at += size;
        final long next = batch.lastOffset() + 1;
        if (next <= current.position)
        {
            return true;
        }
        if (batch.isControl())
        {
            current.position = next; // a transaction marker: nothing for the application
            return true;
        }
        reader.reset(batch);
        batchNextOffset = next;
        inBatch = true;
        return true;
    }
}
