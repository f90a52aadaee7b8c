package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A fetch response mixing record regions copied in beside their headers (small ones) and regions
 * sent from the segment file (large ones), about 2 MB in all, so the broker's writes come back
 * partial (loopback socket buffers hold a few hundred KiB): every partition's batches arrive whole,
 * in order, with valid CRCs and the values that were produced, over any split of the writes.
 */
class GatheredFetchResponseTest
{
    private static final int PARTITIONS = 40;
    private static final short PRODUCE_VERSION = 9;
    private static final short FETCH_VERSION = 12;

    @TempDir
    Path dir;

    @Test
    void aResponseOfCopiedAndSplicedRegionsArrivesWholeThroughPartialWrites() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("mixed", PARTITIONS, (short)1))).all().get(20, TimeUnit.SECONDS);
            }
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                final List<FetchRequestData.FetchPartition> fetched = new ArrayList<>();
                for (int p = 0; p < PARTITIONS; p++)
                {
                    // every fourth partition about 200 KB in 10 batches (sent from the file), the others one small batch
                    final int batches = large(p) ? 10 : 1;
                    for (int b = 0; b < batches; b++)
                    {
                        produce(raw, p, b * records(p), batch(p, b * records(p)));
                    }
                    fetched.add(new FetchRequestData.FetchPartition().setPartition(p).setFetchOffset(0)
                        .setPartitionMaxBytes(1 << 20));
                }
                final FetchResponseData response = new FetchResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.FETCH,
                    FETCH_VERSION, new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(0).setMaxBytes(50 << 20)
                        .setSessionEpoch(-1).setTopics(List.of(new FetchRequestData.FetchTopic().setTopic("mixed")
                            .setPartitions(fetched))))), FETCH_VERSION);
                assertEquals(0, response.errorCode());
                final List<FetchResponseData.PartitionData> answers = response.responses().get(0).partitions();
                assertEquals(PARTITIONS, answers.size());
                for (final FetchResponseData.PartitionData answer : answers)
                {
                    final int p = answer.partitionIndex();
                    assertEquals(0, answer.errorCode(), "partition " + p);
                    long next = 0;
                    for (final RecordBatch batch : ((MemoryRecords)answer.records()).batches())
                    {
                        batch.ensureValid();
                        for (final Record record : batch)
                        {
                            assertEquals(next, record.offset(), "partition " + p);
                            final ByteBuffer value = record.value();
                            assertEquals(size(p), value.remaining(), "partition " + p + " offset " + next);
                            assertEquals(p, value.getInt(0), "partition " + p + " offset " + next);
                            assertEquals(next, value.getLong(4), "partition " + p + " offset " + next);
                            next++;
                        }
                    }
                    assertEquals((large(p) ? 10L : 1L) * records(p), next, "records of partition " + p);
                }
            }
        }
    }

    private static boolean large(final int partition)
    {
        return partition % 4 == 0;
    }

    private static int records(final int partition)
    {
        return large(partition) ? 20 : 10;
    }

    private static int size(final int partition)
    {
        return large(partition) ? 1000 : 200;
    }

    /** One batch of the partition's records from {@code first}: each value its partition, its offset, then filler. */
    private static MemoryRecords batch(final int partition, final long first)
    {
        final MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(64 * 1024), RecordBatch.CURRENT_MAGIC_VALUE,
            Compression.NONE, TimestampType.CREATE_TIME, first);
        for (int i = 0; i < records(partition); i++)
        {
            final ByteBuffer value = ByteBuffer.allocate(size(partition)).putInt(partition).putLong(first + i);
            builder.append(System.currentTimeMillis(), null, value.array());
        }
        return builder.build();
    }

    private static void produce(final RawClient raw, final int partition, final long expectedBase, final MemoryRecords records)
        throws Exception
    {
        final ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(new ProduceRequestData.TopicProduceData().setName("mixed").setPartitionData(List.of(
            new ProduceRequestData.PartitionProduceData().setIndex(partition).setRecords(records))));
        final ProduceResponseData.PartitionProduceResponse answer = new ProduceResponseData(new ByteBufferAccessor(raw.exchange(
            ApiKeys.PRODUCE, PRODUCE_VERSION, new ProduceRequestData().setAcks((short)1).setTimeoutMs(30_000).setTopicData(topics))),
            PRODUCE_VERSION).responses().iterator().next().partitionResponses().get(0);
        assertEquals(0, answer.errorCode(), "produce to " + partition);
        assertEquals(expectedBase, answer.baseOffset(), "produce to " + partition);
    }
}
