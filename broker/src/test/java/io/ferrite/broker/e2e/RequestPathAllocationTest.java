package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The produce path (decode, route to the log thread, append, respond) and the fetch path (read,
 * respond, the records copied in or spliced), and ListOffsets and OffsetForLeaderEpoch, allocate nothing on the
 * broker's threads in steady state: measured per thread with {@code ThreadMXBean.getThreadAllocatedBytes}
 * over thousands of requests after a warm-up (so the JIT has compiled what escape analysis would
 * otherwise leave to the interpreter).
 */
class RequestPathAllocationTest
{
    private static final int WARM_UP = 30_000;
    private static final int MEASURED = 20_000;

    @TempDir
    Path dir;

    @Test
    void produceAndFetchAllocateNothingOnTheBrokerThreads() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("num.network.threads", "1", "ferrite.log.threads", "1")))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("alloc", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
            }
            final MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(4096), RecordBatch.CURRENT_MAGIC_VALUE,
                Compression.NONE, TimestampType.CREATE_TIME, 0L);
            for (int i = 0; i < 10; i++)
            {
                builder.append(System.currentTimeMillis(), null, new byte[100]);
            }
            final ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
            topics.add(new ProduceRequestData.TopicProduceData().setName("alloc").setPartitionData(List.of(
                new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(builder.build()))));
            final ByteBuffer produce = frame(ApiKeys.PRODUCE, (short)12, new ProduceRequestData().setAcks((short)1)
                .setTimeoutMs(30_000).setTopicData(topics));
            final ByteBuffer fetch = frame(ApiKeys.FETCH, (short)12, new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0)
                .setMinBytes(0).setMaxBytes(16 * 1024).setSessionEpoch(-1).setTopics(List.of(new FetchRequestData.FetchTopic()
                    .setTopic("alloc").setPartitions(List.of(new FetchRequestData.FetchPartition().setPartition(0)
                        .setFetchOffset(0).setPartitionMaxBytes(16 * 1024))))));
            // 64 KiB: a region above the copying threshold (32 KiB), sent from the file with transferTo (16 KiB is copied in)
            final ByteBuffer fetchSpliced = frame(ApiKeys.FETCH, (short)12, new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0)
                .setMinBytes(0).setMaxBytes(64 * 1024).setSessionEpoch(-1).setTopics(List.of(new FetchRequestData.FetchTopic()
                    .setTopic("alloc").setPartitions(List.of(new FetchRequestData.FetchPartition().setPartition(0)
                        .setFetchOffset(0).setPartitionMaxBytes(64 * 1024))))));
            assertAllocatesNothing(broker, "produce + fetch", produce, fetch, fetchSpliced);
        }
    }

    /**
     * A transactional produce (v12, transaction version 2) to a partition where its transaction is
     * open: no verification with the coordinator, nothing allocated. One frame per send, built before
     * the first, each batch with the next sequences: the first send opens the transaction (verified:
     * the coordinator adds the partition), every later one is appended inside it — each answered NONE
     * at the next offset (none a duplicate, so the whole append path is measured). The transaction's
     * timeout is the longest allowed, so no abort can come between.
     */
    @Test
    void aTransactionalProduceInsideItsOpenTransactionAllocatesNothingOnTheBrokerThreads() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("num.network.threads", "1", "ferrite.log.threads", "1")))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("alloc", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
            }
            final InitProducerIdResponseData init;
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                init = new InitProducerIdResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.INIT_PRODUCER_ID, (short)4,
                    new InitProducerIdRequestData().setTransactionalId("alloc-txn").setTransactionTimeoutMs(900_000)
                        .setProducerId(-1).setProducerEpoch((short)-1))), (short)4);
            }
            assertEquals(0, init.errorCode());
            final SimpleRecord[] records = new SimpleRecord[10];
            for (int i = 0; i < records.length; i++)
            {
                records[i] = new SimpleRecord(System.currentTimeMillis(), null, new byte[100]);
            }
            final ByteBuffer[] frames = new ByteBuffer[WARM_UP + MEASURED];
            for (int round = 0; round < frames.length; round++)
            {
                final ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
                topics.add(new ProduceRequestData.TopicProduceData().setName("alloc").setPartitionData(List.of(
                    new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(MemoryRecords.withTransactionalRecords(
                        Compression.NONE, init.producerId(), init.producerEpoch(), round * records.length, records)))));
                frames[round] = frame(ApiKeys.PRODUCE, (short)12, new ProduceRequestData().setTransactionalId("alloc-txn")
                    .setAcks((short)1).setTimeoutMs(30_000).setTopicData(topics));
            }
            final short version = 12;
            assertAllocatesNothing(broker, "transactional produce", round -> new ByteBuffer[] {frames[round]}, (round, i, response) ->
            {
                final ByteBuffer body = response.duplicate().position(0); // exchange leaves the response from its header on
                ResponseHeader.parse(body, ApiKeys.PRODUCE.responseHeaderVersion(version));
                final ProduceResponseData.PartitionProduceResponse answer = new ProduceResponseData(new ByteBufferAccessor(body), version)
                    .responses().iterator().next().partitionResponses().get(0);
                assertEquals(Errors.NONE.code(), answer.errorCode(), "send " + round);
                assertEquals((long)round * records.length, answer.baseOffset(), "send " + round);
            });
        }
    }

    /**
     * ListOffsets and OffsetForLeaderEpoch, as consumers send them when they start or validate a
     * position after a metadata change: the walk they share (PartitionOffsetsHandler), its lookups
     * through method references, and each API's answer allocate nothing on the broker's threads.
     */
    @Test
    void listOffsetsAndOffsetForLeaderEpochAllocateNothingOnTheBrokerThreads() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("num.network.threads", "1", "ferrite.log.threads", "1")))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("alloc", 2, (short)1))).all().get(20, TimeUnit.SECONDS);
            }
            final ListOffsetsRequestData.ListOffsetsTopic offsetsTopic = new ListOffsetsRequestData.ListOffsetsTopic().setName("alloc");
            final OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection epochTopics =
                new OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection();
            final OffsetForLeaderEpochRequestData.OffsetForLeaderTopic epochTopic =
                new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic("alloc");
            // partition 2 does not exist: the not-found answer is measured too
            for (int p = 0; p < 3; p++)
            {
                offsetsTopic.partitions().add(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(p)
                    .setTimestamp(p == 0 ? -1 : -2)); // LATEST, EARLIEST
                epochTopic.partitions().add(new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(p)
                    .setLeaderEpoch(0));
            }
            epochTopics.add(epochTopic);
            final ByteBuffer listOffsets = frame(ApiKeys.LIST_OFFSETS, (short)9, new ListOffsetsRequestData().setReplicaId(-1)
                .setTopics(List.of(offsetsTopic)));
            final ByteBuffer offsetForLeaderEpoch = frame(ApiKeys.OFFSET_FOR_LEADER_EPOCH, (short)4,
                new OffsetForLeaderEpochRequestData().setReplicaId(-1).setTopics(epochTopics));
            assertAllocatesNothing(broker, "ListOffsets + OffsetForLeaderEpoch", listOffsets, offsetForLeaderEpoch);
        }
    }

    /**
     * A follower's fetches checked against the leader-epoch cache ({@code FetchDivergence}): led in epoch 3 with replicas
     * {1, 2}, one record; replica 2 (v17, replica_state) fetches consistently (last fetched epoch 3), with an epoch the
     * leader never had (2: answered diverging_epoch {2, 0}) and with one newer than it knows (5: OFFSET_OUT_OF_RANGE).
     */
    @Test
    void aFollowersFetchCheckedAgainstTheEpochCacheAllocatesNothingOnTheBrokerThreads() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("num.network.threads", "1", "ferrite.log.threads", "1")))
        {
            final org.apache.kafka.common.Uuid topicId;
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("alloc", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
                topicId = admin.describeTopics(List.of("alloc")).allTopicNames().get().get("alloc").topicId();
            }
            broker.broker.leadership().leadWithoutController("alloc", 0, 3, new int[] {1, 2}, new int[] {1},
                (topic, partition, leaderEpoch, isr) -> { }).get(20, TimeUnit.SECONDS);
            try (var producer = broker.producer(Map.of(org.apache.kafka.clients.producer.ProducerConfig.ACKS_CONFIG, "1")))
            {
                producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>("alloc", 0, null, new byte[10])).get(20, TimeUnit.SECONDS);
            }
            final int[][] lastFetchedEpochs = {{3, 1}, {2, 1}, {5, 1}};
            final ByteBuffer[] fetches = new ByteBuffer[lastFetchedEpochs.length];
            for (int i = 0; i < fetches.length; i++)
            {
                final FetchRequestData data = new FetchRequestData().setMaxWaitMs(0).setMinBytes(0).setMaxBytes(1 << 20)
                    .setSessionId(0).setSessionEpoch(-1).setReplicaState(new FetchRequestData.ReplicaState().setReplicaId(2));
                data.topics().add(new FetchRequestData.FetchTopic().setTopicId(topicId).setPartitions(List.of(
                    new FetchRequestData.FetchPartition().setPartition(0).setCurrentLeaderEpoch(3)
                        .setFetchOffset(lastFetchedEpochs[i][1]).setLastFetchedEpoch(lastFetchedEpochs[i][0]).setPartitionMaxBytes(1 << 20))));
                fetches[i] = frame(ApiKeys.FETCH, (short)17, data);
            }
            assertAllocatesNothing(broker, "replica Fetch with last_fetched_epoch", round -> fetches, (round, i, response) ->
            {
                if (round % 1000 == 0)
                {
                    final ByteBuffer body = response.duplicate().position(0); // exchange leaves the response from its header on
                    ResponseHeader.parse(body, ApiKeys.FETCH.responseHeaderVersion((short)17));
                    final var p = new org.apache.kafka.common.message.FetchResponseData(new ByteBufferAccessor(body), (short)17)
                        .responses().get(0).partitions().get(0);
                    assertEquals(i == 2 ? Errors.OFFSET_OUT_OF_RANGE : Errors.NONE, Errors.forCode(p.errorCode()));
                    assertEquals(i == 1 ? 2 : -1, p.divergingEpoch().epoch());
                    assertEquals(i == 1 ? 0 : -1, p.divergingEpoch().endOffset());
                }
            });
        }
    }

    /** The requests of one round, in turn. */
    @FunctionalInterface
    private interface Round
    {
        ByteBuffer[] requests(int round);
    }

    /** A check of the answer (its header and body, as {@link #exchange} leaves it) to the {@code i}-th request of a round. */
    @FunctionalInterface
    private interface Answered
    {
        void check(int round, int i, ByteBuffer response);
    }

    /** Sends the requests in turn, WARM_UP times and then MEASURED times, and checks what the broker's threads allocated meanwhile. */
    private static void assertAllocatesNothing(final RunningBroker broker, final String what, final ByteBuffer... requests)
        throws IOException
    {
        assertAllocatesNothing(broker, what, round -> requests, (round, i, response) -> { });
    }

    /** As above, each round's requests given by {@code rounds} (0 to WARM_UP + MEASURED - 1) and each answer checked. */
    private static void assertAllocatesNothing(final RunningBroker broker, final String what, final Round rounds,
        final Answered answered) throws IOException
    {
        try (SocketChannel channel = SocketChannel.open(new InetSocketAddress("127.0.0.1", broker.broker.address().getPort())))
        {
            final ByteBuffer response = ByteBuffer.allocateDirect(1 << 20);
            for (int round = 0; round < WARM_UP; round++)
            {
                exchangeRound(channel, rounds, answered, round, response);
            }
            final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
            final Map<Thread, Long> before = new HashMap<>();
            for (final Thread t : Thread.getAllStackTraces().keySet())
            {
                if (t.getName().startsWith("ferrite-network-") || t.getName().startsWith("ferrite-log-"))
                {
                    before.put(t, threads.getThreadAllocatedBytes(t.getId()));
                }
            }
            for (int round = WARM_UP; round < WARM_UP + MEASURED; round++)
            {
                exchangeRound(channel, rounds, answered, round, response);
            }
            assertTrue(before.keySet().stream().anyMatch(t -> t.getName().startsWith("ferrite-network-")));
            for (final Map.Entry<Thread, Long> e : before.entrySet())
            {
                final long allocated = threads.getThreadAllocatedBytes(e.getKey().getId()) - e.getValue();
                System.out.println(e.getKey().getName() + ": " + allocated + " bytes over " + MEASURED + " " + what + " requests");
                // a stray one-off (a log line from a timer) is tolerated; per request, nothing
                assertTrue(allocated < 4_096, e.getKey().getName() + " allocated " + allocated + " bytes");
            }
        }
    }

    private static void exchangeRound(final SocketChannel channel, final Round rounds, final Answered answered, final int round,
        final ByteBuffer response) throws IOException
    {
        final ByteBuffer[] requests = rounds.requests(round);
        for (int i = 0; i < requests.length; i++)
        {
            exchange(channel, requests[i], response);
            answered.check(round, i, response);
        }
    }

    private static void exchange(final SocketChannel channel, final ByteBuffer request, final ByteBuffer response) throws IOException
    {
        request.clear();
        while (request.hasRemaining())
        {
            channel.write(request);
        }
        response.clear().limit(4);
        while (response.hasRemaining())
        {
            if (channel.read(response) < 0)
            {
                throw new IOException("closed");
            }
        }
        response.clear().limit(response.getInt(0));
        while (response.hasRemaining())
        {
            if (channel.read(response) < 0)
            {
                throw new IOException("closed");
            }
        }
    }

    private static ByteBuffer frame(final ApiKeys api, final short version, final ApiMessage data)
    {
        final ByteBuffer heap = RawClient.frame(api, version, data, 1);
        return ByteBuffer.allocateDirect(heap.capacity()).put(heap);
    }
}
