package io.ferrite.broker.e2e;

import io.ferrite.log.FileRegion;
import io.ferrite.log.PartitionLog;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.Record;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** What a replica's log holds, read through {@link PartitionLog#read} as a fetch reads it (tests of replication). */
final class LogBytes
{
    private LogBytes()
    {
    }

    /** The log's batches from its log start below {@code end}, as its segments hold them. */
    static byte[] of(final PartitionLog log, final long end) throws IOException
    {
        final ByteArrayOutputStream all = new ByteArrayOutputStream();
        final FileRegion region = new FileRegion();
        long offset = log.logStartOffset();
        while (offset < end)
        {
            assertEquals(PartitionLog.READ_OK, log.read(offset, 1 << 20, end, true, region));
            if (region.length == 0)
            {
                break;
            }
            final ByteBuffer b = ByteBuffer.allocate(region.length);
            while (b.hasRemaining())
            {
                region.channel.read(b, region.position + b.position());
            }
            all.write(b.array(), 0, b.capacity());
            offset = region.nextOffset;
        }
        return all.toByteArray();
    }

    /** Each record's value (UTF-8) by offset, from the log start to the log end. */
    static Map<Long, String> values(final PartitionLog log) throws IOException
    {
        final Map<Long, String> values = new TreeMap<>();
        final MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(of(log, log.logEndOffset())));
        for (final Record r : records.records())
        {
            final ByteBuffer v = r.value();
            final byte[] bytes = new byte[v.remaining()];
            v.get(bytes);
            values.put(r.offset(), new String(bytes, StandardCharsets.UTF_8));
        }
        return values;
    }
}
