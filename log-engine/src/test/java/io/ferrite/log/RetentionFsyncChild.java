package io.ferrite.log;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * {@link RetentionFsyncTest}'s child, run with the fsync-recording (and failing) shim {@code recording_fsync.c}.
 * {@code RetentionFsyncChild <mode> <log dir> [<file>]}, the modes:
 * <ul>
 * <li>{@code purge <record>}: a log of three segments, flushed (every name durable), then a DeleteRecords to the
 * high watermark, which deletes every sealed segment, between the lines {@code delete} and {@code deleted} of the
 * shim's record;</li>
 * <li>{@code crash}: a log of three segments, left without a close (the JVM halts): on the next open no name is
 * known durable;</li>
 * <li>{@code failing <trigger>}: after {@code crash}, the same DeleteRecords with the partition directory's fsync
 * failing (the trigger made just before): prints what it threw and whether the removed segments' files are
 * closed and unmapped, and still on disk.</li>
 * </ul>
 * Prints {@code RESULT} lines and halts with 0 (no close: a close would flush).
 */
public final class RetentionFsyncChild
{
    private static final int SEGMENTS = 3;

    private RetentionFsyncChild()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Path dir = Path.of(args[1]);
        final LogManager logs = LogManager.open(LogManagerConfig.of(dir));
        switch (args[0])
        {
            case "purge" -> purge(logs, Path.of(args[2]));
            case "crash" -> filled(logs);
            case "failing" -> failing(logs, Path.of(args[2]));
            default -> throw new IllegalArgumentException(args[0]);
        }
        System.out.println("RESULT done");
        Runtime.getRuntime().halt(0);
    }

    private static PartitionLog filled(final LogManager logs) throws IOException
    {
        final PartitionLog log = logs.createLog("t", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600",
            LogConfig.FILE_DELETE_DELAY_MS, "0"));
        final Batches batches = new Batches();
        final AppendResult result = new AppendResult();
        int sequence = 0;
        while (log.segmentCount() < SEGMENTS)
        {
            batches.producer(3, 7, (short)0, sequence, false, System.currentTimeMillis());
            log.append(batches.buffer, 0, batches.length, result);
            if (result.status != AppendResult.OK)
            {
                throw new IllegalStateException(result.toString());
            }
            sequence += 3;
        }
        log.highWatermark(log.logEndOffset());
        return log;
    }

    private static void purge(final LogManager logs, final Path record) throws IOException
    {
        final PartitionLog log = filled(logs);
        log.flush(); // the rolled segments and the active one's name: durable
        note(record, "delete");
        final long start = log.deleteRecordsBefore(log.logEndOffset());
        note(record, "deleted");
        System.out.println("RESULT start " + (start == log.logEndOffset()) + " segments " + log.segmentCount());
    }

    private static void failing(final LogManager logs, final Path trigger) throws Exception
    {
        final PartitionLog log = logs.log("t", 0);
        log.highWatermark(log.logEndOffset());
        final Segment[] before = log.segments();
        final String first = before[0].log.path().toString();
        System.out.println("RESULT open before " + (opened(first) > 0));
        Files.createFile(trigger);
        try
        {
            log.deleteRecordsBefore(log.logEndOffset());
            System.out.println("RESULT nothing thrown");
        }
        catch (final IOException expected)
        {
            System.out.println("RESULT thrown " + expected.getClass().getSimpleName());
        }
        System.out.println("RESULT segments " + log.segmentCount());
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (opened(first) > 0 && System.nanoTime() < deadline)
        {
            Thread.sleep(10);
        }
        System.out.println("RESULT closed " + (opened(first) == 0));
        System.out.println("RESULT files kept " + Files.exists(Path.of(first)));
    }

    /** Descriptors and mappings of this process that name {@code file}: /proc/self/fd and /proc/self/maps. */
    private static int opened(final String file) throws IOException
    {
        int n = 0;
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd")))
        {
            for (final Path fd : (Iterable<Path>)fds::iterator)
            {
                try
                {
                    n += Files.readSymbolicLink(fd).toString().equals(file) ? 1 : 0;
                }
                catch (final IOException closedMeanwhile)
                {
                    // the listing's own descriptor, or one closed since
                }
            }
        }
        for (final String line : Files.readAllLines(Path.of("/proc/self/maps")))
        {
            n += line.endsWith(" " + file) ? 1 : 0;
        }
        return n;
    }

    /** One line to the shim's record, in one append (as the shim writes its own). */
    private static void note(final Path record, final String line) throws IOException
    {
        Files.write(record, (line + "\n").getBytes(StandardCharsets.US_ASCII), StandardOpenOption.CREATE,
            StandardOpenOption.APPEND, StandardOpenOption.WRITE);
    }
}
