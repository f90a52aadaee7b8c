package io.ferrite.broker.e2e;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.replica.FollowedPartition;
import io.ferrite.broker.topic.Partition;
import io.ferrite.log.PartitionLog;
import io.ferrite.broker.replica.IsrProposals;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The follower's truncation (KIP-101/279, Kafka's truncation on fetch): brokers in this JVM on loopback ports lead
 * and follow one partition through the controller-less hooks; the follower's fetcher sends its last fetched epoch,
 * the leader answers diverging_epoch or OFFSET_OUT_OF_RANGE, and the follower's log thread truncates. Each test
 * ends with the logs byte-identical, the follower's high watermark never above its log end.
 */
class FollowerTruncationTest
{
    private static final String TOPIC = "truncated";
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final long LAG_MS = 2000;

    @TempDir
    Path dir;
    private final RunningBroker[] nodes = new RunningBroker[4];

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

    /** Nodes {@code ids}, each with the topic at min.insync.replicas=2 (its own topic id: a follower names its leader's). */
    private void start(final int... ids) throws Exception
    {
        start("2", ids);
    }

    private void start(final String minInsyncReplicas, final int... ids) throws Exception
    {
        for (final int id : ids)
        {
            final Map<String, String> values = new HashMap<>();
            values.put(BrokerConfig.NODE_ID, Integer.toString(id));
            // ISR changes are the test's own (applyIsr; see keepIsr); a stopped follower out of the ISR holds the high
            // watermark back (Kafka's caught-up rule) until it lagged this long
            values.put(BrokerConfig.REPLICA_LAG_TIME_MAX_MS, Long.toString(LAG_MS));
            nodes[id] = new RunningBroker(dir.resolve("node-" + id), values);
            try (Admin admin = nodes[id].admin())
            {
                admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1).configs(Map.of("min.insync.replicas", minInsyncReplicas,
                    "internal.segment.bytes", "2048")))).all().get(); // a few dozen one-record batches a segment: truncations cut across segments
            }
        }
    }

    private void lead(final int id, final int epoch, final int[] replicas, final int[] isr) throws Exception
    {
        nodes[id].broker.leadership().leadWithoutController(TOPIC, 0, epoch, replicas, isr, keepIsr(id)).get(20, TimeUnit.SECONDS);
    }

    /**
     * A controller that answers every ISR proposal of node {@code id} with the ISR as it is: the ISR stays the test's.
     * Answered, not ignored: a proposal in flight holds the high watermark to the maximal ISR (Kafka's), and the leader
     * proposes a stopped follower whose log end is at the high watermark back in.
     */
    private IsrProposals keepIsr(final int id)
    {
        return (topic, partition, leaderEpoch, proposed) ->
            nodes[id].broker.leadership().applyIsr(topic, partition, partition(id).replicas().isr());
    }

    private FollowedPartition follow(final int id, final int leader, final int epoch) throws Exception
    {
        final var t = nodes[leader].broker.topics().topic(TOPIC);
        return nodes[id].broker.leadership().followWithoutController(TOPIC, 0, epoch, leader, "127.0.0.1",
            nodes[leader].broker.address().getPort(), t.idMostSignificantBits, t.idLeastSignificantBits).get(20, TimeUnit.SECONDS);
    }

    private void stopFollowing(final int id) throws Exception
    {
        nodes[id].broker.leadership().stopFollowing(TOPIC, 0).get(20, TimeUnit.SECONDS);
    }

    /**
     * Until follower {@code follower}, stopped, no longer counts as caught up with leader {@code leader} (Kafka's
     * {@code isCaughtUp}: within replica.lag.time.max.ms of its last catching up): from then on the leader's high
     * watermark moves without it when it is out of the ISR.
     */
    private void lagging(final int leader, final int follower) throws InterruptedException
    {
        final var f = partition(leader).replicas().follower(follower);
        await(() -> System.currentTimeMillis() - f.lastCaughtUpTimeMs() > LAG_MS + 10, WAIT,
            () -> "follower " + follower + " lagging, caught up last at " + f.lastCaughtUpTimeMs());
    }

    private Partition partition(final int id)
    {
        return nodes[id].broker.topics().topic(TOPIC).partition(0);
    }

    private PartitionLog log(final int id)
    {
        return partition(id).log;
    }

    /** {@code count} records to node {@code id} at {@code acks}, values {@code prefix + i}; their answers, in order. */
    private List<RecordMetadata> produce(final int id, final String acks, final int count, final String prefix) throws Exception
    {
        final Map<String, Object> extra = new HashMap<>();
        extra.put(ProducerConfig.ACKS_CONFIG, acks);
        extra.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        // not idempotent: each node here gives out producer ids on its own, and a new leader's first id may be one its
        // log already holds batches of from the old leader (a cluster's controller gives ids out once)
        extra.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        final List<RecordMetadata> answers = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = nodes[id].producer(extra))
        {
            for (int i = 0; i < count; i++)
            {
                // one at a time: a batch per record, so a log start or a truncation never falls inside a batch
                answers.add(producer.send(new ProducerRecord<>(TOPIC, 0, null, (prefix + i).getBytes(StandardCharsets.UTF_8)))
                    .get(60, TimeUnit.SECONDS));
            }
        }
        return answers;
    }

    /**
     * Node {@code follower}'s log becomes node {@code leader}'s, byte for byte (its batches from its log start to its
     * end), with the same log start and epoch cache, its high watermark at most its log end.
     */
    private void identical(final int follower, final int leader) throws Exception
    {
        await(() -> log(follower).logEndOffset() == log(leader).logEndOffset()
                && log(follower).logStartOffset() == log(leader).logStartOffset()
                && log(follower).leaderEpochCache().latestEpoch() == log(leader).leaderEpochCache().latestEpoch(), WAIT,
            () -> "node " + follower + " at [" + log(follower).logStartOffset() + ", " + log(follower).logEndOffset() + ") epochs "
                + java.util.Arrays.deepToString(log(follower).leaderEpochCache().snapshot()) + ", node " + leader + " at ["
                + log(leader).logStartOffset() + ", " + log(leader).logEndOffset() + ") epochs "
                + java.util.Arrays.deepToString(log(leader).leaderEpochCache().snapshot()));
        final long end = log(leader).logEndOffset();
        assertArrayEquals(LogBytes.of(log(leader), end), LogBytes.of(log(follower), end), "node " + follower + "'s bytes");
        assertArrayEquals(log(leader).leaderEpochCache().snapshot(), log(follower).leaderEpochCache().snapshot(),
            "node " + follower + "'s epoch cache");
        assertTrue(log(follower).highWatermark() <= log(follower).logEndOffset(), "node " + follower + "'s high watermark "
            + log(follower).highWatermark() + " above its log end " + log(follower).logEndOffset());
        assertNull(partition(follower).followed().failure());
    }

    /** Every answered record's value at its offset in node {@code id}'s log. */
    private void holds(final int id, final List<RecordMetadata> answered, final String prefix) throws Exception
    {
        final Map<Long, String> values = LogBytes.values(log(id));
        for (int i = 0; i < answered.size(); i++)
        {
            assertEquals(prefix + i, values.get(answered.get(i).offset()), "node " + id + " at " + answered.get(i).offset());
        }
    }

    private static void holdsNone(final Map<Long, String> values, final String prefix)
    {
        assertFalse(values.values().stream().anyMatch(v -> v.startsWith(prefix)), () -> "a " + prefix + " record in " + values);
    }

    /**
     * The old leader comes back: node 1 leads epoch 1 and appends records its follower never fetched (acks=1, the
     * follower stopped); node 2 leads epoch 2 from where it was and appends its own; node 1, now following, is
     * answered diverging_epoch {1, 20}, truncates its 7 extra records away, copies node 2's log to be byte-identical,
     * and follows what node 2 appends next (acks=all waits for it).
     */
    @Test
    void theOldLeaderTruncatesWhatItsFollowersNeverHadAndCopiesTheNewLeader() throws Exception
    {
        start(1, 2);
        lead(1, 1, new int[] {1, 2}, new int[] {1, 2});
        follow(2, 1, 1);
        final List<RecordMetadata> acked = produce(1, "all", 20, "acked-");
        assertEquals(20, log(2).logEndOffset(), "acks=all answered: node 2 has them");
        stopFollowing(2);
        produce(1, "1", 7, "stray-");
        assertEquals(27, log(1).logEndOffset());

        lead(2, 2, new int[] {1, 2}, new int[] {1, 2});
        final List<RecordMetadata> mine = produce(2, "1", 3, "new-");
        assertEquals(20, mine.get(0).offset());
        follow(1, 2, 2);
        identical(1, 2);
        assertArrayEquals(new long[][] {{1, 0}, {2, 20}}, log(1).leaderEpochCache().snapshot());
        final Map<Long, String> values = LogBytes.values(log(1));
        holdsNone(values, "stray-");
        holds(1, acked, "acked-");
        holds(1, mine, "new-");

        final List<RecordMetadata> next = produce(2, "all", 10, "next-"); // min.insync.replicas=2: node 1 must have them
        assertEquals(23, next.get(0).offset());
        identical(1, 2);
        holds(1, next, "next-");
    }

    /**
     * Acknowledged records survive a failover: 3 nodes, acks=all with min.insync.replicas=2; node 1 leads epoch 1,
     * node 3 drops out of the ISR, node 2 stops after the last acks=all record, node 1 appends more at acks=1; node 2
     * (in the ISR, with every acknowledged record) leads epoch 2, nodes 1 and 3 follow it: node 1 truncates its
     * unacknowledged tail, node 3 catches up, and every acknowledged record is in all three logs at its offset.
     */
    @Test
    void acknowledgedRecordsAreNeverTruncatedAwayFromTheNewLeader() throws Exception
    {
        start(1, 2, 3);
        lead(1, 1, new int[] {1, 2, 3}, new int[] {1, 2, 3});
        follow(2, 1, 1);
        follow(3, 1, 1);
        final List<RecordMetadata> first = produce(1, "all", 30, "first-");
        stopFollowing(3);
        nodes[1].broker.leadership().applyIsr(TOPIC, 0, new int[] {1, 2}).get(20, TimeUnit.SECONDS);
        lagging(1, 3);
        final List<RecordMetadata> second = produce(1, "all", 20, "second-");
        stopFollowing(2);
        produce(1, "1", 10, "unacked-");
        assertEquals(60, log(1).logEndOffset());
        assertEquals(50, log(2).logEndOffset());
        assertEquals(30, log(3).logEndOffset());

        lead(2, 2, new int[] {1, 2, 3}, new int[] {2, 3});
        follow(1, 2, 2);
        follow(3, 2, 2);
        final List<RecordMetadata> third = produce(2, "all", 10, "third-");
        assertEquals(50, third.get(0).offset(), "the new leader's first offset: after every acknowledged record");
        identical(1, 2);
        identical(3, 2);
        for (final int id : new int[] {1, 2, 3})
        {
            holds(id, first, "first-");
            holds(id, second, "second-");
            holds(id, third, "third-");
            holdsNone(LogBytes.values(log(id)), "unacked-");
        }
    }

    /**
     * Kafka's other OFFSET_OUT_OF_RANGE: node 2 stopped at offset 4, node 1 went on and deleted the records below 8
     * (DeleteRecords, once its ISR was itself, at min.insync.replicas=1); node 2 follows again from 4 with last fetched epoch 1 — consistent
     * with the leader's epochs but below its log start, so OFFSET_OUT_OF_RANGE — finds the leader's log start above
     * its end, deletes its log and starts over at 8, then follows new appends.
     */
    @Test
    void aFollowerBehindTheLeadersLogStartStartsOverThere() throws Exception
    {
        start("1", 1, 2);
        lead(1, 1, new int[] {1, 2}, new int[] {1, 2});
        follow(2, 1, 1);
        produce(1, "all", 4, "early-");
        stopFollowing(2);
        nodes[1].broker.leadership().applyIsr(TOPIC, 0, new int[] {1}).get(20, TimeUnit.SECONDS);
        lagging(1, 2);
        produce(1, "1", 6, "late-");
        await(() -> log(1).highWatermark() == 10, WAIT, "node 1's high watermark at its log end");
        try (Admin admin = nodes[1].admin())
        {
            admin.deleteRecords(Map.of(new TopicPartition(TOPIC, 0), RecordsToDelete.beforeOffset(8))).all().get(20, TimeUnit.SECONDS);
        }
        assertEquals(8, log(1).logStartOffset());
        assertEquals(4, log(2).logEndOffset());

        follow(2, 1, 1);
        identical(2, 1);
        assertEquals(8, log(2).logStartOffset());
        final Map<Long, String> values = LogBytes.values(log(2));
        assertEquals(Map.of(8L, "late-4", 9L, "late-5"), values);
        produce(1, "1", 3, "after-");
        identical(2, 1);
        await(() -> log(2).highWatermark() == 13, WAIT, () -> "node 2's high watermark " + log(2).highWatermark());
    }

    /**
     * The leader's log start inside a batch (DeleteRecords at 5 of one 10-record batch): the empty follower starts
     * over at 5 (OFFSET_OUT_OF_RANGE), is answered the whole batch from 0, and — Kafka's rule for an UnexpectedAppendOffset
     * on an empty log — starts again at the batch's base, appends it, and moves its log start up to the leader's 5.
     */
    @Test
    void aFollowerStartsOverAtTheBatchHoldingTheLeadersLogStart() throws Exception
    {
        start("1", 1, 2);
        try (KafkaProducer<byte[], byte[]> producer = nodes[1].producer(Map.of(ProducerConfig.ACKS_CONFIG, "1",
            ProducerConfig.LINGER_MS_CONFIG, 5_000, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false))) // one batch: sent by flush
        {
            final List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < 10; i++)
            {
                sent.add(producer.send(new ProducerRecord<>(TOPIC, 0, null, ("batched-" + i).getBytes(StandardCharsets.UTF_8))));
            }
            producer.flush();
            for (final Future<RecordMetadata> f : sent)
            {
                f.get(20, TimeUnit.SECONDS);
            }
        }
        int batches = 0;
        for (final var ignored : MemoryRecords.readableRecords(java.nio.ByteBuffer.wrap(LogBytes.of(log(1), 10))).batches())
        {
            batches++;
        }
        assertEquals(1, batches, "the ten records in one batch");
        try (Admin admin = nodes[1].admin())
        {
            admin.deleteRecords(Map.of(new TopicPartition(TOPIC, 0), RecordsToDelete.beforeOffset(5))).all().get(20, TimeUnit.SECONDS);
        }
        lead(1, 1, new int[] {1, 2}, new int[] {1, 2});
        follow(2, 1, 1);
        produce(1, "1", 1, "led-"); // a batch of epoch 1: the follower's epoch cache has it only from a batch
        identical(2, 1);
        assertEquals(5, log(2).logStartOffset());
        assertEquals(11, log(2).logEndOffset());
    }
}
