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
 * the files are what each replica would serve and recover from; the soak reads them once the producers are stopped
 * and the ISR is full, so nothing below the high watermark changes under the read.
 */
final class ReplicaReader
{
    private static final int LOG_OVERHEAD = 12; // base offset (8) and batch length (4) before each batch's rest

    private ReplicaReader()
    {
    }

    static Checker.Replica read(final int node, final int partition, final Path partitionDir, final long limit) throws IOException
    {
        final List<Checker.Batch> batches = new ArrayList<>();
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
                final byte[] bytes = new byte[LOG_OVERHEAD + length];
                file.get(bytes);
                batches.add(batch(bytes));
            }
        }
        return new Checker.Replica(node, partition, batches);
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
