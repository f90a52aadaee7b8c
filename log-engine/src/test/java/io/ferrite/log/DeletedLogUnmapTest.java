package io.ferrite.log;

import org.agrona.concurrent.AgentInvoker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A deleted partition's files are given back to the disk once {@code file.delete.delay.ms} has
 * passed: every segment, the active one included, is then closed and unmapped explicitly, not left
 * to the GC (a long-running embedding app that deletes topics would otherwise keep their blocks for
 * as long as its heap keeps the buffers). The active segment's close runs into files that are
 * gone — its directory was renamed and deleted at once — and that must not stop the rest.
 *
 * <p>The scheduler is stepped by the test ({@code AgentInvoker}) with a clock of the test's: the
 * close happens on the first step once the delay has passed by that clock, and not on one before.
 */
class DeletedLogUnmapTest
{
    @TempDir
    Path dir;

    @Test
    void aDeletedLogsActiveSegmentIsUnmappedAndClosedOnTheFirstStepAfterTheDelay() throws Exception
    {
        final MutableClock clock = new MutableClock(System.currentTimeMillis());
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock), true))
        {
            final AgentInvoker scheduler = manager.background().schedulerInvoker();
            final PartitionLog log = manager.createLog("gone", 0,
                Map.of(LogConfig.FILE_DELETE_DELAY_MS, "5000", LogConfig.INTERNAL_SEGMENT_BYTES, "4096"));
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            while (log.segmentCount() < 3)
            {
                batches.records(10, log.logEndOffset(), clock.time());
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status);
            }
            final Segment[] segments = log.segments();
            assertTrue(mappedOrOpen(dir, "gone-0") > 0, "the active .log is mapped and open before the deletion");

            manager.deleteLog("gone", 0);
            scheduler.invoke();
            clock.advance(4_999);
            scheduler.invoke();
            assertEquals(segments.length + 1, manager.background().scheduler().waitingCloses(),
                "1 ms before the delay: nothing closed, the renamed directory not removed");
            for (final Segment s : segments)
            {
                assertTrue(s.log.view().capacity() > 0, s + " is still mapped for readers");
            }

            clock.advance(1);
            assertEquals(segments.length + 1, scheduler.invoke(), "the step after the delay closes every segment and removes the directory");
            assertEquals(0, mappedOrOpen(dir, "gone-0"), "no mapping or descriptor left on the deleted log's files");
            for (final Segment s : segments)
            {
                assertEquals(0, s.log.view().capacity(), s + " is unmapped");
            }
            assertEquals(0, manager.background().schedulerErrors().count(), "the gone files' closes are not errors");
        }
    }

    /**
     * The delay is counted by the monotonic clock: a step of the wall clock (NTP, an admin) must not
     * end it early, since a reader still on the mapping would then crash the process.
     */
    @Test
    void aWallClockStepForwardDoesNotEndTheDelay() throws Exception
    {
        final MutableClock wall = new MutableClock(System.currentTimeMillis());
        final MutableClock monotonic = new MutableClock(0);
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withClocks(wall, () -> monotonic.time() * 1_000_000L), true))
        {
            final AgentInvoker scheduler = manager.background().schedulerInvoker();
            final PartitionLog log = manager.createLog("gone", 0, Map.of(LogConfig.FILE_DELETE_DELAY_MS, "5000"));
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            batches.records(2, 0, wall.time());
            log.append(batches.buffer, 0, batches.length, result);
            final Segment active = log.segments()[0];
            manager.deleteLog("gone", 0);
            wall.advance(3_600_000);
            scheduler.invoke();
            assertTrue(active.log.view().capacity() > 0, "a wall-clock step of an hour left the mapping to its readers");
            monotonic.advance(5_000);
            scheduler.invoke();
            assertEquals(0, active.log.view().capacity(), "unmapped once the delay passed");
        }
    }

    /** A delay of Long.MAX_VALUE (Kafka's "never" for a time) is never over: the sum must not wrap to a time long gone. */
    @Test
    void aDelayOfLongMaxValueNeverEnds() throws Exception
    {
        final MutableClock clock = new MutableClock(System.currentTimeMillis());
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock), true))
        {
            final PartitionLog log = manager.createLog("kept", 0, Map.of(LogConfig.FILE_DELETE_DELAY_MS, Long.toString(Long.MAX_VALUE)));
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            batches.records(2, 0, clock.time());
            log.append(batches.buffer, 0, batches.length, result);
            final Segment active = log.segments()[0];
            manager.deleteLog("kept", 0);
            clock.advance(365L * 24 * 3600 * 1000);
            manager.background().schedulerInvoker().invoke();
            assertEquals(2, manager.background().scheduler().waitingCloses(), "the segment's close and the directory's removal");
            assertTrue(active.log.view().capacity() > 0, "still mapped for readers");
        }
    }

    /**
     * A close of the manager does not wait out the delay: a deleted segment still waiting is closed
     * at once, its descriptor given back, but its mapping left to the GC for the readers it was promised to.
     */
    @Test
    void aCloseClosesTheDeletedSegmentsStillWaitingAndLeavesTheirMappings() throws Exception
    {
        final MutableClock clock = new MutableClock(System.currentTimeMillis());
        final Segment active;
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock), true))
        {
            final PartitionLog log = manager.createLog("gone", 0, Map.of(LogConfig.FILE_DELETE_DELAY_MS, "5000"));
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            batches.records(2, 0, clock.time());
            log.append(batches.buffer, 0, batches.length, result);
            active = log.segments()[0];
            manager.deleteLog("gone", 0);
            manager.background().schedulerInvoker().invoke();
            assertTrue(active.log.channel().isOpen(), "open while the delay runs");
        }
        assertTrue(!active.log.channel().isOpen(), "the close closed the deleted segment still waiting");
        assertTrue(active.log.view().capacity() > 0, "its mapping is left to the GC");
    }

    /** Lines of /proc/self/maps and descriptors of this process naming a {@code .log} file in a directory under {@code dir} starting with {@code name}. */
    private static long mappedOrOpen(final Path dir, final String name) throws IOException
    {
        final String root = dir.toRealPath().toString() + "/" + name;
        long n;
        try (Stream<String> lines = Files.lines(Path.of("/proc/self/maps")))
        {
            n = lines.filter(line -> line.contains(root) && line.contains(".log")).count();
        }
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd")))
        {
            n += fds.filter(fd ->
            {
                try
                {
                    final String target = Files.readSymbolicLink(fd).toString();
                    return target.startsWith(root) && target.contains(".log");
                }
                catch (final IOException ex)
                {
                    return false;
                }
            }).count();
        }
        return n;
    }
}
