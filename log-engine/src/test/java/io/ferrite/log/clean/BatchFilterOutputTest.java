package io.ferrite.log.clean;

import io.ferrite.wire.compress.Codecs;
import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The output contract a cleaner writing into a fixed region (a mapped {@code .cleaned} segment) relies on: the
 * filtered batch is staged, its exact length known before a byte reaches the region, so a small batch fits the last
 * bytes of a region whatever the codec reserves while compressing (LZ4 about 66 KiB), and one that does not fit is
 * not written at all.
 */
class BatchFilterOutputTest
{
    /** Drops the record at offset delta 1 of each batch, keeps the rest: every batch is rebuilt. */
    private static final RecordRetention DROP_SECOND = new RecordRetention()
    {
        @Override
        public int checkBatch(final RecordBatch batch)
        {
            return DELETE_EMPTY;
        }

        @Override
        public boolean retainRecord(
            final RecordBatch batch, final long offset, final DirectBuffer key, final int keyOffset, final int keyLength,
            final boolean hasValue)
        {
            return offset != batch.baseOffset() + 1;
        }

        @Override
        public long newDeleteHorizonMs()
        {
            return 1_800_000_000_000L;
        }
    };

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void aFilteredBatchIsCopiedIntoTheLastBytesOfAFixedRegionOrNotAtAll(final CompressionType compression)
    {
        // the input is built in a growing buffer: the builder reserves the codec's worst case (the very reason the
        // filter stages its output)
        final ExpandableDirectByteBuffer log = new ExpandableDirectByteBuffer(4096);
        final RecordBatchBuilder builder = new RecordBatchBuilder(new Codecs());
        builder.wrap(log, 0).compression(compression).baseOffset(100).producer(-1, (short)-1, -1);
        for (int i = 0; i < 4; i++)
        {
            builder.appendRecord(1_700_000_000_000L + i, ("k" + i).getBytes(), ("value " + i).getBytes());
        }
        final int inputLength = builder.build();
        final RecordBatch batch = new RecordBatch().wrap(log, 0);
        assertEquals(RecordBatch.OK, batch.check(inputLength));

        final BatchFilter filter = new BatchFilter(new Codecs(), 1 << 20);
        final int n = filter.filter(batch, DROP_SECOND);
        assertEquals(3, filter.recordsKept());
        assertTrue(n > 0 && n < 512, compression + ": a small batch stays small: " + n + " bytes");

        // a fixed region of 64 KiB whose last n bytes are free: the batch goes exactly there
        final int regionLength = 64 * 1024;
        final UnsafeBuffer region = new UnsafeBuffer(ByteBuffer.allocateDirect(regionLength));
        final int position = regionLength - n;
        region.putBytes(position, filter.output(), 0, n);
        final byte[] written = new byte[n];
        region.getBytes(position, written);
        final List<Long> offsets = new ArrayList<>();
        for (final MutableRecordBatch b : MemoryRecords.readableRecords(ByteBuffer.wrap(written)).batches())
        {
            b.ensureValid();
            for (final Record r : b)
            {
                offsets.add(r.offset());
            }
        }
        assertEquals(List.of(100L, 102L, 103L), offsets);

        // one byte short: the caller sees it before writing and rolls to a new segment; the region is untouched
        final UnsafeBuffer tooSmall = new UnsafeBuffer(new byte[n - 1]);
        final int remaining = tooSmall.capacity();
        if (n <= remaining)
        {
            tooSmall.putBytes(0, filter.output(), 0, n);
        }
        assertArrayEquals(new byte[n - 1], tooSmall.byteArray(), "nothing half-written");
    }
}
