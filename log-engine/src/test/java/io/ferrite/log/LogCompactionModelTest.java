package io.ferrite.log;

import io.ferrite.log.clean.CleanStats;
import io.ferrite.log.clean.CleanerThrottle;
import io.ferrite.log.clean.LogCompaction;
import io.ferrite.log.clean.LogCompactor;
import io.ferrite.log.clean.OffsetMap;
import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import io.ferrite.wire.record.RecordReader;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.agrona.ExpandableDirectByteBuffer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13's model test: a real {@link PartitionLog} written with random keys, values and tombstones, plain,
 * idempotent and transactional batches (committed and aborted through {@link LogTransactions#appendMarker}) and
 * small segments, cleaned by {@link LogCompactor} now and then with an offset map of a few slots (so a clean
 * takes several passes) while the clock moves, some moves past {@code delete.retention.ms}; checked after every
 * clean against a model of what was appended: every record read is the one appended at its offset, offsets
 * increase, every batch passes its CRC, below the cleaned offset each key has only its latest record, aborted
 * data is gone, a tombstone stays until its batch's delete horizon (a key's latest tombstone below the cleaned
 * offset was kept with one by the clean that first found it), a marker stays while a batch of its transaction
 * does and, once none does, until its own horizon, an aborted batch still present is in the transaction index,
 * each idempotent or transactional producer's last batch is kept, an emptied batch stays only as a producer's
 * last or the high watermark's, and the latest value of every key stays at its original offset. At the end, with the clock past every
 * horizon, no tombstone is left below the cleaned offset, nor the marker of a transaction with no batch left.
 * Producers bump their epochs now and then (the sequence restarting at 0), and after an unclean restart with
 * every producer snapshot deleted a retry of each producer's last batch is DUPLICATE, with its original offsets.
 * jqwik prints each run's seed.
 */
class LogCompactionModelTest
{
    private static final long DELETE_RETENTION_MS = 10_000;
    private static final int KEYS = 12;

    /** What the model knows of one appended record. */
    private record Appended(long offset, String key, byte[] value, long txnProducer, boolean control)
    {
    }

    @Property(tries = 12)
    void aCleanedLogEqualsTheModel(@ForAll final long seed) throws Exception
    {
        final Path dir = Files.createTempDirectory("compaction-model");
        try
        {
            run(dir, new Random(seed), false);
        }
        finally
        {
            deleteTree(dir);
        }
    }

    /** The run whose empty batch lies in a segment past a full map's end (review of cfix2): kept by an earlier clean. */
    @Test
    void anEmptyBatchPastAFullMapsEndIsAsTheLastCheckFoundIt() throws Exception
    {
        final Path dir = Files.createTempDirectory("compaction-model");
        try
        {
            run(dir, new Random(-616087L), false);
        }
        finally
        {
            deleteTree(dir);
        }
    }

    @Test
    void kafkasDumpLogSegmentsDeepIteratesACleanedLog() throws Exception
    {
        final Path dir = Files.createTempDirectory("compaction-dump");
        try
        {
            run(dir, new Random(13), true);
        }
        finally
        {
            deleteTree(dir);
        }
    }

    private static void run(final Path dir, final Random r, final boolean dump) throws Exception
    {
        final MutableClock clock = new MutableClock(1_700_000_000_000L);
        final Map<String, String> config = Map.of(
            LogConfig.INTERNAL_SEGMENT_BYTES, Integer.toString(600 + r.nextInt(1500)),
            LogConfig.INDEX_INTERVAL_BYTES, Integer.toString(r.nextInt(300)),
            LogConfig.CLEANUP_POLICY, "compact",
            LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE));
        // no cleaner thread of the manager's: the test runs every clean itself
        final LogManagerConfig managerConfig = LogManagerConfig.of(dir).withClock(clock);
        final Model model;
        try (LogManager manager = LogManager.open(managerConfig.withCleaner(managerConfig.cleaner().withEnable(false)));
            OffsetMap map = new OffsetMap(24 * (6 + r.nextInt(14)), 0.9)) // 5 to 17 keys a pass
        {
            final PartitionLog log = manager.createLog("c", 0, config);
            model = new Model(log, clock, new LogCompactor(map, CleanerThrottle.NONE, 1 << 20));
            final int steps = 80 + r.nextInt(120);
            for (int step = 0; step < steps; step++)
            {
                model.step(r);
            }
            model.endTransactions();
            model.cleanAll(0);
            // past every delete horizon a clean set: tombstones go; a marker whose transaction has no batch left is
            // given its horizon by the first clean that finds it so, and goes at the next one past that horizon (a
            // transaction's last data may go one clean after the other: tombstones past their horizon)
            for (int cycle = 0; cycle < 3; cycle++)
            {
                clock.advance(DELETE_RETENTION_MS + 1);
                model.cleanAll(0);
            }
            final Set<Long> tombstones = model.check();
            for (final long t : tombstones)
            {
                assertTrue(t >= model.checkpoint, "no tombstone left below " + model.checkpoint + " past delete.retention.ms: " + t);
            }
            for (final Map.Entry<Long, List<Long>> m : model.markers.entrySet())
            {
                if (m.getKey() < model.checkpoint && m.getValue().stream().noneMatch(model.batchesPresent::containsKey))
                {
                    assertTrue(!model.batchesPresent.containsKey(m.getKey()), "the marker at " + m.getKey() + " of a transaction " +
                        "with no batch left (" + m.getValue() + ") is gone past delete.retention.ms");
                }
            }
        }
        if (dump) // the manager closed: the active segment cut to its data
        {
            final String joined;
            try (Stream<Path> files = Files.list(dir.resolve("c-0")))
            {
                joined = String.join(",", files.map(Path::toString).filter(p -> p.endsWith(".log")).sorted().toList());
            }
            DumpLogSegmentsCompatibilityTest.assertClean(DumpLogSegmentsCompatibilityTest.dump("--files", joined, "--deep-iteration"));
        }
        // as after a crash that lost the producer snapshots: no clean-shutdown marker, no snapshot
        Files.delete(dir.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
        try (Stream<Path> files = Files.list(dir.resolve("c-0")))
        {
            for (final Path snapshot : files.filter(f -> f.toString().endsWith(ProducerSnapshots.SNAPSHOT_SUFFIX)).toList())
            {
                Files.delete(snapshot);
            }
        }
        try (LogManager manager = LogManager.open(managerConfig.withCleaner(managerConfig.cleaner().withEnable(false))))
        {
            model.retryLastBatches(manager.log("c", 0));
        }
    }

    /** The writes, the cleans, and what the log must hold. */
    private static final class Model
    {
        final PartitionLog log;
        final MutableClock clock;
        final LogCompaction compaction;
        final TreeMap<Long, Appended> appended = new TreeMap<>();
        final Set<Long> abortedProducersOffsets = new HashSet<>();
        final Map<Long, List<Long>> openTxns = new HashMap<>();          // producer -> its open transaction's data offsets
        final Map<Long, List<Long>> openTxnBatches = new HashMap<>();    // producer -> its open transaction's batches' base offsets
        /** Each marker's offset, with the base offsets of its transaction's data batches. */
        final Map<Long, List<Long>> markers = new TreeMap<>();
        /** Each batch present at the last check: base offset -> {base, last}. */
        Map<Long, long[]> batchesPresent = new HashMap<>();
        final Map<Long, Integer> sequences = new HashMap<>();
        final Map<Long, Short> epochs = new HashMap<>();
        /** Each idempotent or transactional producer's last data batch as appended, for a retry. */
        final Map<Long, byte[]> lastBatchBytes = new HashMap<>();
        final Map<Long, long[]> lastBatchOfProducer = new HashMap<>();  // idempotent or transactional producer -> {base, last}
        /** The producers' last batches' bases and the high watermark as of the last clean: where it may keep an empty batch. */
        final Set<Long> lastBatchesAtClean = new HashSet<>();
        long highWatermarkAtClean = -1;
        /**
         * Where the last clean's map ended: it rewrote every segment whose base is below (a batch in a segment based
         * from there on was not rewritten: emptied and kept by an earlier clean, it must be as that check found it).
         */
        long lastCleanEnd;
        /** The empty batches' bases at the last {@link #check()} (every clean is checked after it). */
        Set<Long> emptyAtLastCheck = new HashSet<>();
        /** Tombstone offsets a clean kept, with the delete horizon it must have been given. */
        final Map<Long, Long> horizons = new HashMap<>();
        /** The markers of aborted transactions. */
        final Set<Long> abortMarkers = new HashSet<>();
        /** Marker offsets a clean kept with a delete horizon (their transaction had no data left), with that horizon. */
        final Map<Long, Long> markerHorizons = new HashMap<>();
        final RecordBatchBuilder builder = new RecordBatchBuilder();
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);
        final AppendResult result = new AppendResult();
        final CleanStats stats = new CleanStats();
        long checkpoint;

        Model(final PartitionLog log, final MutableClock clock, final LogCompaction compaction)
        {
            this.log = log;
            this.clock = clock;
            this.compaction = compaction;
        }

        void step(final Random r) throws Exception
        {
            final int op = r.nextInt(20);
            if (op < 8)
            {
                append(r, -1, false);
            }
            else if (op < 11)
            {
                append(r, 100 + r.nextInt(3), false); // idempotent
            }
            else if (op < 14)
            {
                append(r, 1 + r.nextInt(3), true); // transactional
            }
            else if (op < 16)
            {
                final long pid = 1 + r.nextInt(3);
                if (openTxns.containsKey(pid))
                {
                    marker(pid, r.nextBoolean());
                }
            }
            else if (op < 19)
            {
                clean();
                check();
            }
            else if (r.nextBoolean())
            {
                // an epoch bump (a producer's restart, or a transactional one's new session): its sequence starts at 0
                // again and its older batches are no longer its last; a transactional one bumps between transactions
                final long pid = r.nextBoolean() ? 100 + r.nextInt(3) : 1 + r.nextInt(3);
                if (!openTxns.containsKey(pid))
                {
                    epochs.merge(pid, (short)1, (a, b) -> (short)(a + b));
                    sequences.put(pid, 0);
                }
            }
            else
            {
                clock.advance(r.nextInt((int)(DELETE_RETENTION_MS * 3 / 2)));
            }
        }

        /**
         * After an unclean restart with every producer snapshot deleted, the producer state is rebuilt from the cleaned
         * log (Kafka 4.4's {@code rebuildProducerState} scans the log when no snapshot is left and the shutdown was not
         * clean): each producer's last batch, which every clean kept, makes a retry of that batch DUPLICATE, answered
         * with its original offsets, at the epoch of its last bump.
         */
        void retryLastBatches(final PartitionLog reopened)
        {
            final ExpandableDirectByteBuffer retry = new ExpandableDirectByteBuffer(4096);
            for (final Map.Entry<Long, byte[]> b : lastBatchBytes.entrySet())
            {
                retry.putBytes(0, b.getValue());
                reopened.append(retry, 0, b.getValue().length, result);
                final long[] last = lastBatchOfProducer.get(b.getKey());
                assertEquals(AppendResult.DUPLICATE, result.status, "a retry of producer " + b.getKey() + "'s last batch at " + last[0] +
                    " (epoch " + epochs.getOrDefault(b.getKey(), (short)0) + "): " + result);
                assertEquals(last[0], result.firstOffset, "the retry is answered with the original offsets");
            }
        }

        void append(final Random r, final long pid, final boolean transactional)
        {
            final int count = 1 + r.nextInt(4);
            final int seq = pid < 0 ? -1 : sequences.getOrDefault(pid, 0);
            builder.wrap(buffer, 0).compression(CompressionType.values()[r.nextInt(3)])
                .producer(pid, pid < 0 ? (short)-1 : epochs.getOrDefault(pid, (short)0), seq).transactional(transactional);
            final String[] keys = new String[count];
            final byte[][] values = new byte[count][];
            for (int i = 0; i < count; i++)
            {
                keys[i] = "key-" + r.nextInt(KEYS);
                values[i] = r.nextInt(5) == 0 ? null : ("v" + r.nextLong()).getBytes(StandardCharsets.UTF_8);
                builder.appendRecord(clock.time(), keys[i].getBytes(StandardCharsets.UTF_8), values[i]);
            }
            final int length = builder.build();
            log.append(buffer, 0, length, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            for (int i = 0; i < count; i++)
            {
                final long offset = result.firstOffset + i;
                appended.put(offset, new Appended(offset, keys[i], values[i], transactional ? pid : -1, false));
                if (transactional)
                {
                    openTxns.computeIfAbsent(pid, p -> new ArrayList<>()).add(offset);
                }
            }
            if (transactional)
            {
                openTxnBatches.computeIfAbsent(pid, p -> new ArrayList<>()).add(result.firstOffset);
            }
            if (pid >= 0)
            {
                sequences.put(pid, seq + count);
                lastBatchOfProducer.put(pid, new long[] {result.firstOffset, result.firstOffset + count - 1});
                final byte[] bytes = new byte[length];
                buffer.getBytes(0, bytes);
                lastBatchBytes.put(pid, bytes);
            }
        }

        void marker(final long pid, final boolean commit)
        {
            log.transactions().appendMarker(pid, epochs.getOrDefault(pid, (short)0), 0, commit, false, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            appended.put(result.firstOffset, new Appended(result.firstOffset, null, null, pid, true));
            final List<Long> data = openTxns.remove(pid);
            markers.put(result.firstOffset, openTxnBatches.remove(pid));
            if (!commit)
            {
                abortedProducersOffsets.addAll(data);
                abortMarkers.add(result.firstOffset);
            }
        }

        void endTransactions()
        {
            for (final long pid : new ArrayList<>(openTxns.keySet()))
            {
                marker(pid, pid % 2 == 0);
            }
        }

        private long firstUncleanable()
        {
            log.highWatermark(log.logEndOffset());
            final SegmentsView view = new SegmentsView().take(log);
            return Math.min(view.baseOffset(view.count() - 1), log.transactions().lastStableOffset());
        }

        void clean() throws Exception
        {
            final long end = firstUncleanable();
            if (checkpoint < end)
            {
                final long next = compaction.clean(log, checkpoint, end, DELETE_RETENTION_MS, clock.time(), stats);
                cleaned(next);
                assertNotEquals(LogCompaction.ABANDONED, next);
                assertTrue(next > checkpoint && next <= end, "the clean made progress: " + checkpoint + " -> " + next + " of " + end);
                checkpoint = next;
            }
        }

        /** Cleans from {@code from} until the whole cleanable section is done, a pass per map's worth. */
        void cleanAll(final long from) throws Exception
        {
            final long end = firstUncleanable();
            long at = from;
            while (at < end)
            {
                final long next = compaction.clean(log, at, end, DELETE_RETENTION_MS, clock.time(), stats);
                cleaned(next);
                assertTrue(next > at && next <= end, "the clean made progress: " + at + " -> " + next + " of " + end);
                at = next;
                checkpoint = Math.max(checkpoint, at); // all below it cleaned at least once
                check();
            }
            checkpoint = Math.max(checkpoint, end);
        }

        private void cleaned(final long end)
        {
            lastBatchesAtClean.clear();
            lastBatchOfProducer.values().forEach(b -> lastBatchesAtClean.add(b[0]));
            highWatermarkAtClean = log.highWatermark();
            lastCleanEnd = end;
        }

        /** The base of the segment holding {@code offset} now. */
        private long segmentBase(final long offset)
        {
            long base = -1;
            for (final Segment seg : log.segments())
            {
                if (seg.baseOffset <= offset)
                {
                    base = seg.baseOffset;
                }
            }
            return base;
        }

        /** The latest record of each key, aborted data and markers left out. */
        Map<String, Appended> latest()
        {
            final Map<String, Appended> latest = new HashMap<>();
            for (final Appended a : appended.values())
            {
                if (!a.control && !abortedProducersOffsets.contains(a.offset) && !isOpen(a))
                {
                    latest.put(a.key, a);
                }
            }
            return latest;
        }

        private boolean isOpen(final Appended a)
        {
            final List<Long> open = a.txnProducer < 0 ? null : openTxns.get(a.txnProducer);
            return open != null && open.contains(a.offset);
        }

        /** @return the offsets of the tombstones present */
        Set<Long> check()
        {
            final RecordBatch batch = new RecordBatch();
            final RecordReader reader = new RecordReader();
            final Map<Long, Record> present = new TreeMap<>();
            batchesPresent = new HashMap<>();
            final Map<String, Long> latestBelow = new HashMap<>(); // the latest offset of each key below the checkpoint
            for (final Appended a : appended.headMap(checkpoint).values())
            {
                if (!a.control && !abortedProducersOffsets.contains(a.offset))
                {
                    latestBelow.put(a.key, a.offset);
                }
            }
            long offset = log.logStartOffset();
            long last = -1;
            final Set<Long> tombstonesPresent = new HashSet<>();
            final Set<Long> emptyNow = new HashSet<>();
            while (log.readBatch(offset, log.logEndOffset(), batch) == PartitionLog.READ_OK)
            {
                assertEquals(RecordBatch.OK, batch.check(batch.buffer().capacity() - batch.offset()), "batch at " + batch.baseOffset());
                assertTrue(batch.baseOffset() > last, "offsets increase: " + batch.baseOffset() + " after " + last);
                batchesPresent.put(batch.baseOffset(), new long[] {batch.baseOffset(), batch.lastOffset()});
                if (batch.recordCount() == 0)
                {
                    // emptied by a clean: kept only as a producer's last batch or the batch before the high watermark, as of
                    // the last clean if that clean rewrote its segment; else unchanged since the check after an earlier one
                    final boolean notRewritten = segmentBase(batch.baseOffset()) >= lastCleanEnd;
                    assertTrue(lastBatchesAtClean.contains(batch.baseOffset()) || batch.lastOffset() + 1 == highWatermarkAtClean ||
                        notRewritten && emptyAtLastCheck.contains(batch.baseOffset()),
                        "the empty batch at " + batch.baseOffset() + " is a producer's last or the high watermark's");
                    emptyNow.add(batch.baseOffset());
                }
                if (batch.isControl() && batch.hasDeleteHorizon())
                {
                    // given by the clean that first found its transaction with no data left: that clean's time + delete.retention.ms
                    final long horizon = markerHorizons.computeIfAbsent(batch.baseOffset(), o -> clock.time() + DELETE_RETENTION_MS);
                    assertEquals(horizon, batch.baseTimestamp(), "the delete horizon of the marker at " + batch.baseOffset());
                }
                reader.reset(batch);
                while (reader.hasNext())
                {
                    final Record rec = reader.next();
                    final Appended a = appended.get(rec.offset());
                    assertNotNull(a, "a record the model never appended at " + rec.offset());
                    assertEquals(a.control, batch.isControl());
                    if (!a.control)
                    {
                        final byte[] key = new byte[rec.keyLength()];
                        rec.buffer().getBytes(rec.keyOffset(), key);
                        assertEquals(a.key, new String(key, StandardCharsets.UTF_8), "key at " + rec.offset());
                        assertEquals(a.value != null, rec.hasValue(), "tombstone or not at " + rec.offset());
                        if (a.value != null)
                        {
                            final byte[] value = new byte[rec.valueLength()];
                            rec.buffer().getBytes(rec.valueOffset(), value);
                            assertTrue(Arrays.equals(a.value, value), "value at " + rec.offset());
                        }
                        else if (batch.hasDeleteHorizon())
                        {
                            // first seen right after the clean that kept it: the horizon is that clean's time + delete.retention.ms
                            final long horizon = horizons.computeIfAbsent(rec.offset(), o -> clock.time() + DELETE_RETENTION_MS);
                            assertEquals(horizon, batch.baseTimestamp(), "the delete horizon of the tombstone at " + rec.offset());
                            tombstonesPresent.add(rec.offset());
                        }
                        else
                        {
                            tombstonesPresent.add(rec.offset());
                        }
                        if (rec.offset() < checkpoint)
                        {
                            assertTrue(!abortedProducersOffsets.contains(rec.offset()), "aborted data left below the checkpoint at " +
                                rec.offset());
                            assertEquals(latestBelow.get(a.key), rec.offset(), "only the latest record of " + a.key +
                                " below the checkpoint " + checkpoint);
                        }
                    }
                    present.put(rec.offset(), rec);
                }
                last = batch.lastOffset();
                offset = last + 1;
            }
            assertEquals(log.logEndOffset(), last + 1, "the log is read to its end");
            // the latest value of every key stays at its original offset
            final Map<String, Appended> latest = latest();
            for (final Appended a : latest.values())
            {
                if (a.value != null)
                {
                    assertTrue(present.containsKey(a.offset), "the latest value of " + a.key + " at " + a.offset + " is kept");
                }
            }
            // a tombstone still its key's latest stays until its delete horizon
            for (final Map.Entry<Long, Long> h : horizons.entrySet())
            {
                final Appended a = appended.get(h.getKey());
                if (latest.get(a.key) == a && clock.time() < h.getValue())
                {
                    assertTrue(tombstonesPresent.contains(a.offset), "the tombstone of " + a.key + " at " + a.offset +
                        " stays until " + h.getValue() + " (now " + clock.time() + ")");
                }
            }
            // a key's latest record below the checkpoint that is a tombstone was kept by the first clean that found it,
            // which gave its batch a delete horizon (seen here right after that clean): none goes unseen
            for (final long off : latestBelow.values())
            {
                if (appended.get(off).value == null)
                {
                    assertTrue(horizons.containsKey(off), "the tombstone at " + off + ", its key's latest below the checkpoint " +
                        checkpoint + ", was kept with a delete horizon by the clean that first found it (present: " +
                        tombstonesPresent.contains(off) + ")");
                }
            }
            checkMarkers();
            // each idempotent or transactional producer's last batch is kept (empty if its records went)
            for (final Map.Entry<Long, long[]> p : lastBatchOfProducer.entrySet())
            {
                final long[] kept = batchesPresent.get(p.getValue()[0]);
                assertNotNull(kept, "the last batch of producer " + p.getKey() + " at " + p.getValue()[0]);
                assertEquals(p.getValue()[1], kept[1]);
            }
            emptyAtLastCheck = emptyNow;
            return tombstonesPresent;
        }

        /**
         * A marker stays while a batch of its transaction does, and once its transaction has none it stays with a
         * delete horizon until that passes (no marker goes unseen with a horizon); an aborted transaction's batch
         * still present is one the transaction index reports (read_committed never sees it).
         */
        private void checkMarkers()
        {
            final java.nio.ByteBuffer scratch = java.nio.ByteBuffer.allocate(4096);
            for (final Map.Entry<Long, List<Long>> m : markers.entrySet())
            {
                final long marker = m.getKey();
                final long pid = appended.get(marker).txnProducer;
                final boolean present = batchesPresent.containsKey(marker);
                for (final long base : m.getValue())
                {
                    if (!batchesPresent.containsKey(base))
                    {
                        continue;
                    }
                    assertTrue(present, "the marker at " + marker + " stays while its transaction's batch at " + base + " does");
                    if (abortMarkers.contains(marker))
                    {
                        final List<Long> reported = new ArrayList<>();
                        assertEquals(PartitionLog.READ_OK, log.transactions().collectAbortedTransactions(base, base + 1, scratch, (p, first) ->
                        {
                            if (p == pid && first <= base)
                            {
                                reported.add(first);
                            }
                        }));
                        assertTrue(!reported.isEmpty(), "the aborted batch at " + base + " (producer " + pid + ", marker at " +
                            marker + ") is reported by the transaction index");
                    }
                }
                final Long horizon = markerHorizons.get(marker);
                if (!present)
                {
                    assertNotNull(horizon, "the marker at " + marker + " went only after a clean kept it with a delete horizon");
                }
                else if (horizon == null)
                {
                    continue;
                }
                assertTrue(present || clock.time() >= horizon, "the marker at " + marker + " stays until its horizon " + horizon +
                    " (now " + clock.time() + ")");
            }
        }
    }

    private static void deleteTree(final Path dir) throws IOException
    {
        try (Stream<Path> files = Files.walk(dir))
        {
            for (final Path p : files.sorted((a, b) -> b.compareTo(a)).toList())
            {
                Files.deleteIfExists(p);
            }
        }
    }
}
