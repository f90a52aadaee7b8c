package io.ferrite.wire.message;

import org.agrona.ExpandableDirectByteBuffer;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.compress.Compression;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The zero-copy form of a RECORDS field: the encoder writes only the length prefix and the sender
 * splices the bytes in (from a file) at the returned position. Kafka's parser must read the joined
 * bytes as if they had been written inline, for flexible and non-flexible versions.
 */
class ExternalRecordsTest
{
    private static byte[] records(final String value)
    {
        final MemoryRecords records = MemoryRecords.withRecords(Compression.NONE,
            new SimpleRecord(1L, null, value.getBytes(StandardCharsets.UTF_8)));
        final byte[] bytes = new byte[records.sizeInBytes()];
        records.buffer().duplicate().get(bytes);
        return bytes;
    }

    @Test
    void splicedRecordsReadAsInlineRecords()
    {
        for (short version = FetchResponseEncoder.LOWEST_VERSION; version <= FetchResponseEncoder.HIGHEST_VERSION; version++)
        {
            final byte[] spliced = records("spliced-" + version);
            final byte[] inline = records("inline");
            final ExpandableDirectByteBuffer out = new ExpandableDirectByteBuffer(256);
            final FetchResponseEncoder encoder = new FetchResponseEncoder().wrap(out, 0, version);
            encoder.throttleTimeMs(0).errorCode((short)0).sessionId(0);
            final FetchResponseEncoder.PartitionData partition = version >= 13
                ? encoder.responses(1).next().topicId(7, 9).partitions(2)
                : encoder.responses(1).next().topic("prices").partitions(2);
            partition.next().partitionIndex(0).errorCode((short)0).highWatermark(10).lastStableOffset(10).logStartOffset(0);
            final int splicePosition = partition.recordsExternal(spliced.length);
            partition.next().partitionIndex(1).errorCode((short)0).highWatermark(3).lastStableOffset(3).logStartOffset(0)
                .records(inline);
            final int length = encoder.finish();

            final ByteBuffer joined = ByteBuffer.allocate(length + spliced.length);
            final byte[] head = new byte[length];
            out.getBytes(0, head);
            joined.put(head, 0, splicePosition).put(spliced).put(head, splicePosition, length - splicePosition).flip();

            final FetchResponseData parsed = new FetchResponseData(new ByteBufferAccessor(joined), version);
            assertEquals(0, joined.remaining(), "v" + version + " consumed exactly");
            final FetchResponseData.FetchableTopicResponse topic = parsed.responses().get(0);
            assertEquals(ByteBuffer.wrap(spliced), ((MemoryRecords)topic.partitions().get(0).records()).buffer(), "v" + version);
            assertEquals(ByteBuffer.wrap(inline), ((MemoryRecords)topic.partitions().get(1).records()).buffer(), "v" + version);
            assertEquals(3, topic.partitions().get(1).highWatermark(), "v" + version);
        }
    }
}
