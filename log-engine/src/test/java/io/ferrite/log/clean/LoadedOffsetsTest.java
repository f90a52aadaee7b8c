package io.ferrite.log.clean;

import io.ferrite.wire.compress.Codecs;
import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import io.ferrite.wire.record.RecordBatchDescriptor;
import io.ferrite.wire.record.RecordReader;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LoadedOffsets}: what the map's load keeps for the filter answers each loaded record as the map does, and a
 * batch dropped unread is filtered to the same bytes as when its records are read and asked one by one. The random
 * logs are jqwik properties of a seed: jqwik prints the seed of every run and the failing sample's (reproduce with
 * {@code @Property(seed = "...")}).
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

    @Property(tries = 40)
    void theLoadAnswersEachRecordItPutAsTheMapDoes(@ForAll final long seed)
    {
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
                int wholeBatches = 0;
                for (int p = 0; p < end; p += batch.sizeInBytes())
                {
                    reader.reset(batch.wrap(log, p));
                    // the batch may be skipped when each of its records has a key, was put and was superseded
                    boolean wholeBatchSuperseded = batch.baseOffset() >= firstDirty;
                    while (reader.hasNext())
                    {
                        final Record r = reader.next();
                        final int answer = loaded.answer(r.offset());
                        wholeBatchSuperseded &= answer == LoadedOffsets.SUPERSEDED;
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
                    assertEquals(wholeBatchSuperseded, loaded.wholeBatchSuperseded(batch.baseOffset(), batch.lastOffset(), batch.recordCount()),
                        "seed " + seed + ", the batch at " + batch.baseOffset());
                    wholeBatches += wholeBatchSuperseded ? 1 : 0;
                }
                assertTrue(latest > 0 && superseded > 0, "seed " + seed + ": " + latest + " latest, " + superseded + " superseded");
                Statistics.label("batches wholly superseded").collect(wholeBatches > 0);
            }
        }
    }

    @Provide
    Arbitrary<CompressionType> codecs()
    {
        return Arbitraries.of(CompressionType.NONE, CompressionType.LZ4, CompressionType.GZIP);
    }

    @Property(tries = 30)
    void batchesDroppedUnreadAreFilteredToTheBytesOfARecordByRecordFilter(
        @ForAll final long seed, @ForAll("codecs") final CompressionType codec)
    {
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

    /**
     * A live producer's last batch, every record of it superseded, is dropped unread and still kept as its empty
     * header (Kafka's RETAIN_EMPTY: the producer's state needs its last offset), while the producer's earlier batch,
     * superseded as wholly, goes.
     */
    @Test
    void aLiveProducersWhollySupersededLastBatchStaysAsItsEmptyHeader()
    {
        final byte[] k1 = {1};
        final byte[] k2 = {2};
        final byte[] k3 = {3};
        final byte[] value = {42};
        final ExpandableDirectByteBuffer log = new ExpandableDirectByteBuffer(1 << 12);
        final RecordBatchBuilder builder = new RecordBatchBuilder();
        int end = 0;
        builder.wrap(log, end).baseOffset(0).producer(7, (short)0, 0); // A: pid 7 at 0-1
        end += builder.appendRecord(NOW, k1, value).appendRecord(NOW, k2, value).build();
        builder.wrap(log, end).baseOffset(2).producer(7, (short)0, 2); // B: pid 7's last batch, at 2-3
        end += builder.appendRecord(NOW, k1, value).appendRecord(NOW, k2, null).build();
        builder.wrap(log, end).baseOffset(4); // C: no producer id, at 4-5: supersedes every record of A and B
        end += builder.appendRecord(NOW, k1, value).appendRecord(NOW, k2, null).build();
        builder.wrap(log, end).baseOffset(6); // D at 6
        end += builder.appendRecord(NOW, k3, value).build();
        final long highWatermark = 7;

        try (OffsetMap map = new OffsetMap(24 * 4096, 0.9))
        {
            final OffsetMapLoader loader = loader(map);
            final CleanerRetention retention = loadAll(loader, log, end);
            final RecordBatch batch = new RecordBatch();
            retention.reset(NOW, 86_400_000L, highWatermark).activeProducers().add(7, 3, (short)0);
            final RecordedRetention recorded = new RecordedRetention(retention);
            final BatchFilter filter = new BatchFilter(new Codecs(), 1 << 20);
            final RecordBatch out = new RecordBatch();
            final int[] sizes = new int[4];
            final int[] counts = new int[4];
            int b = 0;
            for (int p = 0; p < end; p += batch.sizeInBytes(), b++)
            {
                sizes[b] = filter.filter(batch.wrap(log, p), recorded);
                if (sizes[b] > 0)
                {
                    out.wrap(filter.output(), 0);
                    counts[b] = out.recordCount();
                    assertEquals(batch.baseOffset(), out.baseOffset());
                    assertEquals(batch.lastOffset(), out.lastOffset());
                    assertEquals(batch.producerId(), out.producerId());
                }
            }
            assertEquals(2, recorded.batchesUnread, "A and B dropped unread");
            assertEquals(Set.of(4L, 5L, 6L), recorded.recordsKept, "C's two records and D's");
            assertEquals(0, sizes[0], "A, pid 7's earlier batch: dropped");
            assertEquals(RecordBatchDescriptor.HEADER_LENGTH, sizes[1], "B, pid 7's last batch: kept as its empty header");
            assertEquals(0, counts[1]);
            assertEquals(2, counts[2]);
            assertEquals(1, counts[3]);
            // the same bytes as when A's and B's records are read and asked one by one
            assertArrayEquals(filter(log, end, retention, new AskingEveryRecord(retention), highWatermark, 7, 3),
                filter(log, end, retention, retention, highWatermark, 7, 3));
        }
    }

    /**
     * A CRC-valid batch whose records' offset deltas point past its own offsets (a corrupt batch; produce refuses it,
     * a follower's or a claim's append does not read the records) must not be dropped unread on the strength of other
     * batches' bits: here X's header says offsets 10-11, whose bits are Y's superseded records, while X's own records
     * are at 20-21 and are their keys' latest. The load switches the answers off, and X's records stay.
     */
    @Test
    void aRecordOutsideItsBatchsOffsetsSwitchesTheAnswersOff()
    {
        final UnsafeBuffer keys = new UnsafeBuffer(new byte[] {'P', 'Q', 'K', 'L'});
        final UnsafeBuffer value = new UnsafeBuffer(new byte[] {42});
        final ExpandableDirectByteBuffer log = new ExpandableDirectByteBuffer(1 << 12);
        final RecordBatchBuilder builder = new RecordBatchBuilder();
        int end = 0;
        // Y: offsets 5-11, two records at 10 and 11 (as a cleaned batch)
        builder.wrap(log, end).baseOffset(5).overrideLastOffsetDelta(6);
        end += builder.appendRecord(NOW, 5, keys, 0, 1, value, 0, 1).appendRecord(NOW, 6, keys, 1, 1, value, 0, 1).build();
        // X: its header says offsets 10-11 and two records; its records are at 20 and 21
        builder.wrap(log, end).baseOffset(10).overrideLastOffsetDelta(1);
        end += builder.appendRecord(NOW, 10, keys, 2, 1, value, 0, 1).appendRecord(NOW, 11, keys, 3, 1, value, 0, 1).build();
        // Z: offsets 22-23, Y's keys again
        builder.wrap(log, end).baseOffset(22);
        end += builder.appendRecord(NOW, keys, 0, 1, value, 0, 1).appendRecord(NOW, keys, 1, 1, value, 0, 1).build();

        try (OffsetMap map = new OffsetMap(24 * 4096, 0.9))
        {
            final OffsetMapLoader loader = loader(map);
            final CleanerRetention retention = loadAll(loader, log, end);
            final RecordedRetention recorded = new RecordedRetention(retention);
            final byte[] withSkips = filter(log, end, retention, recorded, 24);
            assertEquals(Set.of(20L, 21L, 22L, 23L), recorded.recordsKept, "X's records and Z's");
            assertEquals(0, recorded.batchesUnread);
            assertArrayEquals(filter(log, end, retention, new AskingEveryRecord(retention), 24), withSkips);
            assertEquals(LoadedOffsets.UNKNOWN, loader.loadedOffsets().answer(23), "answers off for the clean");
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
            assertFalse(loaded.wholeBatchSuperseded(first + 59, first + 130, 72), "offset 59 was not put");

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

    /** The grouping's count of superseded offsets in a range is the per-offset answers', across words and bounds. */
    @Property(tries = 30)
    void theSupersededOffsetsOfARangeAreThoseTheAnswersSay(@ForAll final long seed)
    {
        final Random random = new Random(seed);
        try (OffsetMap map = new OffsetMap(24 * 64, 0.9))
        {
            final LoadedOffsets loaded = new LoadedOffsets(map);
            map.clear();
            final long first = random.nextInt(1_000);
            loaded.startIfCleared(first);
            // puts at increasing offsets, each replacing a random earlier one of its "key" now and then
            final java.util.List<Long> latest = new java.util.ArrayList<>();
            long offset = first;
            for (int i = 0; i < 3_000; i++)
            {
                offset += 1 + random.nextInt(3);
                if (!latest.isEmpty() && random.nextInt(3) > 0)
                {
                    final int k = random.nextInt(latest.size());
                    loaded.onPut(offset, latest.get(k));
                    latest.set(k, offset);
                }
                else
                {
                    loaded.onPut(offset, OffsetMap.NO_OFFSET);
                    latest.add(offset);
                }
            }
            for (int r = 0; r < 50; r++)
            {
                final long from = first - 100 + random.nextInt((int)(offset - first) + 200);
                final long to = from + random.nextInt(700);
                long expected = 0;
                for (long o = from; o < to; o++)
                {
                    expected += loaded.answer(o) == LoadedOffsets.SUPERSEDED ? 1 : 0;
                }
                assertEquals(expected, loaded.supersededIn(from, to), "[" + from + ", " + to + ")");
            }
            map.clear();
            assertEquals(0, loaded.supersededIn(first, offset + 1), "a clear forgets the load");
        }
    }

    private static OffsetMapLoader loader(final OffsetMap map)
    {
        return new OffsetMapLoader(map, new CleanedTransactions(new RecordReader(new Codecs(), 1 << 20)),
            new RecordReader(new Codecs(), 1 << 20));
    }

    /** Clears the loader's map and loads every batch of the log (each CRC-valid) from offset 0: a filter for them. */
    private static CleanerRetention loadAll(final OffsetMapLoader loader, final DirectBuffer log, final int end)
    {
        final RecordBatch batch = new RecordBatch();
        loader.map().clear();
        for (int p = 0; p < end; p += batch.sizeInBytes())
        {
            assertEquals(RecordBatch.OK, batch.wrap(log, p).check(end - p), "a CRC-valid batch at " + p);
            assertTrue(loader.load(batch, 0));
        }
        return new CleanerRetention(loader, new CleanedTransactions(new RecordReader(new Codecs(), 1 << 20)));
    }

    /** One filter pass over the log (the retention reset first), its output. */
    private static byte[] filter(final DirectBuffer log, final int end, final CleanerRetention cleaner, final RecordRetention retention,
        final long highWatermark)
    {
        return filter(log, end, cleaner, retention, highWatermark, RecordBatchDescriptor.NO_PRODUCER_ID, -1);
    }

    /** As above, with {@code producerId} in the producer state, its last data batch ending at {@code lastDataOffset}. */
    private static byte[] filter(final DirectBuffer log, final int end, final CleanerRetention cleaner, final RecordRetention retention,
        final long highWatermark, final long producerId, final long lastDataOffset)
    {
        cleaner.reset(NOW, 86_400_000L, highWatermark);
        if (producerId != RecordBatchDescriptor.NO_PRODUCER_ID)
        {
            cleaner.activeProducers().add(producerId, lastDataOffset, (short)0);
        }
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
