package io.ferrite.log.clean;

import io.ferrite.wire.compress.Codecs;
import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import io.ferrite.wire.record.RecordReader;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A clean's steady state allocates nothing: loading the map, deciding and rebuilding batches (a tombstone kept,
 * duplicates dropped, every codec, committed and aborted transactions and their markers) — code that allocated per record or per batch fails every window, while a
 * window holding a JIT tier change does not count (the fewest bytes of several windows).
 */
class BatchFilterAllocationTest
{
    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void loadingAndFilteringAllocateNothing(final CompressionType compression)
    {
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final Codecs codecs = new Codecs();
        final UnsafeBuffer log = new UnsafeBuffer(ByteBuffer.allocateDirect(1 << 20));
        final RecordBatchBuilder builder = new RecordBatchBuilder(codecs);
        final UnsafeBuffer key = new UnsafeBuffer(new byte[8]);
        final UnsafeBuffer value = new UnsafeBuffer(new byte[100]);
        int end = 0;
        long offset = 0;
        long abortedFirst = -1;
        long abortedMarker = -1;
        long lastOfProducer7 = -1;
        for (int b = 0; b < 50; b++)
        {
            // every fifth batch is a transaction of producer 9 with its marker: aborted in batches 20 to 24
            final boolean transactional = b % 5 == 4;
            final long producerId = transactional ? 9 : 7;
            builder.wrap(log, end).compression(compression).baseOffset(offset).producer(producerId, (short)0, (int)offset)
                .transactional(transactional);
            for (int i = 0; i < 10; i++)
            {
                key.putLong(0, (b * 10 + i) % 37);
                builder.appendRecord(1_700_000_000_000L + offset, key, 0, 8, value, 0, i == 3 ? -1 : 100);
                offset++;
            }
            end += builder.build();
            lastOfProducer7 = transactional ? lastOfProducer7 : offset - 1;
            if (transactional)
            {
                final boolean commit = b / 5 != 4;
                if (!commit)
                {
                    abortedFirst = offset - 10;
                    abortedMarker = offset;
                }
                builder.wrap(log, end).baseOffset(offset).producer(9, (short)0, -1).transactional(true).control(true)
                    .appendEndTxnMarker(1_700_000_000_000L + offset, commit, 1);
                end += builder.build();
                offset++;
            }
        }
        final RecordBatch batch = new RecordBatch();
        final ExpandableDirectByteBuffer out = new ExpandableDirectByteBuffer(1 << 20);
        try (OffsetMap map = new OffsetMap(24 * 1024, 0.9))
        {
            // the loader's codecs are not the filter's: a codec shared by both remakes its view of the buffer it
            // decompresses into at each switch between loading and filtering (64 bytes, twice a clean)
            final Codecs loaderCodecs = new Codecs();
            final OffsetMapLoader loader = new OffsetMapLoader(map, new CleanedTransactions(new RecordReader(loaderCodecs, 1 << 20)),
                new RecordReader(loaderCodecs, 1 << 20));
            final CleanerRetention retention = new CleanerRetention(loader, new CleanedTransactions(new RecordReader(codecs, 1 << 20)));
            final BatchFilter filter = new BatchFilter(codecs, 1 << 20);
            long fewest = Long.MAX_VALUE;
            int written = 0;
            for (int window = 0; window < 8; window++)
            {
                final long before = threads.getCurrentThreadAllocatedBytes();
                for (int round = 0; round < 20; round++)
                {
                    map.clear();
                    loader.transactions().clear();
                    retention.reset(1_800_000_000_000L, 86_400_000L, offset).activeProducers().add(7, lastOfProducer7, (short)0);
                    loader.transactions().addAbortedTransaction(9, abortedFirst, abortedMarker, abortedMarker + 1);
                    retention.transactions().addAbortedTransaction(9, abortedFirst, abortedMarker, abortedMarker + 1);
                    for (int p = 0; p < end; p += batch.sizeInBytes())
                    {
                        loader.load(batch.wrap(log, p), 0);
                    }
                    written = 0;
                    for (int p = 0; p < end; p += batch.sizeInBytes())
                    {
                        final int n = filter.filter(batch.wrap(log, p), retention);
                        out.putBytes(written, filter.output(), 0, n);
                        written += n;
                    }
                }
                fewest = Math.min(fewest, threads.getCurrentThreadAllocatedBytes() - before);
            }
            assertTrue(written > 0 && written < end, "the clean dropped duplicates and kept the rest: " + written + " of " + end);
            assertEquals(0, fewest, compression + ": bytes allocated by 20 loads and cleans of 50 batches");
        }
    }
}
