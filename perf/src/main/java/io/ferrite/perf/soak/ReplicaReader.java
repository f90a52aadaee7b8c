package io.ferrite.perf.soak;

import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * One replica's copy of a partition read from its node's log directory: the {@code <base offset>.log} segment files
 * of {@code <log dir>/<topic>-<partition>/} in offset order (both systems write RecordBatch v2 as Kafka does),
 * every batch whose base offset is below {@code limit} (the high watermark), its bytes as they are on disk and its
 * records (offset, value). A batch header of length 0 ends a segment (a preallocated file's zeroed tail), as does
 * a batch that runs past the file's end (a tail written after the read began). Reading the files rather than
 * fetching from each node: a fetch is served by the leader only (a consumer cannot name the replica it reads), and
 * the files are what each replica would serve and recover from. The soak reads them once the producers are stopped,
 * the ISR was found full twice with the same high watermarks, and {@link #end} of every replica reached the high
 * watermark (or the deadline passed: a replica still short of it is reported as behind, {@link Checker}); a replica
 * in the ISR only holds what is below the high watermark for good, so nothing below it changes under the read.
 */
final class ReplicaReader
{
    private static final int LOG_OVERHEAD = 12; // base offset (8) and batch length (4) before each batch's rest
    private static final int LAST_OFFSET_DELTA = 23; // RecordBatch v2: epoch (4), magic (1), crc (4), attributes (2) after those

    private ReplicaReader()
    {
    }

    static Checker.Replica read(final int node, final int partition, final Path partitionDir, final long limit) throws IOException
    {
        final List<Checker.Batch> batches = new ArrayList<>();
        scan(partitionDir, limit, (file, length) ->
        {
            final byte[] bytes = new byte[LOG_OVERHEAD + length];
            file.get(bytes);
            batches.add(batch(bytes));
        });
        return new Checker.Replica(node, partition, batches);
    }

    /**
     * The offset after the last batch of {@code partitionDir} whose base offset is below {@code limit} (0 when none),
     * from the batch headers alone: what {@link Checker.Replica#end} of {@link #read} would say, cheaply.
     */
    static long end(final Path partitionDir, final long limit) throws IOException
    {
        final long[] end = {0};
        scan(partitionDir, limit, (file, length) ->
        {
            end[0] = file.getLong(file.position()) + file.getInt(file.position() + LAST_OFFSET_DELTA) + 1;
            file.position(file.position() + LOG_OVERHEAD + length);
        });
        return end[0];
    }

    /** Told of each whole batch at the file's position, which it must move past the batch. */
    private interface BatchVisitor
    {
        void visit(ByteBuffer file, int length);
    }

    private static void scan(final Path partitionDir, final long limit, final BatchVisitor visitor) throws IOException
    {
        final List<Path> segments;
        try (Stream<Path> files = Files.exists(partitionDir) ? Files.list(partitionDir) : Stream.empty())
        {
            segments = files.filter(p -> p.getFileName().toString().matches("[0-9]{20}\\.log"))
                .sorted(Comparator.comparing(p -> p.getFileName().toString())).toList();
        }
        for (final Path segment : segments)
        {
            final ByteBuffer file;
            try (FileChannel channel = FileChannel.open(segment))
            {
                // mapped, not read: a Ferrite segment is preallocated to segment.bytes; only the written part is touched
                file = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size());
            }
            while (file.remaining() >= LOG_OVERHEAD)
            {
                final int start = file.position();
                final long base = file.getLong(start);
                final int length = file.getInt(start + 8);
                if (length <= 0 || start + LOG_OVERHEAD + length > file.limit() || base >= limit)
                {
                    break;
                }
                visitor.visit(file, length);
            }
        }
    }

    private static Checker.Batch batch(final byte[] bytes)
    {
        final List<Checker.Entry> entries = new ArrayList<>();
        long base = -1;
        long last = -1;
        for (final RecordBatch b : MemoryRecords.readableRecords(ByteBuffer.wrap(bytes)).batches())
        {
            base = b.baseOffset();
            last = b.lastOffset();
            if (b.isControlBatch())
            {
                continue;
            }
            for (final Record r : b)
            {
                final String value = r.hasValue() ? StandardCharsets.UTF_8.decode(r.value()).toString() : null;
                entries.add(new Checker.Entry(r.offset(), value));
            }
        }
        return new Checker.Batch(base, last, bytes, entries);
    }
}
