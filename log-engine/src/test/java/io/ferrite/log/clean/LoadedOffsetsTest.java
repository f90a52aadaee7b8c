package io.ferrite.log.clean;

import io.ferrite.wire.compress.Codecs;
import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import io.ferrite.wire.record.RecordReader;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LoadedOffsets}: what the map's load keeps for the filter answers each loaded record as the map does, and a
 * batch dropped unread is filtered to the same bytes as when its records are read and asked one by one.
 */
class LoadedOffsetsTest
{
    private static final long NOW = 1_800_000_000_000L;

    /** A log of batches of 1-12 records, keys 0..keys-1, one in 10 a tombstone and one in 25 without a key. */
    private static int log(final ExpandableDirectByteBuffer log, final Random random, final int keys, final CompressionType codec)
    {
        final RecordBatchBuilder builder = new RecordBatchBuilder();
        final UnsafeBuffer key = new UnsafeBuffer(new byte[8]);
        final UnsafeBuffer value = new UnsafeBuffer(new byte[20]);
        int end = 0;
        long offset = 0;
        for (int b = 0; b < 300; b++)
        {
            builder.wrap(log, end).compression(codec).baseOffset(offset);
            for (int i = 1 + random.nextInt(12); i > 0; i--)
            {
                key.putLong(0, random.nextInt(keys));
                builder.appendRecord(1_700_000_000_000L + offset, key, 0, random.nextInt(25) == 0 ? -1 : 8,
                    value, 0, random.nextInt(10) == 0 ? -1 : 20);
                offset++;
            }
            end += builder.build();
        }
        return end;
    }

    @Test
    void theLoadAnswersEachRecordItPutAsTheMapDoes()
    {
        final long seed = new Random().nextLong();
        final Random random = new Random(seed);
        final ExpandableDirectByteBuffer log = new ExpandableDirectByteBuffer(1 << 16);
        final int end = log(log, random, 1 + random.nextInt(40), CompressionType.NONE);
        final long firstDirty = random.nextInt(200);
        try (OffsetMap map = new OffsetMap(24 * 4096, 0.9, null, 1 << random.nextInt(6)))
        {
            final OffsetMapLoader loader = loader(map);
            final RecordBatch batch = new RecordBatch();
            for (int round = 0; round < 2; round++) // the second after a clear: nothing of the first is left
            {
                map.clear();
                for (int p = 0; p < end; p += batch.sizeInBytes())
                {
                    batch.wrap(log, p);
                    assertTrue(loader.load(batch, firstDirty));
                }
                final LoadedOffsets loaded = loader.loadedOffsets();
                final RecordReader reader = new RecordReader(new Codecs(), 1 << 20);
                int latest = 0;
                int superseded = 0;
                for (int p = 0; p < end; p += batch.sizeInBytes())
                {
                    reader.reset(batch.wrap(log, p));
                    while (reader.hasNext())
                    {
                        final Record r = reader.next();
                        final int answer = loaded.answer(r.offset());
                        if (r.offset() < firstDirty || !r.hasKey())
                        {
                            assertEquals(LoadedOffsets.UNKNOWN, answer, "seed " + seed + ", offset " + r.offset());
                            continue;
                        }
                        final boolean mapsLatest = r.offset() >= map.get(r.buffer(), r.keyOffset(), r.keyLength());
                        assertEquals(mapsLatest ? LoadedOffsets.LATEST : LoadedOffsets.SUPERSEDED, answer,
                            "seed " + seed + ", offset " + r.offset());
                        latest += mapsLatest ? 1 : 0;
                        superseded += mapsLatest ? 0 : 1;
                    }
                }
                assertTrue(latest > 0 && superseded > 0, "seed " + seed + ": " + latest + " latest, " + superseded + " superseded");
            }
        }
    }

    @Test
    void batchesDroppedUnreadAreFilteredToTheBytesOfARecordByRecordFilter()
    {
        for (final CompressionType codec : new CompressionType[] {CompressionType.NONE, CompressionType.LZ4, CompressionType.GZIP})
        {
            final long seed = new Random().nextLong();
            final Random random = new Random(seed);
            final ExpandableDirectByteBuffer log = new ExpandableDirectByteBuffer(1 << 16);
            final int end = log(log, random, 1 + random.nextInt(30), codec);
            try (OffsetMap map = new OffsetMap(24 * 4096, 0.9))
            {
                final OffsetMapLoader loader = loader(map);
                final CleanerRetention retention = new CleanerRetention(loader, new CleanedTransactions(new RecordReader(new Codecs(), 1 << 20)));
                final RecordBatch batch = new RecordBatch();
                map.clear();
                long lastOffset = -1;
                for (int p = 0; p < end; p += batch.sizeInBytes())
                {
                    assertTrue(loader.load(batch.wrap(log, p), 0));
                    lastOffset = batch.lastOffset();
                }
                map.updateLatestOffset(lastOffset);
                final RecordedRetention skipping = new RecordedRetention(retention);
                final byte[] withSkips = filter(log, end, retention, skipping, lastOffset + 1);
                final byte[] recordByRecord = filter(log, end, retention, new AskingEveryRecord(retention), lastOffset + 1);
                assertArrayEquals(recordByRecord, withSkips, codec + ", seed " + seed);
                assertTrue(skipping.batchesUnread > 0, codec + ", seed " + seed + ": no batch dropped unread");
                assertTrue(withSkips.length > 0 && withSkips.length < end, codec + ", seed " + seed + ": " + withSkips.length);
            }
        }
    }

    @Test
    void offsetsThatDoNotIncreaseSwitchTheAnswersOff()
    {
        try (OffsetMap map = new OffsetMap(24 * 64, 0.9))
        {
            final LoadedOffsets loaded = new LoadedOffsets(map);
            map.clear();
            loaded.startIfCleared(10);
            loaded.onPut(15, OffsetMap.NO_OFFSET);
            loaded.onPut(20, 15);
            assertEquals(LoadedOffsets.SUPERSEDED, loaded.answer(15));
            assertEquals(LoadedOffsets.LATEST, loaded.answer(20));
            assertEquals(LoadedOffsets.UNKNOWN, loaded.answer(9));
            loaded.onPut(20, OffsetMap.NO_OFFSET); // a corrupt batch's second record at the same offset
            assertEquals(LoadedOffsets.UNKNOWN, loaded.answer(15));
            assertEquals(LoadedOffsets.UNKNOWN, loaded.answer(20));
            loaded.startIfCleared(10); // the same clean: still off
            assertEquals(LoadedOffsets.UNKNOWN, loaded.answer(20));

            map.clear();
            assertEquals(LoadedOffsets.UNKNOWN, loaded.answer(20), "a clear forgets the load, before the next starts");
            loaded.startIfCleared(10);
            loaded.onPut(20, OffsetMap.NO_OFFSET);
            assertEquals(LoadedOffsets.LATEST, loaded.answer(20));
        }
    }

    @Test
    void aWholeBatchAcrossWordsAndPastTheFirstBitsets()
    {
        try (OffsetMap map = new OffsetMap(24 * 64, 0.9))
        {
            final LoadedOffsets loaded = new LoadedOffsets(map);
            map.clear();
            final long first = 1_000;
            loaded.startIfCleared(first);
            // a batch of 71 records at [first + 60, first + 130], all superseded by the next batch but its offset 129
            for (long o = first + 60; o <= first + 130; o++)
            {
                loaded.onPut(o, OffsetMap.NO_OFFSET);
            }
            loaded.onWholeBatch(first + 60);
            for (long o = first + 60; o <= first + 130; o++)
            {
                if (o != first + 129)
                {
                    loaded.onPut(o + 1_000, o);
                }
            }
            assertFalse(loaded.wholeBatchSuperseded(first + 60, first + 130, 71));
            loaded.onPut(first + 2_000, first + 129);
            assertTrue(loaded.wholeBatchSuperseded(first + 60, first + 130, 71));
            assertFalse(loaded.wholeBatchSuperseded(first + 60, first + 130, 70), "a record count other than the offsets'");
            assertFalse(loaded.wholeBatchSuperseded(first + 61, first + 130, 70), "no whole batch starts there");

            // past the first bitsets' 65 536 offsets, and at the last one tracked
            final long far = first + 300_000;
            loaded.onPut(far, first + 2_000);
            assertEquals(LoadedOffsets.SUPERSEDED, loaded.answer(first + 2_000));
            assertEquals(LoadedOffsets.LATEST, loaded.answer(far));
            loaded.onPut(first + LoadedOffsets.MAX_OFFSETS - 1, far);
            loaded.onPut(first + LoadedOffsets.MAX_OFFSETS, first + LoadedOffsets.MAX_OFFSETS - 1);
            assertEquals(LoadedOffsets.SUPERSEDED, loaded.answer(far));
            assertEquals(LoadedOffsets.SUPERSEDED, loaded.answer(first + LoadedOffsets.MAX_OFFSETS - 1));
            assertEquals(LoadedOffsets.UNKNOWN, loaded.answer(first + LoadedOffsets.MAX_OFFSETS), "not tracked: ask the map");
            assertTrue(loaded.wholeBatchSuperseded(first + 60, first + 130, 71), "kept through the growth");
        }
    }

    private static OffsetMapLoader loader(final OffsetMap map)
    {
        return new OffsetMapLoader(map, new CleanedTransactions(new RecordReader(new Codecs(), 1 << 20)),
            new RecordReader(new Codecs(), 1 << 20));
    }

    /** One filter pass over the log (the retention reset first), its output. */
    private static byte[] filter(final DirectBuffer log, final int end, final CleanerRetention cleaner, final RecordRetention retention,
        final long highWatermark)
    {
        cleaner.reset(NOW, 86_400_000L, highWatermark);
        final BatchFilter filter = new BatchFilter(new Codecs(), 1 << 20);
        final ExpandableDirectByteBuffer out = new ExpandableDirectByteBuffer(1 << 16);
        final RecordBatch batch = new RecordBatch();
        int written = 0;
        for (int p = 0; p < end; p += batch.sizeInBytes())
        {
            final int n = filter.filter(batch.wrap(log, p), retention);
            out.putBytes(written, filter.output(), 0, n);
            written += n;
        }
        final byte[] bytes = new byte[written];
        out.getBytes(0, bytes);
        return bytes;
    }

    /** The retention it wraps, but asked about every record: no batch dropped unread. */
    private static final class AskingEveryRecord implements RecordRetention
    {
        private final RecordRetention delegate;

        AskingEveryRecord(final RecordRetention delegate)
        {
            this.delegate = delegate;
        }

        @Override
        public int checkBatch(final RecordBatch batch)
        {
            return delegate.checkBatch(batch);
        }

        @Override
        public boolean retainRecord(final RecordBatch batch, final long offset, final DirectBuffer key, final int keyOffset,
            final int keyLength, final boolean hasValue)
        {
            return delegate.retainRecord(batch, offset, key, keyOffset, keyLength, hasValue);
        }

        @Override
        public long newDeleteHorizonMs()
        {
            return delegate.newDeleteHorizonMs();
        }
    }
}
