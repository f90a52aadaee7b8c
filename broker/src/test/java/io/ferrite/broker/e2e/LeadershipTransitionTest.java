package io.ferrite.broker.e2e;

import io.ferrite.testing.DroppingProxy;
import io.ferrite.broker.config.BrokerConfig;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteRecordsResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * A partition's leader &lt;-&gt; follower transitions on one node ({@code ReplicaLeadership}), driven without a
 * controller over real brokers: what happens to the produces a node holds, and to the ones it takes, as it
 * changes role. Kafka 4.4's answers are the reference.
 */
class LeadershipTransitionTest
{
    private static final String TOPIC = "t";
    @TempDir
    Path dir;
    private final RunningBroker[] nodes = new RunningBroker[3];

    @AfterEach
    void stop() throws Exception
    {
        for (final RunningBroker n : nodes)
        {
            if (n != null)
            {
                n.close();
            }
        }
    }

    private void start(final int... ids) throws Exception
    {
        for (final int id : ids)
        {
            final Map<String, String> v = new HashMap<>();
            v.put(BrokerConfig.NODE_ID, Integer.toString(id));
            nodes[id] = new RunningBroker(dir.resolve("n" + id), v);
        }
    }

    private static Uuid create(final RunningBroker node, final int minIsr) throws Exception
    {
        try (Admin admin = node.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1).configs(Map.of("min.insync.replicas", Integer.toString(minIsr)))))
                .all().get();
            return admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC).topicId();
        }
    }

    private static void produce(final RunningBroker node, final String prefix) throws Exception
    {
        try (KafkaProducer<byte[], byte[]> p = node.producer(Map.of(ProducerConfig.ACKS_CONFIG, "1", ProducerConfig.LINGER_MS_CONFIG, 0)))
        {
            for (int i = 0; i < 5; i++)
            {
                p.send(new ProducerRecord<>(TOPIC, 0, null, (prefix + i).getBytes(StandardCharsets.UTF_8))).get();
            }
        }
    }

    /** One acks=all produce of five records over a raw connection (no retries): its error. */
    private static CompletableFuture<Short> rawAcksAll(final RunningBroker node)
    {
        return CompletableFuture.supplyAsync(() ->
        {
            try (RawClient c = new RawClient(node.broker.address().getPort()))
            {
                final SimpleRecord[] records = new SimpleRecord[5];
                for (int i = 0; i < records.length; i++)
                {
                    records[i] = new SimpleRecord(("b" + i).getBytes(StandardCharsets.UTF_8));
                }
                final ProduceRequestData request = new ProduceRequestData().setAcks((short)-1).setTimeoutMs(30_000);
                request.topicData().add(new ProduceRequestData.TopicProduceData().setName(TOPIC).setPartitionData(List.of(
                    new ProduceRequestData.PartitionProduceData().setIndex(0)
                        .setRecords(MemoryRecords.withRecords(Compression.NONE, records)))));
                final ProduceResponseData r = new ProduceResponseData(new ByteBufferAccessor(c.exchange(ApiKeys.PRODUCE, (short)9, request)),
                    (short)9);
                return r.responses().iterator().next().partitionResponses().get(0).errorCode();
            }
            catch (final Exception ex)
            {
                throw new RuntimeException(ex);
            }
        });
    }

    private long logEnd(final int node)
    {
        return nodes[node].broker.topics().topic(TOPIC).partition(0).log.logEndOffset();
    }

    /**
     * Review H1: node 1 leads epoch 0 with replicas {1,2,3} and holds an acks=all produce B (offsets 0..4) no
     * follower has; node 2 (which has other records at 0..4) leads epoch 1 and node 1 follows it. Kafka's
     * makeFollower answers B NOT_LEADER_OR_FOLLOWER at once; it must never be answered OK because the new
     * leader's high watermark passed B's offsets (B exists on node 1 only).
     */
    @Test
    void aHeldAcksAllProduceIsAnsweredNotLeaderWhenItsLeaderBecomesAFollower() throws Exception
    {
        start(1, 2);
        create(nodes[1], 2);
        final Uuid id2 = create(nodes[2], 2);
        produce(nodes[2], "x");
        nodes[1].broker.leadership().leadWithoutController(TOPIC, 0, 0, new int[] {1, 2, 3}, new int[] {1, 2, 3},
            (t, pp, e, isr) -> { }).get(20, TimeUnit.SECONDS);
        final CompletableFuture<Short> answer = rawAcksAll(nodes[1]);
        await(() -> logEnd(1) == 5, Duration.ofSeconds(20), "B appended on node 1");
        nodes[2].broker.leadership().leadWithoutController(TOPIC, 0, 1, new int[] {1, 2}, new int[] {1, 2},
            (t, pp, e, isr) -> { }).get(20, TimeUnit.SECONDS);
        nodes[1].broker.leadership().followWithoutController(TOPIC, 0, 1, 2, "127.0.0.1", nodes[2].broker.address().getPort(),
            id2.getMostSignificantBits(), id2.getLeastSignificantBits()).get(20, TimeUnit.SECONDS);
        produce(nodes[2], "y");
        assertEquals(Errors.NOT_LEADER_OR_FOLLOWER, Errors.forCode(answer.get(60, TimeUnit.SECONDS)),
            "a produce held by a leader that became a follower");
    }

    /**
     * Review M5: leading a partition this node follows is one step — it stops following (its fetcher drops it)
     * and takes produces as the leader — not led and followed at once.
     */
    @Test
    void leadingAFollowedPartitionStopsFollowingItInTheSameStep() throws Exception
    {
        start(1, 2);
        create(nodes[1], 1);
        final Uuid id2 = create(nodes[2], 1);
        nodes[1].broker.leadership().followWithoutController(TOPIC, 0, 1, 2, "127.0.0.1", nodes[2].broker.address().getPort(),
            id2.getMostSignificantBits(), id2.getLeastSignificantBits()).get(20, TimeUnit.SECONDS);
        nodes[1].broker.leadership().leadWithoutController(TOPIC, 0, 2, new int[] {1}, new int[] {1},
            (t, pp, e, isr) -> { }).get(20, TimeUnit.SECONDS);
        assertNull(nodes[1].broker.leadership().fetchers().fetcher(2), "the fetcher from the old leader");
        assertEquals(Errors.NONE, Errors.forCode(rawAcksAll(nodes[1]).get(60, TimeUnit.SECONDS)), "a produce to the new leader");
    }

    /**
     * Review M5: between stopFollowing and leading, the partition is led by no one here: a produce is
     * NOT_LEADER_OR_FOLLOWER (Kafka: no local leader log), never taken by one node as if it were the only replica.
     */
    @Test
    void aPartitionThatStoppedFollowingTakesNoProduceUntilLed() throws Exception
    {
        start(1, 2);
        create(nodes[1], 1);
        final Uuid id2 = create(nodes[2], 1);
        nodes[1].broker.leadership().followWithoutController(TOPIC, 0, 1, 2, "127.0.0.1", nodes[2].broker.address().getPort(),
            id2.getMostSignificantBits(), id2.getLeastSignificantBits()).get(20, TimeUnit.SECONDS);
        nodes[1].broker.leadership().stopFollowing(TOPIC, 0).get(20, TimeUnit.SECONDS);
        assertEquals(Errors.NOT_LEADER_OR_FOLLOWER, Errors.forCode(rawAcksAll(nodes[1]).get(60, TimeUnit.SECONDS)));
        assertEquals(0, logEnd(1), "nothing appended");
    }

    /** Review M5: DeleteRecords on a followed partition is NOT_LEADER_OR_FOLLOWER (Kafka's deleteRecordsOnLeader), nothing deleted. */
    @Test
    void deleteRecordsOnAFollowerIsRefused() throws Exception
    {
        start(1, 2);
        create(nodes[1], 1);
        final Uuid id2 = create(nodes[2], 1);
        produce(nodes[1], "d");
        nodes[1].broker.leadership().followWithoutController(TOPIC, 0, 1, 2, "127.0.0.1", nodes[2].broker.address().getPort(),
            id2.getMostSignificantBits(), id2.getLeastSignificantBits()).get(20, TimeUnit.SECONDS);
        try (RawClient c = new RawClient(nodes[1].broker.address().getPort()))
        {
            final DeleteRecordsRequestData request = new DeleteRecordsRequestData().setTimeoutMs(30_000);
            request.topics().add(new DeleteRecordsRequestData.DeleteRecordsTopic().setName(TOPIC).setPartitions(List.of(
                new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0).setOffset(-1))));
            final DeleteRecordsResponseData r = new DeleteRecordsResponseData(
                new ByteBufferAccessor(c.exchange(ApiKeys.DELETE_RECORDS, (short)2, request)), (short)2);
            assertEquals(Errors.NOT_LEADER_OR_FOLLOWER, Errors.forCode(r.topics().iterator().next().partitions().iterator().next().errorCode()));
        }
        assertEquals(0, nodes[1].broker.topics().topic(TOPIC).partition(0).log.logStartOffset(), "nothing deleted");
    }

    /**
     * Review M4: a leader's address changes (node 1 followed node 2 through a proxy, then is told node 2's own
     * address for another partition): the leader's other partitions move to the new connection and go on
     * fetching, rather than staying followed with no fetcher.
     */
    @Test
    void aLeadersNewAddressKeepsItsOtherPartitionsFetched() throws Exception
    {
        start(1, 2);
        try (Admin admin = nodes[1].admin(); Admin admin2 = nodes[2].admin(); DroppingProxy proxy = new DroppingProxy(1, 0.0))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short)1))).all().get();
            admin2.createTopics(List.of(new NewTopic(TOPIC, 2, (short)1))).all().get();
            final Uuid id2 = admin2.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC).topicId();
            proxy.target(nodes[2].broker.address().getPort());
            for (int p = 0; p < 2; p++)
            {
                nodes[2].broker.leadership().leadWithoutController(TOPIC, p, 1, new int[] {1, 2}, new int[] {1, 2},
                    (t, pp, e, isr) -> { }).get(20, TimeUnit.SECONDS);
            }
            nodes[1].broker.leadership().followWithoutController(TOPIC, 0, 1, 2, "127.0.0.1", proxy.port(),
                id2.getMostSignificantBits(), id2.getLeastSignificantBits()).get(20, TimeUnit.SECONDS);
            nodes[1].broker.leadership().followWithoutController(TOPIC, 1, 1, 2, "127.0.0.1", nodes[2].broker.address().getPort(),
                id2.getMostSignificantBits(), id2.getLeastSignificantBits()).get(20, TimeUnit.SECONDS);
            produce(nodes[2], "z"); // partition 0
            await(() -> nodes[1].broker.topics().topic(TOPIC).partition(0).log.logEndOffset() == 5, Duration.ofSeconds(30),
                "partition 0, followed from the leader's old address, copied over its new one");
        }
    }
}
