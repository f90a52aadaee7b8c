package io.ferrite.broker.e2e;

import io.ferrite.broker.net.NetworkStats;
import io.ferrite.testing.Await;
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
import java.time.Duration;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A fetch response mixing record regions copied in beside their headers (small ones) and regions
 * sent from the segment file (large ones), about 2 MB in all, so the broker's writes may come back
 * partial (loopback socket buffers hold a few hundred KiB; the test prints the system calls it took and
 * does not require a partial one): every partition's batches arrive whole, in order, with valid CRCs and
 * the values that were produced, and exactly the large regions were sent from the file. And a response
 * of small regions goes out in one {@code write} (the network thread's {@link NetworkStats} count its
 * system calls): with {@code ferrite.fetch.inline.record.bytes=0} (nothing copied) these tests fail.
 */
class GatheredFetchResponseTest
{
    private static final int PARTITIONS = 40;
    private static final short PRODUCE_VERSION = 9;
    private static final short FETCH_VERSION = 12;

    @TempDir
    Path dir;

    @Test
    void aResponseOfCopiedAndSplicedRegionsArrivesWholeAndSplicesOnlyTheLargeOnes() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("num.network.threads", "1")))
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
                        produce(raw, "mixed", p, b * records(p), batch(p, b * records(p), records(p), size(p)));
                    }
                    fetched.add(new FetchRequestData.FetchPartition().setPartition(p).setFetchOffset(0)
                        .setPartitionMaxBytes(1 << 20));
                }
                final ByteBuffer body = fetch(raw, "mixed", fetched);
                final NetworkStats stats = lastResponse(broker, body);
                System.out.println("2 MB response: " + stats.lastWrites() + " writes, " + stats.lastTransfers() + " transferTo calls, "
                    + stats.lastSplices() + " regions sent from the file");
                assertEquals(PARTITIONS / 4, stats.lastSplices(), "the large regions, and only they, sent from the file");
                final FetchResponseData response = new FetchResponseData(new ByteBufferAccessor(body), FETCH_VERSION);
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

    /** Ten partitions of one small batch each (10 records of 100 bytes): their response is one gathered write. */
    @Test
    void aResponseOfSmallRegionsGoesOutInOneWrite() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("num.network.threads", "1")))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("small", 10, (short)1))).all().get(20, TimeUnit.SECONDS);
            }
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                final List<FetchRequestData.FetchPartition> fetched = new ArrayList<>();
                for (int p = 0; p < 10; p++)
                {
                    produce(raw, "small", p, 0, batch(p, 0, 10, 100));
                    fetched.add(new FetchRequestData.FetchPartition().setPartition(p).setFetchOffset(0).setPartitionMaxBytes(1 << 20));
                }
                final ByteBuffer body = fetch(raw, "small", fetched);
                final NetworkStats stats = lastResponse(broker, body);
                assertEquals(0, stats.lastSplices(), "regions sent from the file");
                assertEquals(0, stats.lastTransfers(), "transferTo calls");
                assertEquals(1, stats.lastWrites(), "write calls for a response of " + body.capacity() + " bytes");
                final FetchResponseData response = new FetchResponseData(new ByteBufferAccessor(body), FETCH_VERSION);
                for (final FetchResponseData.PartitionData answer : response.responses().get(0).partitions())
                {
                    assertEquals(0, answer.errorCode(), "partition " + answer.partitionIndex());
                    int records = 0;
                    for (final RecordBatch batch : ((MemoryRecords)answer.records()).batches())
                    {
                        batch.ensureValid();
                        for (final Record record : batch)
                        {
                            assertEquals(answer.partitionIndex(), record.value().getInt(0));
                            records++;
                        }
                    }
                    assertEquals(10, records, "records of partition " + answer.partitionIndex());
                }
            }
        }
    }

    private static ByteBuffer fetch(final RawClient raw, final String topic, final List<FetchRequestData.FetchPartition> partitions)
        throws Exception
    {
        return raw.exchange(ApiKeys.FETCH, FETCH_VERSION, new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(0)
            .setMaxBytes(50 << 20).setSessionEpoch(-1).setTopics(List.of(new FetchRequestData.FetchTopic().setTopic(topic)
                .setPartitions(partitions))));
    }

    /**
     * The only network thread's counters once its last written response is the one whose body (from its header on) the
     * client read: the response's figures are published just after its last byte went out.
     */
    private static NetworkStats lastResponse(final RunningBroker broker, final ByteBuffer body)
    {
        final NetworkStats stats = broker.broker.networkThread(0).stats();
        final long bytes = 4L + body.capacity();
        Await.await(() -> stats.lastResponseBytes() == bytes, Duration.ofSeconds(30), () -> "the network thread's last response "
            + stats.lastResponseBytes() + " bytes, expected " + bytes);
        return stats;
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

    /** One batch of {@code count} records of {@code size} bytes from {@code first}: each value its partition, its offset, then filler. */
    private static MemoryRecords batch(final int partition, final long first, final int count, final int size)
    {
        final MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(64 * 1024), RecordBatch.CURRENT_MAGIC_VALUE,
            Compression.NONE, TimestampType.CREATE_TIME, first);
        for (int i = 0; i < count; i++)
        {
            final ByteBuffer value = ByteBuffer.allocate(size).putInt(partition).putLong(first + i);
            builder.append(System.currentTimeMillis(), null, value.array());
        }
        return builder.build();
    }

    private static void produce(final RawClient raw, final String topic, final int partition, final long expectedBase,
        final MemoryRecords records) throws Exception
    {
        final ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(List.of(
            new ProduceRequestData.PartitionProduceData().setIndex(partition).setRecords(records))));
        final ProduceResponseData.PartitionProduceResponse answer = new ProduceResponseData(new ByteBufferAccessor(raw.exchange(
            ApiKeys.PRODUCE, PRODUCE_VERSION, new ProduceRequestData().setAcks((short)1).setTimeoutMs(30_000).setTopicData(topics))),
            PRODUCE_VERSION).responses().iterator().next().partitionResponses().get(0);
        assertEquals(0, answer.errorCode(), "produce to " + partition);
        assertEquals(expectedBase, answer.baseOffset(), "produce to " + partition);
    }
}
