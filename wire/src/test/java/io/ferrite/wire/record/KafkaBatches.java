package io.ferrite.wire.record;

import io.ferrite.wire.compress.CompressionType;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static io.ferrite.wire.testing.Property.bytes;
import static io.ferrite.wire.testing.Property.string;

/** Random batches, described once and built by either side, for the cross-validation tests. */
final class KafkaBatches
{
    /** One record as both sides see it. */
    record Rec(long timestamp, byte[] key, byte[] value, List<Hdr> headers)
    {
    }

    record Hdr(String key, byte[] value)
    {
    }

    /** One batch's header choices and records. */
    record Spec(
        CompressionType compression, long baseOffset, int partitionLeaderEpoch, boolean logAppendTime, long logAppendTimestamp,
        long producerId, short producerEpoch, int baseSequence, boolean transactional, List<Rec> records)
    {
    }

    static Spec random(final Random r, final CompressionType compression)
    {
        final int n = 1 + r.nextInt(r.nextInt(5) == 0 ? 200 : 12);
        final long now = 1_700_000_000_000L + r.nextInt(1_000_000);
        final List<Rec> recs = new ArrayList<>();
        for (int i = 0; i < n; i++)
        {
            final List<Hdr> headers = new ArrayList<>();
            for (int h = r.nextInt(4); h > 0; h--)
            {
                // no lone surrogates: kafka-clients sizes such a header key as 3 bytes but writes 1 ('?'),
                // and so writes a record it then cannot read
                headers.add(new Hdr(string(r, 6, false), bytes(r, 40, true)));
            }
            recs.add(new Rec(now + r.nextInt(20_000) - 10_000, bytes(r, 64, true), bytes(r, 2048, true), headers));
        }
        final boolean idempotent = r.nextBoolean();
        return new Spec(compression, r.nextInt(4) == 0 ? 0 : Math.abs(r.nextLong() >>> 8), r.nextInt(4) - 1,
            r.nextInt(4) == 0, now + 5, idempotent ? r.nextInt(1 << 20) : -1, idempotent ? (short)r.nextInt(5) : -1,
            idempotent ? r.nextInt(Integer.MAX_VALUE) : -1, idempotent && r.nextBoolean(), recs);
    }

    static Compression kafkaCompression(final CompressionType type)
    {
        switch (type)
        {
            case NONE: return Compression.NONE;
            case GZIP: return Compression.gzip().build();
            case SNAPPY: return Compression.snappy().build();
            case LZ4: return Compression.lz4().build();
            case ZSTD: return Compression.zstd().build();
            default: throw new IllegalArgumentException(type.name());
        }
    }

    /** The batch as kafka-clients' MemoryRecordsBuilder writes it. */
    static ByteBuffer buildWithKafka(final Spec s)
    {
        final ByteBuffer buffer = ByteBuffer.allocate(1024);
        final MemoryRecordsBuilder b = new MemoryRecordsBuilder(buffer, RecordBatch.MAGIC_VALUE_V2,
            kafkaCompression(s.compression()),
            s.logAppendTime() ? org.apache.kafka.common.record.TimestampType.LOG_APPEND_TIME :
                org.apache.kafka.common.record.TimestampType.CREATE_TIME,
            s.baseOffset(), s.logAppendTime() ? s.logAppendTimestamp() : RecordBatch.NO_TIMESTAMP,
            s.producerId(), s.producerEpoch(), s.baseSequence(), s.transactional(), false,
            s.partitionLeaderEpoch(), Integer.MAX_VALUE);
        for (final Rec rec : s.records())
        {
            b.append(rec.timestamp(), rec.key(), rec.value(), kafkaHeaders(rec));
        }
        return b.build().buffer();
    }

    static Header[] kafkaHeaders(final Rec rec)
    {
        final Header[] headers = new Header[rec.headers().size()];
        for (int i = 0; i < headers.length; i++)
        {
            headers[i] = new RecordHeader(rec.headers().get(i).key(), rec.headers().get(i).value());
        }
        return headers;
    }

    /** The batch as our builder writes it. */
    static int buildWithFerrite(final Spec s, final RecordBatchBuilder builder, final org.agrona.MutableDirectBuffer out, final int offset)
    {
        builder.wrap(out, offset).compression(s.compression()).baseOffset(s.baseOffset())
            .partitionLeaderEpoch(s.partitionLeaderEpoch()).producer(s.producerId(), s.producerEpoch(), s.baseSequence())
            .transactional(s.transactional());
        if (s.logAppendTime())
        {
            builder.logAppendTime(s.logAppendTimestamp());
        }
        for (final Rec rec : s.records())
        {
            if (rec.headers().isEmpty())
            {
                builder.appendRecord(rec.timestamp(), rec.key(), rec.value());
            }
            else
            {
                builder.beginRecord(rec.timestamp(), rec.key(), rec.value());
                for (final Hdr h : rec.headers())
                {
                    builder.header(h.key(), h.value());
                }
                builder.endRecord();
            }
        }
        return builder.build();
    }

    static byte[] bytesOf(final ByteBuffer b)
    {
        return b == null ? null : Arrays.copyOfRange(b.array(), b.arrayOffset() + b.position(), b.arrayOffset() + b.limit());
    }

    static MemoryRecords readable(final byte[] bytes)
    {
        return MemoryRecords.readableRecords(ByteBuffer.wrap(bytes));
    }
}
