package io.ferrite.wire.record;

import io.ferrite.wire.compress.Codecs;
import io.ferrite.wire.compress.CompressionType;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableDirectByteBuffer;

import static io.ferrite.wire.record.RecordBatchDescriptor.NO_TIMESTAMP;

/**
 * Iterates the records of a batch: in place when uncompressed, otherwise after decompressing the
 * records section once into a reusable off-heap buffer. Decompression is bounded (a small batch
 * that inflates to gigabytes is refused). One per thread; allocation-free once its buffer has grown.
 * <pre>
 *   reader.reset(batch);
 *   while (reader.hasNext()) { Record r = reader.next(); ... }
 * </pre>
 */
public final class RecordReader
{
    /** Default bound on one batch's decompressed records. */
    public static final int DEFAULT_MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024;

    private final Record record = new Record();
    private final Codecs codecs;
    private final int maxDecompressedBytes;
    private final ExpandableDirectByteBuffer decompressed = new ExpandableDirectByteBuffer(0);

    private DirectBuffer buffer;
    private int position;
    private int limit;
    private int count;
    private int index;
    private long baseOffset;
    private long baseTimestamp;
    private long logAppendTime;

    public RecordReader()
    {
        this(new Codecs(), DEFAULT_MAX_DECOMPRESSED_BYTES);
    }

    public RecordReader(final Codecs codecs, final int maxDecompressedBytes)
    {
        this.codecs = codecs;
        this.maxDecompressedBytes = maxDecompressedBytes;
    }

    /**
     * Starts on the records of {@code batch}, which {@link RecordBatch#check} has passed.
     *
     * @throws CorruptRecordException when the records do not decompress
     */
    public RecordReader reset(final RecordBatch batch)
    {
        count = batch.recordCount();
        if (count < 0)
        {
            throw CorruptRecordException.of("Found invalid record count ", count, " in magic v2 batch");
        }
        index = 0;
        baseOffset = batch.baseOffset();
        baseTimestamp = batch.baseTimestamp();
        logAppendTime = batch.timestampType() == TimestampType.LOG_APPEND_TIME ? batch.maxTimestamp() : NO_TIMESTAMP;
        final CompressionType compression = batch.compression();
        if (compression == null)
        {
            throw CorruptRecordException.of("Invalid compression type id ", batch.attributes() & 7, "");
        }
        if (compression == CompressionType.NONE)
        {
            buffer = batch.buffer();
            position = batch.recordsOffset();
            limit = position + batch.recordsLength();
        }
        else
        {
            final int n = codecs.codec(compression).decompress(
                batch.buffer(), batch.recordsOffset(), batch.recordsLength(), decompressed, 0, maxDecompressedBytes);
            buffer = decompressed;
            position = 0;
            limit = n;
        }
        return this;
    }

    /**
     * @throws CorruptRecordException when all declared records are read but bytes remain, as Kafka
     *                                refuses such a batch
     */
    public boolean hasNext()
    {
        if (index < count)
        {
            return true;
        }
        if (position != limit)
        {
            throw new CorruptRecordException("Incorrect declared batch size, records still remaining in file");
        }
        return false;
    }

    /**
     * @throws CorruptRecordException when the next record is malformed or missing
     */
    public Record next()
    {
        if (index >= count)
        {
            throw new java.util.NoSuchElementException();
        }
        if (position >= limit)
        {
            throw CorruptRecordException.of("Batch declares ", count, " records but holds ", index, "");
        }
        position = record.wrap(buffer, position, limit, baseOffset, baseTimestamp, logAppendTime);
        index++;
        return record;
    }
}
