package io.ferrite.broker.e2e;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.metrics.RequestKinds;
import io.ferrite.broker.metrics.RequestLatencies;
import io.ferrite.broker.metrics.RequestTimes;
import io.ferrite.broker.replica.FollowedPartition;
import io.ferrite.broker.replica.IsrProposals;
import io.ferrite.broker.topic.Partition;
import io.ferrite.log.PartitionLog;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchResponseData;
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

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The follower's half of replication: three brokers in this JVM on loopback ports, node 1 leading the
 * partition with replicas and ISR {1, 2, 3} (min.insync.replicas=2), nodes 2 and 3 following it with their
 * {@code ReplicaFetcher}s; kafka-clients produce acks=all to node 1.
 */
class FollowerFetcherTest
{
    private static final String TOPIC = "replicated";
    private static final int EPOCH = 0;
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path dir;
    private final RunningBroker[] nodes = new RunningBroker[4];
    private Uuid topicId;
    private final List<int[]> proposals = new CopyOnWriteArrayList<>();
    private final java.util.Random random = new java.util.Random(14);
    private final IsrProposals recorder = (topic, partition, leaderEpoch, isr) -> proposals.add(isr);
    /**
     * replica.lag.time.max.ms of the nodes this test starts: wide enough that a stall of a loaded machine (GC, three
     * brokers in one JVM) puts no follower out of sync, unless a test waits for a follower to fall out (see there).
     */
    private String lagMaxMs = "6000";
    /** Node 1's network and log threads, the ones its start added ({@link #cluster} starts it before the followers). */
    private List<Thread> leaderThreads = List.of();

    @AfterEach
    void stop() throws Exception
    {
        for (final RunningBroker node : nodes)
        {
            if (node != null)
            {
                node.close();
            }
        }
    }

    private RunningBroker start(final int id) throws Exception
    {
        return start(id, Map.of());
    }

    private RunningBroker start(final int id, final Map<String, String> overrides) throws Exception
    {
        final Map<String, String> values = new HashMap<>(overrides);
        values.put(BrokerConfig.NODE_ID, Integer.toString(id));
        values.put(BrokerConfig.REPLICA_LAG_TIME_MAX_MS, lagMaxMs);
        nodes[id] = new RunningBroker(dir.resolve("node-" + id), values);
        return nodes[id];
    }

    /** Node 1 leads replicas {1, 2, 3} with the ISR {1} and {@code followers}, which follow it. */
    private void cluster(final int... followers) throws Exception
    {
        final int[] isr = new int[followers.length + 1];
        isr[0] = 1;
        System.arraycopy(followers, 0, isr, 1, followers.length);
        final java.util.Set<Thread> existing = java.util.Set.copyOf(Thread.getAllStackTraces().keySet());
        start(1);
        leaderThreads = Thread.getAllStackTraces().keySet().stream().filter(t -> !existing.contains(t)
            && (t.getName().startsWith("ferrite-network-") || t.getName().startsWith("ferrite-log-"))).toList();
        for (final int f : followers)
        {
            start(f);
        }
        for (int id = 1; id < nodes.length; id++)
        {
            if (nodes[id] != null)
            {
                createTopic(nodes[id]);
            }
        }
        nodes[1].broker.leadership().leadWithoutController(TOPIC, 0, EPOCH, new int[] {1, 2, 3}, isr, recorder)
            .get(20, TimeUnit.SECONDS);
        for (final int f : followers)
        {
            follow(f);
        }
    }

    private void createTopic(final RunningBroker node) throws Exception
    {
        try (Admin admin = node.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1).configs(Map.of("min.insync.replicas", "2",
                "segment.bytes", "1048576")))).all().get();
            if (node == nodes[1])
            {
                topicId = admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC).topicId();
            }
        }
    }

    private FollowedPartition follow(final int id) throws Exception
    {
        return nodes[id].broker.leadership().followWithoutController(TOPIC, 0, EPOCH, 1, "127.0.0.1",
            nodes[1].broker.address().getPort(), topicId.getMostSignificantBits(), topicId.getLeastSignificantBits())
            .get(20, TimeUnit.SECONDS);
    }

    private PartitionLog log(final int id)
    {
        return partition(id).log;
    }

    private Partition partition(final int id)
    {
        return nodes[id].broker.topics().topic(TOPIC).partition(0);
    }

    private KafkaProducer<byte[], byte[]> producer(final String compression, final String transactionalId)
    {
        return producer(compression, transactionalId, 5);
    }

    /** @param lingerMs 5 batches the bursts; 0 sends a lone record at once (a test that waits for each answer) */
    private KafkaProducer<byte[], byte[]> producer(final String compression, final String transactionalId, final int lingerMs)
    {
        final Map<String, Object> extra = new HashMap<>();
        extra.put(ProducerConfig.ACKS_CONFIG, "all");
        extra.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        extra.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        extra.put(ProducerConfig.LINGER_MS_CONFIG, lingerMs);
        extra.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 60_000);
        extra.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 30_000);
        if (transactionalId != null)
        {
            extra.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        }
        return nodes[1].producer(extra);
    }

    /**
     * Sends {@code count} records acks=all; each answer must come only once every follower in {@code isr}
     * has the batch (their log ends only grow: what the callback sees, the fetch that moved the leader's high
     * watermark had already appended).
     */
    private List<Future<RecordMetadata>> send(final KafkaProducer<byte[], byte[]> producer, final int count,
        final List<String> early, final int... isr)
    {
        final List<Future<RecordMetadata>> sent = new ArrayList<>();
        for (int i = 0; i < count; i++)
        {
            // 1 KiB to 2 KiB of seeded noise: a few hundred records fill a 1 MiB segment, compressed or not
            final byte[] value = new byte[1024 + random.nextInt(1024)];
            random.nextBytes(value);
            sent.add(producer.send(new ProducerRecord<>(TOPIC, 0, null, value), (md, ex) ->
            {
                if (ex == null)
                {
                    for (final int f : isr)
                    {
                        if (log(f).logEndOffset() <= md.offset())
                        {
                            early.add("offset " + md.offset() + " answered with follower " + f + " at " + log(f).logEndOffset());
                        }
                    }
                    if (log(1).highWatermark() <= md.offset())
                    {
                        early.add("offset " + md.offset() + " answered below the leader's high watermark " + log(1).highWatermark());
                    }
                }
            }));
        }
        return sent;
    }

    private static void allSent(final List<Future<RecordMetadata>> sent) throws Exception
    {
        for (final Future<RecordMetadata> f : sent)
        {
            f.get(60, TimeUnit.SECONDS);
        }
    }

    /** The follower's high watermark reaches the leader's, with its log end, and its bytes up to it are the leader's. */
    private void caughtUpAndIdentical(final int follower) throws IOException, InterruptedException
    {
        await(() -> log(follower).logEndOffset() == log(1).logEndOffset() && log(follower).highWatermark() == log(1).highWatermark(),
            WAIT, () -> "follower " + follower + " at log end " + log(follower).logEndOffset() + ", high watermark "
                + log(follower).highWatermark() + "; the leader at " + log(1).logEndOffset() + ", " + log(1).highWatermark());
        final long highWatermark = log(1).highWatermark();
        assertArrayEquals(LogBytes.of(log(1), highWatermark), LogBytes.of(log(follower), highWatermark), "follower " + follower + "'s bytes");
        assertEquals(log(1).logStartOffset(), log(follower).logStartOffset());
    }

    @Test
    void followersCopyTheLeaderByteForByteAndAckAllWaitsForThem() throws Exception
    {
        cluster(2, 3);
        final List<String> early = new CopyOnWriteArrayList<>();
        for (final String compression : List.of("none", "gzip", "lz4", "zstd", "snappy"))
        {
            try (KafkaProducer<byte[], byte[]> producer = producer(compression, null))
            {
                allSent(send(producer, 300, early, 2, 3));
            }
        }
        try (KafkaProducer<byte[], byte[]> producer = producer("lz4", "replicated-txn"))
        {
            producer.initTransactions();
            producer.beginTransaction();
            send(producer, 50, early);
            producer.commitTransaction();
            producer.beginTransaction();
            send(producer, 50, early);
            producer.abortTransaction();
        }
        assertEquals(List.of(), early, "acks=all answered before the followers had the batch");
        await(() -> log(1).highWatermark() == log(1).logEndOffset(), WAIT, "the leader's high watermark at its log end");
        assertTrue(log(1).segmentCount() > 1, "the records span several segments");
        caughtUpAndIdentical(2);
        caughtUpAndIdentical(3);
        assertEquals(null, partition(2).followed().failure());
        // the followers' fetches are Kafka's FetchFollower on the leader, timed and counted there; nobody consumed
        final RequestLatencies leader = nodes[1].broker.counters().latencies();
        assertTrue(leader.read(RequestKinds.FETCH_FOLLOWER, RequestTimes.Stage.TOTAL).count() > 0, "the followers' fetches timed");
        assertEquals(0, leader.read(io.ferrite.wire.message.ApiKeys.FETCH.id, RequestTimes.Stage.TOTAL).count(), "no consumer's fetch");
        assertEquals(0, nodes[2].broker.counters().latencies().read(RequestKinds.FETCH_FOLLOWER, RequestTimes.Stage.TOTAL)
            .count(), "a follower serves no fetch");
    }

    /**
     * Follower 3 stopped: proposed out of the ISR once it lagged replica.lag.time.max.ms, acks=all waiting meanwhile;
     * restarted, it catches up from its log end and is proposed back. The lag is 1.5 s here (6 s before issue 17's build
     * work: waited out twice, 8 of the test's 15 s): a stall that puts follower 2 out of sync too only adds a proposal
     * (recorded, never applied), which the waits below allow for; each wait counts only the proposals made after its
     * step (the stop, the restart), so one from a stall before the stop does not meet it.
     */
    @Test
    void aStoppedFollowerIsProposedOutOfTheIsrAndCatchesUpFromItsLogEndOnceRestarted() throws Exception
    {
        lagMaxMs = "1500";
        cluster(2, 3);
        final List<String> early = new CopyOnWriteArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = producer("none", null))
        {
            allSent(send(producer, 100, early, 2, 3));
            caughtUpAndIdentical(3);
            final long threeAt = log(3).logEndOffset();
            // from the stop on: a stall of 1.5 s before it (load, the first sends) may already have proposed {1, 2}
            final int stoppedAt = proposals.size();
            nodes[3].close();
            // acks=all waits: follower 3 is in the ISR and fetches no more
            final List<Future<RecordMetadata>> waiting = send(producer, 20, early, 2);
            // on what was proposed, not on its position: a stall may add a proposal (follower 2 lagging too)
            await(() -> List.copyOf(proposals).stream().skip(stoppedAt).anyMatch(isr -> !inIsr(isr, 3)), WAIT,
                "a proposal without follower 3 once it lagged replica.lag.time.max.ms after its stop");
            assertFalse(waiting.get(0).isDone(), "acks=all answered while follower 3, in the ISR, did not have it");
            nodes[1].broker.leadership().applyIsr(TOPIC, 0, new int[] {1, 2}).get(20, TimeUnit.SECONDS);
            allSent(waiting); // the ISR {1, 2} has them
            allSent(send(producer, 100, early, 2));
            // restarted on its log: it fetches from its log end, and is proposed back into the ISR
            nodes[3].restart();
            assertEquals(threeAt, log(3).logEndOffset(), "follower 3's log end after its restart");
            final int before = proposals.size();
            follow(3);
            caughtUpAndIdentical(3);
            // a copy: a proposal added between subList and its stream would fail the view (ConcurrentModificationException)
            await(() -> List.copyOf(proposals).stream().skip(before).anyMatch(isr -> inIsr(isr, 3)), WAIT,
                "a proposal to take follower 3 back");
        }
        assertEquals(List.of(), early, "acks=all answered before the ISR had the batch");
        caughtUpAndIdentical(2);
    }

    private static boolean inIsr(final int[] isr, final int id)
    {
        return Arrays.stream(isr).anyMatch(i -> i == id);
    }

    @Test
    void aFollowedPartitionRefusesProduceAndConsumerFetches() throws Exception
    {
        cluster(2);
        try (RawClient client = new RawClient(nodes[2].broker.address().getPort());
             RawFollower consumer = new RawFollower(nodes[2].broker.address().getPort(), -1, RawFollower.OLD_VERSION, TOPIC, topicId))
        {
            final ProduceRequestData request = new ProduceRequestData().setAcks((short)1).setTimeoutMs(10_000);
            request.topicData().add(new ProduceRequestData.TopicProduceData().setName(TOPIC).setPartitionData(List.of(
                new ProduceRequestData.PartitionProduceData().setIndex(0)
                    .setRecords(MemoryRecords.withRecords(Compression.NONE, new SimpleRecord("no".getBytes(StandardCharsets.UTF_8)))))));
            final short version = 9;
            final ProduceResponseData response = new ProduceResponseData(
                new ByteBufferAccessor(client.exchange(ApiKeys.PRODUCE, version, request)), version);
            final ProduceResponseData.PartitionProduceResponse p = response.responses().iterator().next().partitionResponses().get(0);
            assertEquals(Errors.NOT_LEADER_OR_FOLLOWER, Errors.forCode(p.errorCode()), "a produce to a follower");
            final FetchResponseData.PartitionData fetched = consumer.fetch(-1, 0);
            assertEquals(Errors.NOT_LEADER_OR_FOLLOWER, Errors.forCode(fetched.errorCode()), "a consumer's fetch from a follower");
        }
        assertEquals(0, log(2).logEndOffset(), "nothing appended by the refused produce");
    }

    /**
     * A follower ahead of its leader (records the leader never had, in the same epoch 0): the leader answers
     * diverging_epoch {0, 0}, the follower truncates its stray record away and copies what the leader appends.
     */
    @Test
    void aFollowerAheadOfItsLeaderTruncatesToTheLeadersEnd() throws Exception
    {
        start(1);
        start(2);
        createTopic(nodes[1]);
        createTopic(nodes[2]);
        try (KafkaProducer<byte[], byte[]> producer = nodes[2].producer(Map.of(ProducerConfig.ACKS_CONFIG, "1")))
        {
            producer.send(new ProducerRecord<>(TOPIC, 0, null, "stray".getBytes(StandardCharsets.UTF_8))).get(20, TimeUnit.SECONDS);
        }
        nodes[1].broker.leadership().leadWithoutController(TOPIC, 0, EPOCH, new int[] {1, 2}, new int[] {1, 2}, recorder)
            .get(20, TimeUnit.SECONDS);
        final FollowedPartition followed = follow(2);
        await(() -> log(2).logEndOffset() == 0, WAIT, () -> "node 2 truncated, at " + log(2).logEndOffset());
        try (KafkaProducer<byte[], byte[]> producer = nodes[1].producer(Map.of(ProducerConfig.ACKS_CONFIG, "1")))
        {
            producer.send(new ProducerRecord<>(TOPIC, 0, null, "kept".getBytes(StandardCharsets.UTF_8))).get(20, TimeUnit.SECONDS);
        }
        caughtUpAndIdentical(2);
        assertEquals(Map.of(0L, "kept"), LogBytes.values(log(2)));
        assertNull(followed.failure());
    }

    /** Kafka's other out-of-range case: the leader's log starts above this log's end (its records below were deleted). */
    @Test
    void aFollowerBelowItsLeadersLogStartStartsOverAtIt() throws Exception
    {
        start(1);
        start(2);
        createTopic(nodes[1]);
        createTopic(nodes[2]);
        try (KafkaProducer<byte[], byte[]> producer = nodes[1].producer(Map.of(ProducerConfig.ACKS_CONFIG, "1"));
             Admin admin = nodes[1].admin())
        {
            for (int i = 0; i < 10; i++)
            {
                producer.send(new ProducerRecord<>(TOPIC, 0, null, ("r" + i).getBytes(StandardCharsets.UTF_8))).get(20, TimeUnit.SECONDS);
            }
            admin.deleteRecords(Map.of(new org.apache.kafka.common.TopicPartition(TOPIC, 0),
                org.apache.kafka.clients.admin.RecordsToDelete.beforeOffset(5))).all().get(20, TimeUnit.SECONDS);
        }
        assertEquals(5, log(1).logStartOffset());
        nodes[1].broker.leadership().leadWithoutController(TOPIC, 0, EPOCH, new int[] {1, 2}, new int[] {1, 2}, recorder)
            .get(20, TimeUnit.SECONDS);
        final FollowedPartition followed = follow(2);
        caughtUpAndIdentical(2);
        assertEquals(5, log(2).logStartOffset());
        assertNull(followed.failure());
    }

    /**
     * A follower in fsync durability: its fsyncs do not move its high watermark to its log end (the one-node
     * rule of {@code Broker.onDurable}); it stays the leader's, held here by follower 3, in the ISR and absent.
     */
    @Test
    void aFollowersFsyncDoesNotMoveItsHighWatermarkPastTheLeaders() throws Exception
    {
        start(1);
        start(2, Map.of("ferrite.log.durability", "fsync"));
        createTopic(nodes[1]);
        createTopic(nodes[2]);
        nodes[1].broker.leadership().leadWithoutController(TOPIC, 0, EPOCH, new int[] {1, 2, 3}, new int[] {1, 2, 3}, recorder)
            .get(20, TimeUnit.SECONDS);
        follow(2);
        try (KafkaProducer<byte[], byte[]> producer = nodes[1].producer(Map.of(ProducerConfig.ACKS_CONFIG, "1")))
        {
            for (int i = 0; i < 5; i++)
            {
                producer.send(new ProducerRecord<>(TOPIC, 0, null, ("r" + i).getBytes(StandardCharsets.UTF_8))).get(20, TimeUnit.SECONDS);
            }
        }
        await(() -> log(2).logEndOffset() == 5 && log(2).durableOffset() == 5, WAIT,
            () -> "follower 2 at " + log(2).logEndOffset() + ", durable " + log(2).durableOffset());
        nodes[2].holdLogThread(partition(2).owner, new java.util.concurrent.CountDownLatch(0)); // after the fsync's listener
        assertEquals(0, log(1).highWatermark(), "the leader's: follower 3 has nothing");
        assertEquals(0, log(2).highWatermark(), "the follower's high watermark after its fsync");
    }

    /**
     * What the fetcher's thread allocates per round in steady state (a record acks=all at a time: each
     * round brings one batch), measured as {@code RequestPathAllocationTest} measures the broker's threads.
     */
    @Test
    void theFetcherThreadAllocatesNothingPerRoundInSteadyState() throws Exception
    {
        cluster(2);
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final Thread fetcher = Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().equals("ferrite-replica-fetcher-1") && t.getId() != Thread.currentThread().getId())
            .findFirst().orElse(null);
        assertNotNull(fetcher, "node 2's fetcher thread");
        final List<String> early = new CopyOnWriteArrayList<>();
        // linger.ms 0: each send waits for its answer, so a linger would only add its 5 ms to each of the 2 000 rounds
        try (KafkaProducer<byte[], byte[]> producer = producer("none", null, 0))
        {
            for (int i = 0; i < 1_000; i++)
            {
                send(producer, 1, early, 2).get(0).get(20, TimeUnit.SECONDS); // warm-up
            }
            final long rounds = nodes[2].broker.leadership().fetchers().fetcher(1).rounds();
            final long before = threads.getThreadAllocatedBytes(fetcher.getId());
            final int measured = 1_000;
            for (int i = 0; i < measured; i++)
            {
                send(producer, 1, early, 2).get(0).get(20, TimeUnit.SECONDS);
            }
            final long allocated = threads.getThreadAllocatedBytes(fetcher.getId()) - before;
            final long n = nodes[2].broker.leadership().fetchers().fetcher(1).rounds() - rounds;
            System.out.println("replica fetcher: " + allocated + " bytes over " + n + " rounds (" + measured + " acks=all records)");
            assertTrue(allocated < 4_096, "the fetcher thread allocated " + allocated + " bytes over " + n + " rounds");
        }
        assertEquals(List.of(), early);
    }

    /**
     * What the leader's network and log threads allocate per acks=all record in steady state while a follower
     * replicates: the produce appended and held until the follower's fetch (replica_state) moves the high watermark,
     * the follower's fetches answered and parked, the answer sent. Measured as {@code RequestPathAllocationTest}
     * measures a lone broker's request path: windows of 1 000 records of 100 B, one at a time (linger.ms 0), from the
     * first on, until one in which each of node 1's threads allocated under 4 KiB (about 4 bytes a record: an allocation
     * made per record or per fetch, 16 bytes at least, fails every window); the warm-up is the windows before the JIT
     * compiled the path. 100 B, not the other tests' 1-2 KiB: a window then writes about 170 KB, and most windows roll
     * no 1 MiB segment. With 1-2 KiB records (about 1.5 MB a window: one or two rolls each) no window passed: the
     * leader's log thread allocated 11 or 22 KB in alternate windows, the other threads under 1.5 KB, which reads as
     * about 11 KB a segment roll, once per segment, not per record (each window prints the leader's segment count).
     */
    @Test
    void theLeadersThreadsAllocateNothingPerAcksAllRecordWhileAFollowerReplicates() throws Exception
    {
        cluster(2);
        assertTrue(leaderThreads.stream().anyMatch(t -> t.getName().startsWith("ferrite-network-"))
            && leaderThreads.stream().anyMatch(t -> t.getName().startsWith("ferrite-log-")), "node 1's threads: " + leaderThreads);
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final List<String> early = new CopyOnWriteArrayList<>();
        final long[] before = new long[leaderThreads.size()];
        final StringBuilder windows = new StringBuilder();
        final byte[] value = new byte[100];
        try (KafkaProducer<byte[], byte[]> producer = producer("none", null, 0))
        {
            for (int window = 1; window <= 12; window++)
            {
                for (int i = 0; i < before.length; i++)
                {
                    before[i] = threads.getThreadAllocatedBytes(leaderThreads.get(i).getId());
                }
                for (int r = 0; r < 1_000; r++)
                {
                    final RecordMetadata md = producer.send(new ProducerRecord<>(TOPIC, 0, null, value)).get(20, TimeUnit.SECONDS);
                    if (log(2).logEndOffset() <= md.offset())
                    {
                        early.add("offset " + md.offset() + " answered with the follower at " + log(2).logEndOffset());
                    }
                }
                boolean steady = true;
                windows.append("\n  window ").append(window).append(" (leader's segments ").append(log(1).segmentCount()).append("):");
                for (int i = 0; i < before.length; i++)
                {
                    final long allocated = threads.getThreadAllocatedBytes(leaderThreads.get(i).getId()) - before[i];
                    windows.append(' ').append(leaderThreads.get(i).getName()).append(' ').append(allocated);
                    steady &= allocated < 4_096;
                }
                if (steady)
                {
                    System.out.println("leader's threads, bytes allocated over windows of 1 000 acks=all records" + windows);
                    assertEquals(List.of(), early);
                    return;
                }
            }
        }
        fail("no window of 1 000 acks=all records in which each of the leader's threads allocated under 4 096 bytes; "
            + "bytes per thread:" + windows);
    }
}
