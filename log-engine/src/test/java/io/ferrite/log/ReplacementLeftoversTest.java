package io.ferrite.log;

import io.ferrite.testing.Await;
import io.ferrite.wire.record.RecordBatch;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What {@link SegmentReplacer} left open after its first review, each on real files: a replacement racing the
 * deletion of its partition reaches nothing through the old path (where the new log of the same name is); the
 * replaced segments' files are renamed {@code .deleted} under the lock and unlinked by their deferred close (or by
 * the next open); a rebuilt batch failing its CRC is refused; and how long a swap holds the segments lock.
 */
class ReplacementLeftoversTest extends ManagerFixture
{
    private static final Map<String, String> SMALL = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048",
        LogConfig.INDEX_INTERVAL_BYTES, "256", LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE),
        LogConfig.FILE_DELETE_DELAY_MS, "5000");


    private PartitionLog filledLog(final int batches) throws IOException
    {
        manager = LogManager.open(LogManagerConfig.of(dir));
        final PartitionLog log = manager.createLog("swap", 0, SMALL);
        append(log, batches);
        return log;
    }

    /** Appends {@code batches} batches of 1 to 3 records with increasing timestamps (ReplacementReview2Test uses it too). */
    static void append(final PartitionLog log, final int batches)
    {
        final Batches b = new Batches();
        final AppendResult result = new AppendResult();
        for (int i = 0; i < batches; i++)
        {
            b.records(1 + i % 3, log.logEndOffset(), 1_700_000_000_000L + i);
            log.append(b.buffer, 0, b.length, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
        }
    }

    private static List<String> names(final Path partition, final String suffix) throws IOException
    {
        try (Stream<Path> files = Files.list(partition))
        {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(suffix)).sorted().toList();
        }
    }

    /** The files this process holds open whose name ends with {@code suffix} (read from /proc/self/fd). */
    private static List<String> openFiles(final String suffix) throws IOException
    {
        final List<String> open = new ArrayList<>();
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd")))
        {
            for (final Path fd : (Iterable<Path>)fds::iterator)
            {
                try
                {
                    final String target = Files.readSymbolicLink(fd).toString();
                    if (target.endsWith(suffix))
                    {
                        open.add(target);
                    }
                }
                catch (final IOException closedMeanwhile)
                {
                    // the listing's own descriptor, or one closed since
                }
            }
        }
        return open;
    }

    /**
     * The partition is deleted, and made again under the same name, while the replacement reads its run's last
     * batch (the rest of that segment dropped, so a new segment is started after the deletion): the replacement is
     * abandoned as LOG_CLOSED, creates and deletes nothing in the new log's directory (watched with inotify), and
     * keeps no file open.
     */
    @Test
    void aReplacementRacingTheDeletionOfItsPartitionReachesNothingThroughTheOldPath() throws Exception
    {
        final PartitionLog log = filledLog(150);
        final long[] bases = log.segmentReplacer().inactiveSegmentBases();
        final long lastBase = bases[2];
        final Path partition = log.dir();
        final WatchService watcher = FileSystems.getDefault().newWatchService();
        final PartitionLog[] renewed = new PartitionLog[1];
        final int answer;
        try (watcher)
        {
            answer = log.segmentReplacer().replace(bases[0], 3, batch ->
            {
                if (batch.baseOffset() == lastBase && renewed[0] == null)
                {
                    try
                    {
                        manager.deleteLog("swap", 0);
                        renewed[0] = manager.createLog("swap", 0, SMALL);
                        partition.register(watcher, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_DELETE);
                    }
                    catch (final IOException ex)
                    {
                        throw new AssertionError(ex);
                    }
                }
                return batch.baseOffset() >= lastBase ? null : batch; // the last segment all dropped: one started after
            });
            // inotify keeps the order of events: once the sentinel's is in, every event before it is
            Files.createFile(partition.resolve("sentinel"));
            final List<String> events = new ArrayList<>();
            Await.await(() ->
            {
                final WatchKey key = watcher.poll(100, TimeUnit.MILLISECONDS);
                if (key != null)
                {
                    for (final WatchEvent<?> e : key.pollEvents())
                    {
                        events.add(e.kind().name() + " " + e.context());
                    }
                    key.reset();
                }
                return events.contains("ENTRY_CREATE sentinel");
            }, java.time.Duration.ofSeconds(10), () -> "the sentinel's event; events " + events);
            assertEquals(List.of("ENTRY_CREATE sentinel"), events, "the replacement reached the new log's directory");
        }
        assertEquals(SegmentReplacer.LOG_CLOSED, answer);
        assertEquals(List.of(), openFiles(CleanedSegments.CLEANED_SUFFIX), "no file of the abandoned replacement left open");
        assertEquals(List.of(), names(partition, CleanedSegments.CLEANED_SUFFIX));
        assertEquals(0, renewed[0].logEndOffset());
    }

    /**
     * The replaced segments' files are renamed {@code .deleted} at the swap and unlinked only by their close after
     * {@code file.delete.delay.ms} (the scheduler stepped with the test's clock), not before; none is left after a stop
     * before the delay and the next open.
     */
    @Test
    void replacedFilesAreRenamedDeletedAndUnlinkedByTheirDeferredCloseOrTheNextOpen() throws Exception
    {
        final MutableClock clock = new MutableClock(System.currentTimeMillis());
        manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock), true);
        final PartitionLog log = manager.createLog("swap", 0, SMALL);
        append(log, 150);
        final Path partition = log.dir();
        final long[] bases = log.segmentReplacer().inactiveSegmentBases();
        final List<String> replaced = new ArrayList<>();
        for (int i = 0; i < 3; i++)
        {
            replaced.add(Segment.fileName(bases[i], Segment.LOG_SUFFIX) + SegmentDeletion.DELETED_SUFFIX);
        }
        assertEquals(SegmentReplacer.REPLACED, log.segmentReplacer().replace(bases[0], 3, batch -> batch.baseOffset() % 2 == 0 ? null : batch));
        assertEquals(replaced, names(partition, Segment.LOG_SUFFIX + SegmentDeletion.DELETED_SUFFIX));
        manager.background().schedulerInvoker().invoke();
        assertEquals(replaced, names(partition, Segment.LOG_SUFFIX + SegmentDeletion.DELETED_SUFFIX), "before the delay");
        clock.advance(5_000);
        manager.background().schedulerInvoker().invoke();
        assertEquals(List.of(), names(partition, SegmentDeletion.DELETED_SUFFIX), "unlinked by the deferred close");

        final long[] now = log.segmentReplacer().inactiveSegmentBases();
        assertEquals(SegmentReplacer.REPLACED, log.segmentReplacer().replace(now[3], 2, batch -> batch.baseOffset() % 3 == 0 ? null : batch));
        assertFalse(names(partition, SegmentDeletion.DELETED_SUFFIX).isEmpty());
        // a stop before the delay: the scheduler's stop closes the waiting segments (unlinking them while the log is
        // still open), or the open removes what is left (SwapRecoveryTest leaves one for it)
        manager.close();
        manager = LogManager.open(LogManagerConfig.of(dir));
        assertEquals(List.of(), names(partition, SegmentDeletion.DELETED_SUFFIX));
    }

    /** A batch the rewriter rebuilt whose CRC does not match its bytes is refused, and nothing of the run replaced. */
    @Test
    void aRebuiltBatchFailingItsCrcIsRefused() throws Exception
    {
        final PartitionLog log = filledLog(60);
        final long[] bases = log.segmentReplacer().inactiveSegmentBases();
        final Segment[] before = log.segments();
        assertThrows(IllegalArgumentException.class, () -> log.segmentReplacer().replace(bases[0], 2, batch ->
        {
            final byte[] copy = new byte[batch.sizeInBytes()];
            batch.buffer().getBytes(batch.offset(), copy);
            copy[copy.length - 1] ^= 1; // a record byte: the frame is whole, the CRC is not
            return new RecordBatch().wrap(new UnsafeBuffer(copy), 0);
        }));
        assertEquals(before[0], log.segments()[0], "the run is not replaced");
        assertEquals(List.of(), names(log.dir(), CleanedSegments.CLEANED_SUFFIX));
        // a rebuilt batch that is whole is taken
        assertEquals(SegmentReplacer.REPLACED, log.segmentReplacer().replace(bases[0], 2, batch ->
        {
            final byte[] copy = new byte[batch.sizeInBytes()];
            batch.buffer().getBytes(batch.offset(), copy);
            return new RecordBatch().wrap(new UnsafeBuffer(copy), 0);
        }));
    }

    /**
     * How long a replacement of 10 segments of 1 MiB holds the segments lock, which the writer's roll waits for
     * (printed, not asserted: the figure depends on the disk and the machine's load).
     */
    @Test
    void printsHowLongASwapOfTenSegmentsHoldsTheSegmentsLock() throws Exception
    {
        manager = LogManager.open(LogManagerConfig.of(dir));
        final Map<String, String> config = new HashMap<>(SMALL);
        config.put(LogConfig.INTERNAL_SEGMENT_BYTES, Integer.toString(1 << 20));
        config.put(LogConfig.INDEX_INTERVAL_BYTES, "4096");
        final PartitionLog log = manager.createLog("swap", 0, config);
        final Batches b = new Batches();
        final AppendResult result = new AppendResult();
        while (log.segmentCount() < 11)
        {
            b.records(50, log.logEndOffset(), 1_700_000_000_000L);
            log.append(b.buffer, 0, b.length, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
        }
        assertEquals(0, log.segmentReplacer().lastSwapLockNanos());
        final StringBuilder held = new StringBuilder();
        long least = Long.MAX_VALUE;
        for (int round = 0; round < 7; round++) // the same 10 segments each time, every batch kept: the first rounds warm up
        {
            final long[] bases = log.segmentReplacer().inactiveSegmentBases();
            assertEquals(SegmentReplacer.REPLACED, log.segmentReplacer().replace(bases[0], 10, batch -> batch));
            final long nanos = log.segmentReplacer().lastSwapLockNanos();
            assertTrue(nanos > 0);
            least = Math.min(least, nanos);
            held.append(String.format(" %.3f", nanos / 1e6));
        }
        System.out.printf("a swap of 10 segments of 1 MiB (%d new) held the segments lock (ms):%s; least %.3f%n",
            log.segmentCount() - 1, held, least / 1e6);
        assertNull(log.fsyncFailure());
    }
}
