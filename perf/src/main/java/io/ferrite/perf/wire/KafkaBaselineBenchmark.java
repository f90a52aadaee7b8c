package io.ferrite.perf.wire;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * The same work done by kafka-clients 4.4, for ratios against {@link ProduceRequestBenchmark} and
 * {@link RecordBatchBenchmark}: parse and serialize the same Produce v11 request, iterate the same
 * batch of 16 x 1 KiB records.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1)
public class KafkaBaselineBenchmark
{
    private static final short VERSION = 11;

    private ByteBuffer request;
    private ProduceRequestData data;
    private MemoryRecords records;

    @Setup
    public void setUp()
    {
        final MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocateDirect(32 * 1024),
            Compression.NONE, TimestampType.CREATE_TIME, 0L);
        builder.setProducerState(7L, (short)0, 0, false);
        final byte[] key = new byte[16];
        final byte[] value = new byte[1024];
        for (int i = 0; i < 16; i++)
        {
            builder.append(1_700_000_000_000L + i, key, value);
        }
        records = builder.build();
        data = new ProduceRequestData().setAcks((short)-1).setTimeoutMs(30_000);
        final ProduceRequestData.TopicProduceData topic = new ProduceRequestData.TopicProduceData().setName("orders");
        topic.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records));
        data.topicData().add(topic);
        request = MessageUtil.toByteBufferAccessor(data, VERSION).buffer();
    }

    @Benchmark
    public long produceRequestDecode()
    {
        final ProduceRequestData parsed = new ProduceRequestData(new ByteBufferAccessor(request.duplicate()), VERSION);
        long sum = parsed.acks();
        for (final ProduceRequestData.TopicProduceData t : parsed.topicData())
        {
            sum += t.name().length();
            for (final ProduceRequestData.PartitionProduceData p : t.partitionData())
            {
                final MutableRecordBatch batch = ((MemoryRecords)p.records()).batches().iterator().next();
                sum += p.index() + batch.countOrNull() + batch.producerId() + batch.baseSequence() + batch.lastOffset();
            }
        }
        return sum;
    }

    @Benchmark
    public int produceRequestEncode()
    {
        return MessageUtil.toByteBufferAccessor(data, VERSION).buffer().remaining();
    }

    @Benchmark
    public long recordBatchIterate()
    {
        long sum = 0;
        for (final MutableRecordBatch batch : records.batches())
        {
            for (final Record r : batch)
            {
                sum += r.offset() + r.timestamp() + r.keySize() + r.valueSize();
            }
        }
        return sum;
    }
}
