package io.ferrite.log.clean;

import io.ferrite.wire.compress.Codecs;
import io.ferrite.wire.record.Crc32c;
import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import io.ferrite.wire.record.RecordReader;
import io.ferrite.wire.record.TimestampType;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.Arrays;

import static io.ferrite.log.clean.RecordRetention.DELETE;
import static io.ferrite.log.clean.RecordRetention.MARKER_FOR_EMPTY_TXN;
import static io.ferrite.log.clean.RecordRetention.RETAIN_EMPTY;
import static io.ferrite.log.clean.RecordRetention.RETENTION_MASK;
import static io.ferrite.wire.record.RecordBatchDescriptor.*;
import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * Writes what a {@link RecordRetention} keeps of one RecordBatch v2: Kafka 4.4's {@code MemoryRecords.filterTo}
 * for one batch. The outcome is one of
 * <ul>
 *   <li>nothing — the batch is {@link RecordRetention#DELETE}d, or no record stays and it is not
 *   {@link RecordRetention#RETAIN_EMPTY};</li>
 *   <li>the batch's bytes unchanged — every record stays and no delete horizon is to be set;</li>
 *   <li>a new batch of the kept records — same base offset, last offset delta (so the batch still ends where the
 *   producer's did), partition leader epoch, producer id, epoch and base sequence, transactional and control
 *   bits, timestamp type and codec (the records are decompressed and compressed again); each record keeps its
 *   offset, timestamp, key, value and headers; the CRC is computed again. A batch keeping a tombstone or an empty
 *   transaction's marker and without a delete horizon gets one ({@link RecordRetention#newDeleteHorizonMs()}:
 *   the attribute bit, and the horizon as base timestamp, the records' timestamp deltas counted from it); one
 *   with a horizon keeps it;</li>
 *   <li>an empty batch — the header alone, uncompressed, no record, base timestamp -1, the original's max
 *   timestamp and offsets: a {@link RecordRetention#RETAIN_EMPTY} batch with no record kept.</li>
 * </ul>
 * The output goes to this filter's own staging buffer ({@link #output()}, from index 0), which grows as needed:
 * its size is known only once written (a rebuilt batch may grow by its new timestamp deltas, and the codecs
 * reserve room for their worst case — about 66 KiB for LZ4, 16 KiB a deflate step for GZIP — while writing), so
 * a caller writing into a fixed region, such as the mapped {@code .cleaned} segment, learns the exact length
 * first and copies the batch only if it fits (or rolls to a new segment): nothing is ever half-written into the
 * region. As Kafka's cleaner does: {@code filterTo} writes into a growing buffer, which {@code cleanInto}
 * appends to the segment. Nothing is allocated per batch or record once the staging and scratch buffers have
 * grown to the largest batch. One thread.
 */
public final class BatchFilter
{
    private final RecordReader reader;
    private final RecordBatchBuilder builder;
    private final Record record = new Record();
    private final Crc32c crc32c = new Crc32c();
    private final ExpandableDirectByteBuffer output = new ExpandableDirectByteBuffer(4096);

    // the kept records of the batch in hand: where each lies in the (decompressed) records
    private int[] keptStarts = new int[64];
    private int[] keptEnds = new int[64];
    private DirectBuffer records;

    private int recordsRead; // of the batch in hand, by readKept: all kept when it equals recordsKept
    private int recordsKept;
    private long maxOffset;
    private boolean wroteOriginal;

    /**
     * @param codecs               decompress the batches read; give the loader's and the transactions' readers codecs
     *                             of their own: a codec keeps a view of the buffer it last read, and sharing one
     *                             between readers of different buffers makes a new view at each switch
     * @param maxDecompressedBytes the bound on one batch's decompressed records (Kafka's max record body size)
     */
    public BatchFilter(final Codecs codecs, final int maxDecompressedBytes)
    {
        this.reader = new RecordReader(codecs, maxDecompressedBytes);
        // compression gets codecs of its own: a codec caches a ByteBuffer view of the buffer it last read, and one
        // codec alternating between the segment (decompress) and the builder's records (compress) would make a new
        // view twice per rebuilt batch
        this.builder = new RecordBatchBuilder(new Codecs());
    }

    /**
     * Filters {@code batch} (checked, CRC included, by the caller) into {@link #output()} at index 0.
     *
     * @return the bytes of {@link #output()} that hold what stays: 0 when nothing of the batch stays
     * @throws io.ferrite.wire.record.CorruptRecordException when its records do not parse
     */
    public int filter(final RecordBatch batch, final RecordRetention retention)
    {
        final MutableDirectBuffer out = output;
        final int outOffset = 0;
        recordsRead = 0;
        recordsKept = 0;
        maxOffset = -1;
        wroteOriginal = false;
        final int check = retention.checkBatch(batch);
        final int batchRetention = check & RETENTION_MASK;
        if (batchRetention == DELETE)
        {
            return 0;
        }
        final boolean containsTombstones;
        if (retention.keepsNoRecord(batch))
        {
            // every one superseded in the map: nothing to read (Kafka reads them), none kept, so nothing below
            // compares recordsRead
            containsTombstones = false;
        }
        else
        {
            containsTombstones = readKept(batch, retention);
        }
        if (recordsKept > 0)
        {
            final boolean markerForEmptyTxn = (check & MARKER_FOR_EMPTY_TXN) != 0;
            final boolean needsDeleteHorizon = (containsTombstones || markerForEmptyTxn) && !batch.hasDeleteHorizon();
            if (recordsKept == recordsRead && !needsDeleteHorizon)
            {
                final int size = batch.sizeInBytes();
                out.checkLimit(outOffset + size);
                out.putBytes(outOffset, batch.buffer(), batch.offset(), size);
                wroteOriginal = true;
                maxOffset = batch.lastOffset();
                return size;
            }
            return rebuild(batch, needsDeleteHorizon ? retention.newDeleteHorizonMs() : NO_TIMESTAMP, out, outOffset);
        }
        if (batchRetention == RETAIN_EMPTY)
        {
            maxOffset = batch.lastOffset();
            return writeEmpty(batch, out, outOffset);
        }
        return 0;
    }

    /**
     * The staging buffer: the last batch filtered is {@link #filter}'s answer of bytes from index 0, valid until the
     * next {@link #filter}.
     */
    public DirectBuffer output()
    {
        return output;
    }

    /** Records kept of the last batch filtered. */
    public int recordsKept()
    {
        return recordsKept;
    }

    /**
     * Kafka's {@code FilterResult.maxOffset} for the last batch: its last offset when it was written unchanged or
     * empty, the last kept record's offset when rebuilt, -1 when nothing was written.
     */
    public long maxOffset()
    {
        return maxOffset;
    }

    /** Whether the last batch was written unchanged. */
    public boolean wroteOriginal()
    {
        return wroteOriginal;
    }

    /** Asks the retention about every record, noting where the kept ones lie; whether a kept one is a tombstone. */
    private boolean readKept(final RecordBatch batch, final RecordRetention retention)
    {
        boolean containsTombstones = false;
        reader.reset(batch);
        while (reader.hasNext())
        {
            final Record r = reader.next();
            recordsRead++;
            final long offset = r.offset();
            if (retention.retainRecord(batch, offset, r.buffer(), r.keyOffset(), r.keyLength(), r.hasValue()))
            {
                if (recordsKept == keptStarts.length)
                {
                    keptStarts = Arrays.copyOf(keptStarts, recordsKept * 2);
                    keptEnds = Arrays.copyOf(keptEnds, recordsKept * 2);
                }
                keptStarts[recordsKept] = r.encodedOffset();
                keptEnds[recordsKept] = r.encodedOffset() + r.sizeInBytes();
                recordsKept++;
                records = r.buffer();
                maxOffset = Math.max(maxOffset, offset);
                containsTombstones |= !r.hasValue();
            }
        }
        return containsTombstones;
    }

    private int rebuild(final RecordBatch batch, final long newDeleteHorizonMs, final MutableDirectBuffer out, final int outOffset)
    {
        final boolean logAppendTime = batch.timestampType() == TimestampType.LOG_APPEND_TIME;
        builder.wrap(out, outOffset)
            .baseOffset(batch.baseOffset())
            .partitionLeaderEpoch(batch.partitionLeaderEpoch())
            .compression(batch.compression())
            .producer(batch.producerId(), batch.producerEpoch(), batch.baseSequence())
            .transactional(batch.isTransactional())
            .control(batch.isControl())
            .overrideLastOffsetDelta(batch.lastOffsetDelta());
        if (logAppendTime)
        {
            builder.logAppendTime(batch.maxTimestamp());
        }
        if (newDeleteHorizonMs != NO_TIMESTAMP)
        {
            builder.deleteHorizonMs(newDeleteHorizonMs);
        }
        else if (batch.hasDeleteHorizon())
        {
            builder.deleteHorizonMs(batch.baseTimestamp());
        }
        final long baseOffset = batch.baseOffset();
        final long baseTimestamp = batch.baseTimestamp();
        final long appendTime = logAppendTime ? batch.maxTimestamp() : NO_TIMESTAMP;
        final DirectBuffer in = records;
        for (int i = 0; i < recordsKept; i++)
        {
            final Record r = record;
            r.wrap(in, keptStarts[i], keptEnds[i], baseOffset, baseTimestamp, appendTime);
            builder.beginRecord(r.timestamp(), r.offsetDelta(), in, r.keyOffset(), r.keyLength(), in, r.valueOffset(), r.valueLength());
            while (r.nextHeader())
            {
                builder.header(in, r.headerKeyOffset(), r.headerKeyLength(), in, r.headerValueOffset(), r.headerValueLength());
            }
            builder.endRecord();
        }
        return builder.build();
    }

    /** Kafka's {@code DefaultRecordBatch.writeEmptyHeader}. */
    private int writeEmpty(final RecordBatch batch, final MutableDirectBuffer out, final int o)
    {
        out.checkLimit(o + HEADER_LENGTH);
        int attributes = batch.attributes() & (TIMESTAMP_TYPE_MASK | TRANSACTIONAL_MASK | CONTROL_MASK); // no codec, no horizon
        out.putLong(o + BASE_OFFSET_OFFSET, batch.baseOffset(), BIG_ENDIAN);
        out.putInt(o + BATCH_LENGTH_OFFSET, HEADER_LENGTH - LOG_OVERHEAD, BIG_ENDIAN);
        out.putInt(o + PARTITION_LEADER_EPOCH_OFFSET, batch.partitionLeaderEpoch(), BIG_ENDIAN);
        out.putByte(o + MAGIC_OFFSET, MAGIC_V2);
        out.putShort(o + ATTRIBUTES_OFFSET, (short)attributes, BIG_ENDIAN);
        out.putInt(o + LAST_OFFSET_DELTA_OFFSET, batch.lastOffsetDelta(), BIG_ENDIAN);
        out.putLong(o + BASE_TIMESTAMP_OFFSET, NO_TIMESTAMP, BIG_ENDIAN);
        out.putLong(o + MAX_TIMESTAMP_OFFSET, batch.maxTimestamp(), BIG_ENDIAN);
        out.putLong(o + PRODUCER_ID_OFFSET, batch.producerId(), BIG_ENDIAN);
        out.putShort(o + PRODUCER_EPOCH_OFFSET, batch.producerEpoch(), BIG_ENDIAN);
        out.putInt(o + BASE_SEQUENCE_OFFSET, batch.baseSequence(), BIG_ENDIAN);
        out.putInt(o + RECORD_COUNT_OFFSET, 0, BIG_ENDIAN);
        out.putInt(o + CRC_OFFSET, crc32c.compute(out, o + ATTRIBUTES_OFFSET, HEADER_LENGTH - ATTRIBUTES_OFFSET), BIG_ENDIAN);
        return HEADER_LENGTH;
    }
}
