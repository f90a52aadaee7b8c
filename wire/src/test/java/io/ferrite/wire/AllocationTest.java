package io.ferrite.wire;

import io.ferrite.wire.message.ProduceRequestDecoder;
import io.ferrite.wire.message.ProduceRequestEncoder;
import io.ferrite.wire.message.ProduceResponseEncoder;
import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import io.ferrite.wire.record.RecordReader;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The produce path's codec work allocates nothing: decoding a Produce request and walking its
 * records, and encoding a request and a response. Counted with the JVM's per-thread allocation
 * counter (exact bytes, not timing), after a warm-up, over thousands of iterations.
 */
class AllocationTest
{
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();

    private final ExpandableDirectByteBuffer request = new ExpandableDirectByteBuffer(32 * 1024);
    private final ExpandableDirectByteBuffer records = new ExpandableDirectByteBuffer(32 * 1024);
    private final ExpandableDirectByteBuffer out = new ExpandableDirectByteBuffer(32 * 1024);
    private final UnsafeBuffer value = new UnsafeBuffer(new byte[1024]);
    private final UnsafeBuffer topic = new UnsafeBuffer("orders".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    private final RecordBatchBuilder builder = new RecordBatchBuilder();
    private final ProduceRequestEncoder requestEncoder = new ProduceRequestEncoder();
    private final ProduceResponseEncoder responseEncoder = new ProduceResponseEncoder();
    private final ProduceRequestDecoder decoder = new ProduceRequestDecoder();
    private final RecordBatch batch = new RecordBatch();
    private final RecordReader reader = new RecordReader();
    private long sink;

    @Test
    void produceRequestDecodeAndRecordIterationAllocateNothing()
    {
        final int length = encodeRequest();
        assertEquals(0, allocatedBy(() -> decode(length)), "bytes allocated by 10000 decodes");
    }

    @Test
    void produceRequestAndResponseEncodingAllocateNothing()
    {
        encodeRequest();
        assertEquals(0, allocatedBy(() ->
        {
            sink += encodeRequest();
            sink += encodeResponse();
        }), "bytes allocated by 10000 encodes");
    }

    private int encodeRequest()
    {
        builder.wrap(records, 0).producer(7L, (short)0, 0);
        for (int i = 0; i < 16; i++)
        {
            builder.appendRecord(1_700_000_000_000L + i, null, 0, -1, value, 0, value.capacity());
        }
        final int batchSize = builder.build();
        requestEncoder.wrap(request, 0, (short)11).transactionalId((CharSequence)null).acks((short)-1).timeoutMs(30_000);
        requestEncoder.topicData(1).next().name(topic, 0, topic.capacity())
            .partitionData(1).next().index(0).records(records, 0, batchSize);
        return requestEncoder.finish();
    }

    private int encodeResponse()
    {
        responseEncoder.wrap(out, 0, (short)11);
        responseEncoder.responses(1).next().name(topic, 0, topic.capacity())
            .partitionResponses(1).next().index(0).errorCode((short)0).baseOffset(42L).logAppendTimeMs(-1L).logStartOffset(0L);
        responseEncoder.throttleTimeMs(0);
        return responseEncoder.finish();
    }

    private void decode(final int length)
    {
        decoder.wrap(request, 0, length, (short)11);
        for (final ProduceRequestDecoder.TopicProduceData t = decoder.topicData(); t.hasNext(); )
        {
            t.next();
            sink += t.nameLength();
            for (final ProduceRequestDecoder.PartitionProduceData p = t.partitionData(); p.hasNext(); )
            {
                p.next();
                batch.wrap(request, p.recordsOffset());
                sink += batch.check(p.recordsLength());
                reader.reset(batch);
                while (reader.hasNext())
                {
                    final Record r = reader.next();
                    sink += r.offset() + r.valueLength();
                }
            }
        }
    }

    /**
     * Bytes allocated by 10000 runs of {@code work} after 10000 warm-up runs, net of the counter's
     * own cost: the least of five windows, since a one-off event on the thread (a deoptimisation, a
     * class initialised late) can cost a few bytes once, while anything the work itself allocates
     * costs at least 16 bytes a run — 160 000 in every window.
     */
    private static long allocatedBy(final Runnable work)
    {
        for (int i = 0; i < 10_000; i++)
        {
            work.run();
        }
        long least = Long.MAX_VALUE;
        for (int window = 0; window < 5; window++)
        {
            final long overhead = measure(() -> { });
            least = Math.min(least, Math.max(0, measure(work) - overhead));
        }
        return least;
    }

    private static long measure(final Runnable work)
    {
        final long before = THREADS.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 10_000; i++)
        {
            work.run();
        }
        return THREADS.getCurrentThreadAllocatedBytes() - before;
    }
}
