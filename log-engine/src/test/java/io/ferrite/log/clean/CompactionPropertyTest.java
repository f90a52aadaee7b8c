package io.ferrite.log.clean;

import io.ferrite.wire.compress.Codecs;
import io.ferrite.wire.record.RecordReader;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.constraints.IntRange;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.message.AbortedTxn;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.storage.internals.log.LastRecord;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The cleaner's parts ({@link OffsetMapLoader}, {@link CleanerRetention}, {@link BatchFilter}) over random logs —
 * keys, values, tombstones, headers, every codec, both timestamp types, plain, idempotent and transactional
 * producers, committed, aborted and empty transactions — cleaned twice (the second time with the tombstones' delete
 * horizon passed or not), checked three ways:
 * <ul>
 *   <li>against a model: exactly the records it expects stay, at their offsets, with their timestamps, keys,
 *   values and headers; tombstones stay until the horizon, aborted data goes, markers stay in the first clean,
 *   every live producer's last batch stays;</li>
 *   <li>by kafka-clients: every batch written parses with {@code MemoryRecords.readableRecords} and passes
 *   {@code ensureValid()} (the CRC);</li>
 *   <li>against Kafka 4.4's own {@code MemoryRecords.filterTo} ({@link KafkaFilterTo}) given the answers our
 *   retention gave: the bytes {@link BatchFilter} writes are those Kafka writes for the same decisions, byte for
 *   byte for NONE, gzip, snappy and lz4 (for zstd, whose frames the wire module writes with the content size, the
 *   header but for length and CRC, and every record). The decisions themselves are checked by the model only.</li>
 * </ul>
 * Each clean runs the paths a cleaner takes: the second loads its map from where the first stopped (often inside a
 * batch), the high watermark is the log end or an earlier batch's end (that batch stays, empty if need be), and
 * the log is filtered in one to three segments, each adding its aborted transactions.
 * The log is built with kafka-clients' {@code MemoryRecordsBuilder}, not ours. jqwik prints each run's seed.
 */
class CompactionPropertyTest
{
    private static final long DELETE_RETENTION_MS = 86_400_000L;
    private static final long T0 = 1_700_000_000_000L;
    private static final Compression[] CODECS = {
        Compression.NONE, Compression.gzip().build(), Compression.snappy().build(), Compression.lz4().build(), Compression.zstd().build()};

    /** One record of the generated log. */
    private record Rec(long offset, long timestamp, byte[] key, byte[] value, Header[] headers, boolean control, boolean aborted,
        boolean emptyTxnMarker)
    {
    }

    /** The generated log and what a clean is told about it. */
    private static final class Log
    {
        final ByteBuffer bytes = ByteBuffer.allocate(1 << 20);
        final Map<Long, Rec> records = new LinkedHashMap<>();
        final List<AbortedTxn> aborted = new ArrayList<>();
        final Map<Long, LastRecord> active = new HashMap<>();
        final List<Long> batchEnds = new ArrayList<>();
        final Set<Long> batchStarts = new HashSet<>();
        long endOffset;
    }

    @Property(tries = 150)
    void cleaningKeepsTheModelsRecordsInKafkasBytes(
        @ForAll final long seed, @ForAll @IntRange(min = 1, max = 12) final int keys, @ForAll @IntRange(min = 2, max = 40) final int mapSlots,
        @ForAll final boolean horizonPassed) throws Exception
    {
        final Random r = new Random(seed);
        final Log log = generate(r, keys);
        final ByteBuffer input = log.bytes.duplicate().flip();

        // first clean: a map of a few slots may fill up (the records past it stay for a later pass)
        final long now1 = T0 + 10_000_000;
        final int mapBytes = 24 * mapSlots;
        final List<AbortedTxn> kept = new ArrayList<>();
        // the high watermark: the log end, or the end of an earlier batch
        final long highWatermark = r.nextBoolean() ? log.endOffset : log.batchEnds.get(r.nextInt(log.batchEnds.size()));
        final Cleaned pass1Clean = clean(input, log, mapBytes, 0, highWatermark, r, now1, kept);
        final byte[] pass1 = pass1Clean.bytes();
        assertSameBatches(bytes(KafkaFilterTo.filter(input, pass1Clean.answers(), now1, DELETE_RETENTION_MS)), pass1, "the first clean");
        final long loadedTo = latestOffsetLoaded(input, log, mapBytes);
        final Set<Long> expected1 = expectedAfterFirstClean(log, loadedTo);
        final Map<Long, Long> horizons = checkOutput(pass1, log, expected1, true, highWatermark);
        for (final Map.Entry<Long, Long> h : horizons.entrySet())
        {
            assertEquals(now1 + DELETE_RETENTION_MS, h.getValue(), "the delete horizon of the batch holding " + h.getKey());
        }
        assertEquals(log.aborted, kept, "every aborted transaction with data keeps its index entry, in marker order");

        // second clean, with a map for every key loaded from where the first pass stopped (Kafka's next first dirty
        // offset, often inside a batch), or — when the first map held the whole log — from any offset, as a pass
        // that had stopped there: the first pass deduplicated everything before it, so either way duplicates left by
        // the first go; tombstones and empty transactions' markers go when the horizon has passed
        final long now2 = horizonPassed ? now1 + DELETE_RETENTION_MS : now1 + DELETE_RETENTION_MS - 1;
        final boolean mapFilled = loadedTo < log.endOffset - 1;
        final long firstDirty2 = mapFilled ? loadedTo + 1 : (long)r.nextInt((int)log.endOffset);
        final ByteBuffer second = ByteBuffer.wrap(pass1);
        final List<AbortedTxn> kept2 = new ArrayList<>();
        final Cleaned pass2Clean = clean(second, log, 24 * 64, firstDirty2, highWatermark, r, now2, kept2);
        final byte[] pass2 = pass2Clean.bytes();
        assertSameBatches(bytes(KafkaFilterTo.filter(second, pass2Clean.answers(), now2, DELETE_RETENTION_MS)), pass2, "the second clean");
        final Set<Long> expected2 = new TreeSet<>();
        for (final long offset : expectedAfterFirstClean(log, Long.MAX_VALUE))
        {
            final Rec rec = log.records.get(offset);
            // a marker of a transaction without data got its horizon in the first clean; a tombstone too
            final boolean horizonSet = rec.control() ? rec.emptyTxnMarker() : rec.value() == null;
            if (!horizonSet || !horizonPassed)
            {
                expected2.add(offset);
            }
        }
        checkOutput(pass2, log, expected2, false, highWatermark);
        // the first clean dropped every aborted transaction's records; an aborted batch it kept empty (the last of a
        // live producer, or the one ending at the high watermark) is still its transaction's data, so its entry stays
        assertEquals(abortedWithBatches(pass1, log.aborted), kept2, "the ABORT entries the second clean keeps");

        // the generator must reach the cases that matter, in enough of the tries
        final boolean emptyBatchKept = hasEmptyBatch(pass1) || hasEmptyBatch(pass2);
        Statistics.label("map filled in the first clean").collect(mapFilled);
        Statistics.label("aborted transaction").collect(!log.aborted.isEmpty());
        Statistics.label("empty batch kept").collect(emptyBatchKept);
        Statistics.label("tombstone given a horizon").collect(!horizons.isEmpty());
        Statistics.label("second clean loaded from inside a batch").collect(!log.batchStarts.contains(firstDirty2));
        Statistics.label("high watermark below the log end").collect(highWatermark < log.endOffset);
        Statistics.label("several segments in a clean").collect(pass1Clean.segments() > 1 || pass2Clean.segments() > 1);
        Statistics.label("a batch's records dropped unread").collect(pass1Clean.answers().batchesUnread + pass2Clean.answers().batchesUnread > 0);
        Statistics.label("second clean loaded from inside a batch").coverage(c -> c.check(true).percentage(pct -> pct >= 20));
        Statistics.label("high watermark below the log end").coverage(c -> c.check(true).percentage(pct -> pct >= 20));
        Statistics.label("several segments in a clean").coverage(c -> c.check(true).percentage(pct -> pct >= 30));
        Statistics.label("map filled in the first clean").coverage(c -> c.check(true).percentage(pct -> pct >= 5));
        Statistics.label("aborted transaction").coverage(c -> c.check(true).percentage(pct -> pct >= 20));
        Statistics.label("empty batch kept").coverage(c -> c.check(true).percentage(pct -> pct >= 10));
        Statistics.label("tombstone given a horizon").coverage(c -> c.check(true).percentage(pct -> pct >= 30));
        Statistics.label("a batch's records dropped unread").coverage(c -> c.check(true).percentage(pct -> pct >= 20));
    }

    /** The aborted transactions of which a data batch, empty or not, is in {@code cleaned}, in marker order. */
    private static List<AbortedTxn> abortedWithBatches(final byte[] cleaned, final List<AbortedTxn> aborted)
    {
        final List<AbortedTxn> withBatches = new ArrayList<>();
        for (final AbortedTxn t : aborted)
        {
            for (final MutableRecordBatch batch : MemoryRecords.readableRecords(ByteBuffer.wrap(cleaned)).batches())
            {
                if (!batch.isControlBatch() && batch.isTransactional() && batch.producerId() == t.producerId() &&
                    batch.lastOffset() >= t.firstOffset() && batch.baseOffset() < t.lastOffset())
                {
                    withBatches.add(t);
                    break;
                }
            }
        }
        return withBatches;
    }

    private static boolean hasEmptyBatch(final byte[] cleaned)
    {
        for (final MutableRecordBatch batch : MemoryRecords.readableRecords(ByteBuffer.wrap(cleaned)).batches())
        {
            if (batch.countOrNull() == 0)
            {
                return true;
            }
        }
        return false;
    }

    /** Kafka's cleaned bytes and ours, batch by batch, so that a difference names the batch. */
    private static void assertSameBatches(final byte[] kafka, final byte[] ours, final String clean)
    {
        final List<MutableRecordBatch> expected = new ArrayList<>();
        MemoryRecords.readableRecords(ByteBuffer.wrap(kafka)).batches().forEach(expected::add);
        final List<MutableRecordBatch> actual = new ArrayList<>();
        MemoryRecords.readableRecords(ByteBuffer.wrap(ours)).batches().forEach(actual::add);
        for (int i = 0; i < Math.min(expected.size(), actual.size()); i++)
        {
            final MutableRecordBatch e = expected.get(i);
            final MutableRecordBatch a = actual.get(i);
            final ByteBuffer eb = ByteBuffer.allocate(e.sizeInBytes());
            e.writeTo(eb);
            final ByteBuffer ab = ByteBuffer.allocate(a.sizeInBytes());
            a.writeTo(ab);
            final String what = clean + ": batch " + i + " " + e;
            if (e.compressionType() != org.apache.kafka.common.record.internal.CompressionType.ZSTD)
            {
                assertArrayEquals(eb.array(), ab.array(), what);
                continue;
            }
            // the wire module's zstd compresses in one shot, which writes the content size into the frame header
            // (Kafka's stream does not): the header but for length and CRC, and every record, are Kafka's
            eb.putInt(8, 0).putInt(17, 0);
            ab.putInt(8, 0).putInt(17, 0);
            assertArrayEquals(Arrays.copyOf(eb.array(), 61), Arrays.copyOf(ab.array(), 61), what);
            final List<String> er = new ArrayList<>();
            e.forEach(rec -> er.add(describe(rec)));
            final List<String> ar = new ArrayList<>();
            a.forEach(rec -> ar.add(describe(rec)));
            assertEquals(er, ar, what);
        }
        assertEquals(expected.size(), actual.size(), clean + ": batches");
    }

    private static String describe(final Record record)
    {
        return record.offset() + "@" + record.timestamp() + " " + Arrays.toString(bytes(record.key())) + "=" +
            Arrays.toString(bytes(record.value())) + " " + Arrays.toString(record.headers());
    }

    /** A clean's output, the answers our retention gave (for {@link KafkaFilterTo}), and how many segments it took. */
    private record Cleaned(byte[] bytes, RecordedRetention answers, int segments)
    {
    }

    /**
     * Our parts, as the cleaner will use them: the map loaded from {@code firstDirty} (the batches before the one
     * holding it unread, its records before it skipped, the aborted transactions ending at or past it), then the
     * log filtered from its start in one to three segments, each adding the aborted transactions Kafka's
     * {@code cleanSegments} collects for it (ending at or past its base, starting before the next one's: a
     * transaction spanning segments is added twice).
     */
    private static Cleaned clean(
        final ByteBuffer input, final Log log, final int mapBytes, final long firstDirty, final long highWatermark, final Random r,
        final long now, final List<AbortedTxn> kept)
    {
        final UnsafeBuffer in = new UnsafeBuffer(input.duplicate().slice());
        final io.ferrite.wire.record.RecordBatch batch = new io.ferrite.wire.record.RecordBatch();
        final List<Integer> positions = new ArrayList<>();
        for (int p = 0; p < in.capacity(); p += batch.sizeInBytes())
        {
            batch.wrap(in, p);
            assertEquals(io.ferrite.wire.record.RecordBatch.OK, batch.check(in.capacity() - p));
            positions.add(p);
        }
        // segment i is batches [segmentStarts[i], segmentStarts[i + 1])
        final TreeSet<Integer> cuts = new TreeSet<>(List.of(0, positions.size()));
        for (int c = r.nextInt(3); c > 0 && positions.size() > 1; c--)
        {
            cuts.add(1 + r.nextInt(positions.size() - 1));
        }
        final Integer[] segmentStarts = cuts.toArray(new Integer[0]);

        // half the cleans' maps start from a region of 1 to 16 slots, so a clean runs through its growths (the mask, the
        // moves, then % over the whole block) as a broker's map of 128 MiB does past 32 768 keys
        try (OffsetMap map = new OffsetMap(mapBytes, 0.9, null, r.nextBoolean() ? 1 << r.nextInt(5) : Integer.MAX_VALUE))
        {
            final OffsetMapLoader loader = new OffsetMapLoader(map, new CleanedTransactions(new RecordReader(new Codecs(), 1 << 20)),
                new RecordReader(new Codecs(), 1 << 20));
            final CleanerRetention retention = new CleanerRetention(loader, new CleanedTransactions(new RecordReader(new Codecs(), 1 << 20))
                .keptAbortedTxns((pid, first, last, lso) -> kept.add(txn(pid, first, last, lso))));
            retention.reset(now, DELETE_RETENTION_MS, highWatermark);
            log.active.forEach((pid, last) -> retention.activeProducers().add(pid,
                last.lastDataOffset().orElse(ActiveProducers.NO_DATA_OFFSET), last.producerEpoch()));

            for (final AbortedTxn t : log.aborted)
            {
                if (t.lastOffset() >= firstDirty)
                {
                    loader.transactions().addAbortedTransaction(t.producerId(), t.firstOffset(), t.lastOffset(), t.lastStableOffset());
                }
            }
            boolean full = false;
            for (final int p : positions)
            {
                batch.wrap(in, p);
                if (batch.lastOffset() >= firstDirty && !loader.load(batch, firstDirty))
                {
                    full = true;
                    break;
                }
            }
            if (!full)
            {
                map.updateLatestOffset(log.endOffset - 1);
            }

            final RecordedRetention answers = new RecordedRetention(retention);
            final BatchFilter filter = new BatchFilter(new Codecs(), 1 << 20);
            final ExpandableDirectByteBuffer out = new ExpandableDirectByteBuffer(64);
            int written = 0;
            for (int s = 0; s + 1 < segmentStarts.length; s++)
            {
                final long segmentBase = batch.wrap(in, positions.get(segmentStarts[s])).baseOffset();
                final long upperBound = segmentStarts[s + 1] < positions.size() ?
                    batch.wrap(in, positions.get(segmentStarts[s + 1])).baseOffset() : log.endOffset;
                for (final AbortedTxn t : log.aborted)
                {
                    if (t.lastOffset() >= segmentBase && t.firstOffset() < upperBound)
                    {
                        retention.transactions().addAbortedTransaction(t.producerId(), t.firstOffset(), t.lastOffset(), t.lastStableOffset());
                    }
                }
                for (int b = segmentStarts[s]; b < segmentStarts[s + 1]; b++)
                {
                    batch.wrap(in, positions.get(b));
                    final int n = filter.filter(batch, answers);
                    out.putBytes(written, filter.output(), 0, n);
                    written += n;
                }
            }
            final byte[] result = new byte[written];
            out.getBytes(0, result);
            return new Cleaned(result, answers, segmentStarts.length - 1);
        }
    }

    /** What Kafka's loader leaves as the map's latest offset: how far the first clean deduplicates. */
    private static long latestOffsetLoaded(final ByteBuffer input, final Log log, final int mapBytes)
    {
        final int maxEntries = (int)(mapBytes / 24 * 0.9);
        final Set<String> keys = new HashSet<>();
        long latest = -1;
        for (final MutableRecordBatch batch : MemoryRecords.readableRecords(input.duplicate()).batches())
        {
            if (!batch.isControlBatch() && !log.records.get(batch.baseOffset()).aborted())
            {
                for (final Record record : batch)
                {
                    if (record.hasKey())
                    {
                        if (keys.size() >= maxEntries)
                        {
                            return latest;
                        }
                        keys.add(Arrays.toString(log.records.get(record.offset()).key()));
                        latest = record.offset();
                    }
                }
            }
            latest = batch.lastOffset();
        }
        return log.endOffset - 1;
    }

    /**
     * The model's first clean: every marker, every record past what the map loaded, and of the rest each key's
     * last record not in an aborted transaction (tombstones too: no horizon is set yet).
     */
    private static Set<Long> expectedAfterFirstClean(final Log log, final long loadedTo)
    {
        final Map<String, Long> latest = new HashMap<>();
        for (final Rec rec : log.records.values())
        {
            if (!rec.control() && !rec.aborted() && rec.key() != null && rec.offset() <= loadedTo)
            {
                latest.put(Arrays.toString(rec.key()), rec.offset());
            }
        }
        final Set<Long> expected = new TreeSet<>();
        for (final Rec rec : log.records.values())
        {
            if (rec.control() || (!rec.aborted() && rec.offset() > loadedTo))
            {
                expected.add(rec.offset());
            }
            else if (!rec.aborted() && rec.key() != null && latest.get(Arrays.toString(rec.key())) == rec.offset())
            {
                expected.add(rec.offset());
            }
        }
        return expected;
    }

    /**
     * Reads the cleaned bytes with kafka-clients: every batch valid, offsets increasing, exactly the expected records
     * as they were, every live producer's last batch there.
     *
     * @return the delete horizon of each batch holding a tombstone, by the tombstone's offset
     */
    private static Map<Long, Long> checkOutput(
        final byte[] cleaned, final Log log, final Set<Long> expected, final boolean firstClean, final long highWatermark)
    {
        final Set<Long> seen = new TreeSet<>();
        final Map<Long, Long> horizons = new HashMap<>();
        final Map<Long, RecordBatch> lastBatches = new HashMap<>();
        long previous = -1;
        for (final MutableRecordBatch batch : MemoryRecords.readableRecords(ByteBuffer.wrap(cleaned)).batches())
        {
            batch.ensureValid();
            assertEquals(RecordBatch.MAGIC_VALUE_V2, batch.magic());
            assertTrue(batch.baseOffset() > previous, "batches in offset order");
            previous = batch.lastOffset();
            lastBatches.put(batch.lastOffset(), batch);
            for (final Record record : batch)
            {
                final Rec rec = log.records.get(record.offset());
                assertEquals(rec.timestamp(), record.timestamp(), "timestamp at " + record.offset());
                assertArrayEquals(rec.key(), bytes(record.key()), "key at " + record.offset());
                assertArrayEquals(rec.value(), bytes(record.value()), "value at " + record.offset());
                assertArrayEquals(rec.headers(), record.headers(), "headers at " + record.offset());
                assertTrue(seen.add(record.offset()));
                if (!record.hasValue() && !batch.isControlBatch())
                {
                    assertTrue(batch.deleteHorizonMs().isPresent(), "a kept tombstone's batch has a delete horizon");
                    horizons.put(record.offset(), batch.deleteHorizonMs().getAsLong());
                }
            }
        }
        assertEquals(expected, seen, firstClean ? "the records kept by the first clean" : "the records kept by the second clean");
        assertTrue(lastBatches.containsKey(highWatermark - 1), "the batch ending at the high watermark " + highWatermark + " is kept");
        for (final Map.Entry<Long, LastRecord> e : log.active.entrySet())
        {
            final OptionalLong last = e.getValue().lastDataOffset();
            if (last.isPresent())
            {
                final RecordBatch batch = lastBatches.get(last.getAsLong());
                assertTrue(batch != null, "producer " + e.getKey() + "'s last batch, ending at " + last.getAsLong() + ", is kept");
                assertEquals(e.getKey().longValue(), batch.producerId());
                assertEquals(e.getValue().producerEpoch(), batch.producerEpoch());
            }
        }
        return horizons;
    }

    private static Log generate(final Random r, final int keyCount)
    {
        final Log log = new Log();
        final long[] producers = {-1, 1, 2, 10, 11};
        final short[] epochs = {-1, (short)r.nextInt(3), (short)r.nextInt(3), (short)r.nextInt(3), (short)r.nextInt(3)};
        final int[] sequences = new int[producers.length];
        final long[] openTxnFirst = {-1, -1, -1, -1, -1};
        final long[] lastData = {-1, -1, -1, -1, -1};
        final boolean[] wrote = new boolean[producers.length];
        long offset = 0;
        long time = T0;
        final int batches = 3 + r.nextInt(30);
        for (int b = 0; b < batches || openTxnFirst[3] >= 0 || openTxnFirst[4] >= 0; b++)
        {
            time += r.nextInt(1000);
            final int p = r.nextInt(producers.length);
            final boolean transactional = p >= 3;
            final boolean ending = b >= batches || (transactional && r.nextInt(4) == 0);
            if (transactional && ending)
            {
                if (openTxnFirst[p] < 0 && b >= batches)
                {
                    continue;
                }
                final boolean commit = r.nextBoolean();
                if (!commit && openTxnFirst[p] >= 0)
                {
                    log.aborted.add(txn(producers[p], openTxnFirst[p], offset, lastStableOffset(openTxnFirst, p, offset)));
                }
                final MemoryRecords marker = MemoryRecords.withEndTransactionMarker(offset, time, 5, producers[p], epochs[p],
                    new EndTransactionMarker(commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT, 3));
                for (final Record record : marker.batches().iterator().next())
                {
                    log.records.put(offset, new Rec(offset, record.timestamp(), bytes(record.key()), bytes(record.value()),
                        record.headers(), true, false, openTxnFirst[p] < 0));
                }
                log.bytes.put(marker.buffer());
                log.batchStarts.add(offset);
                log.batchEnds.add(offset + 1);
                openTxnFirst[p] = -1;
                wrote[p] = true;
                offset++;
                continue;
            }
            if (transactional && openTxnFirst[p] < 0)
            {
                openTxnFirst[p] = offset;
            }
            final int count = 1 + r.nextInt(5);
            final boolean logAppendTime = r.nextInt(6) == 0;
            final MemoryRecordsBuilder builder = new MemoryRecordsBuilder(log.bytes, RecordBatch.MAGIC_VALUE_V2,
                CODECS[r.nextInt(CODECS.length)], logAppendTime ? TimestampType.LOG_APPEND_TIME : TimestampType.CREATE_TIME, offset,
                logAppendTime ? time : RecordBatch.NO_TIMESTAMP, producers[p], epochs[p], p == 0 ? -1 : sequences[p], transactional,
                false, 5, Integer.MAX_VALUE);
            for (int i = 0; i < count; i++)
            {
                final long timestamp = time - r.nextInt(5000);
                final byte[] key = r.nextInt(40) == 0 ? null : ("k" + r.nextInt(keyCount)).getBytes();
                final byte[] value = r.nextInt(4) == 0 ? null : randomBytes(r, r.nextInt(30));
                final Header[] headers = new Header[r.nextInt(3)];
                for (int h = 0; h < headers.length; h++)
                {
                    headers[h] = new RecordHeader("h" + h, r.nextInt(5) == 0 ? null : randomBytes(r, r.nextInt(8)));
                }
                builder.appendWithOffset(offset + i, timestamp, key, value, headers);
                log.records.put(offset + i, new Rec(offset + i, logAppendTime ? time : timestamp, key, value, headers, false,
                    false, false));
            }
            builder.build(); // writes into log.bytes, which it has grown past
            log.batchStarts.add(offset);
            log.batchEnds.add(offset + count);
            sequences[p] += count;
            offset += count;
            lastData[p] = offset - 1;
            wrote[p] = true;
        }
        // aborted data, now that every transaction's end is known
        for (final AbortedTxn t : log.aborted)
        {
            for (final Rec rec : List.copyOf(log.records.values()))
            {
                if (!rec.control() && rec.offset() >= t.firstOffset() && rec.offset() < t.lastOffset() && isOf(log, rec.offset(), t.producerId()))
                {
                    log.records.put(rec.offset(), new Rec(rec.offset(), rec.timestamp(), rec.key(), rec.value(), rec.headers(), false, true, false));
                }
            }
        }
        for (int p = 1; p < producers.length; p++)
        {
            if (wrote[p] && r.nextInt(4) != 0)
            {
                log.active.put(producers[p], new LastRecord(lastData[p] < 0 ? OptionalLong.empty() : OptionalLong.of(lastData[p]), epochs[p]));
            }
        }
        log.endOffset = offset;
        return log;
    }

    /** Whether the data record at {@code offset} was written by {@code producerId}. */
    private static boolean isOf(final Log log, final long offset, final long producerId)
    {
        for (final MutableRecordBatch batch : MemoryRecords.readableRecords(log.bytes.duplicate().flip()).batches())
        {
            if (offset >= batch.baseOffset() && offset <= batch.lastOffset())
            {
                return batch.producerId() == producerId;
            }
        }
        return false;
    }

    private static long lastStableOffset(final long[] openTxnFirst, final int aborting, final long markerOffset)
    {
        long lso = markerOffset + 1;
        for (int p = 0; p < openTxnFirst.length; p++)
        {
            if (p != aborting && openTxnFirst[p] >= 0)
            {
                lso = Math.min(lso, openTxnFirst[p]);
            }
        }
        return lso;
    }

    private static AbortedTxn txn(final long pid, final long first, final long last, final long lso)
    {
        return new AbortedTxn().setProducerId(pid).setFirstOffset(first).setLastOffset(last).setLastStableOffset(lso);
    }

    private static byte[] randomBytes(final Random r, final int length)
    {
        final byte[] b = new byte[length];
        r.nextBytes(b);
        return b;
    }

    private static byte[] bytes(final ByteBuffer buffer)
    {
        if (buffer == null)
        {
            return null;
        }
        final byte[] b = new byte[buffer.remaining()];
        buffer.duplicate().get(b);
        return b;
    }
}
