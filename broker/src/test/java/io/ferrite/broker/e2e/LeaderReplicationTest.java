package io.ferrite.broker.e2e;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.replica.IsrProposals;
import io.ferrite.broker.replica.LeaderReplicas;
import io.ferrite.broker.topic.Partition;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The leader's half of replication: a broker leads a partition with replicas {1, 2, 3} (set through the
 * hook the controller integration will replace), kafka-clients produce and consume, and raw replica
 * Fetch requests over real sockets act as followers 2 and 3 (one with {@code replica_id}, v12, one with
 * {@code replica_state}, v17).
 */
class LeaderReplicationTest
{
    private static final String TOPIC = "replicated";
    /**
     * The leader epoch the clients' tests lead in: 0, what Metadata, ListOffsets and OffsetForLeaderEpoch still
     * say of every partition (the cluster image will tell clients the epoch); the error test leads in a later one.
     */
    private static final int EPOCH = 0;
    private int epoch = EPOCH;
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;
    private RunningBroker broker;
    private Uuid topicId;
    private final List<int[]> proposals = new CopyOnWriteArrayList<>();
    private final IsrProposals recorder = (topic, partition, leaderEpoch, isr) ->
    {
        assertEquals(TOPIC, topic);
        assertEquals(epoch, leaderEpoch);
        proposals.add(isr);
    };

    @BeforeEach
    void start() throws Exception
    {
        start(dir, Map.of(BrokerConfig.REPLICA_LAG_TIME_MAX_MS, "2000"));
    }

    private void start(final Path data, final Map<String, String> overrides) throws Exception
    {
        broker = new RunningBroker(data, overrides);
        try (Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1).configs(Map.of("min.insync.replicas", "2")))).all().get();
            topicId = admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC).topicId();
        }
    }

    @AfterEach
    void stop() throws Exception
    {
        broker.close();
    }

    private void lead(final int... isr) throws Exception
    {
        broker.broker.leadership().leadWithoutController(TOPIC, 0, epoch, new int[] {1, 2, 3}, isr, recorder).get(20, TimeUnit.SECONDS);
    }

    private Partition partition()
    {
        return broker.broker.topics().topic(TOPIC).partition(0);
    }

    private RawFollower follower(final int id, final short version) throws Exception
    {
        return new RawFollower(broker.broker.address().getPort(), id, version, TOPIC, topicId);
    }

    private KafkaProducer<byte[], byte[]> producer(final String acks)
    {
        return broker.producer(Map.of(ProducerConfig.ACKS_CONFIG, acks, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false,
            ProducerConfig.RETRIES_CONFIG, 0, ProducerConfig.LINGER_MS_CONFIG, 0));
    }

    private static ProducerRecord<byte[], byte[]> record(final int i)
    {
        return new ProducerRecord<>(TOPIC, 0, null, ("r" + i).getBytes(StandardCharsets.UTF_8));
    }

    /** A follower's fetch from {@code offset}: no error, and what it answers. */
    private static FetchResponseData.PartitionData fetch(final RawFollower f, final long offset) throws Exception
    {
        final FetchResponseData.PartitionData p = f.fetch(EPOCH, offset);
        assertEquals(Errors.NONE, Errors.forCode(p.errorCode()), "follower " + f.replicaId + " fetching from " + offset);
        return p;
    }

    @Test
    void ackAllCompletesOnlyOnceEveryFollowerInTheIsrFetchedPastTheBatch() throws Exception
    {
        try (Led led = ledWithFollowers("all"))
        {
            final Future<RecordMetadata> sent = led.producer.send(record(0));
            await(() -> partition().log.logEndOffset() == 1, WAIT, "the batch appended on the leader");
            assertEquals(0, partition().log.highWatermark());
            // a follower reads up to the log end, not the high watermark
            final FetchResponseData.PartitionData first = fetch(led.two, 0);
            assertEquals(1, offsets(first).size(), "records a follower reads below the log end");
            assertEquals(0, first.highWatermark());
            // follower 2 has it, follower 3 not yet: the high watermark stays, and so does the answer
            assertEquals(0, fetch(led.two, 1).highWatermark());
            assertEquals(1, offsets(fetch(led.three, 0)).size());
            heldUntilFollowerThreeFetchesPastIt(sent, led.three, 0);
            assertEquals(1, fetch(led.two, 1).highWatermark(), "the high watermark a follower is told");
        }
    }

    @Test
    void inFsyncDurabilityTheHighWatermarkWaitsForTheFollowersAndTheFsync() throws Exception
    {
        broker.close();
        start(dir.resolve("fsync"), Map.of(BrokerConfig.REPLICA_LAG_TIME_MAX_MS, "2000", "ferrite.log.durability", "fsync"));
        try (Led led = ledWithFollowers("all"))
        {
            final Future<RecordMetadata> sent = led.producer.send(record(0));
            await(() -> partition().log.durableOffset() == 1, WAIT, "the batch appended and fsynced on the leader");
            fetch(led.two, 1);
            // durable, and follower 2 has it; follower 3 does not: the group committer no longer moves it alone
            heldUntilFollowerThreeFetchesPastIt(sent, led.three, -1);
        }
    }

    @Test
    void consumersReadUpToTheHighWatermarkTheFollowersMake() throws Exception
    {
        lead(1, 2, 3);
        try (KafkaProducer<byte[], byte[]> producer = producer("1");
             RawFollower two = follower(2, RawFollower.NEW_VERSION);
             RawFollower three = follower(3, RawFollower.OLD_VERSION);
             KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
        {
            for (int i = 0; i < 10; i++)
            {
                producer.send(record(i)).get(20, TimeUnit.SECONDS); // acks=1: the leader's append
            }
            assertEquals(0, partition().log.highWatermark());
            final TopicPartition tp = new TopicPartition(TOPIC, 0);
            consumer.assign(List.of(tp));
            assertEquals(0L, consumer.endOffsets(List.of(tp)).get(tp), "the end a consumer sees before any follower fetched");
            // the followers fetched up to offset 4 and 6: the high watermark is 4
            fetch(two, 0);
            fetch(two, 6);
            fetch(three, 4);
            await(() -> partition().log.highWatermark() == 4, WAIT, "the high watermark of followers at 6 and 4");
            final List<Long> read = new ArrayList<>();
            await(() ->
            {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100)))
                {
                    read.add(r.offset());
                }
                return read.size() >= 4;
            }, WAIT, () -> "the 4 records below the high watermark, read " + read);
            assertEquals(4L, consumer.endOffsets(List.of(tp)).get(tp));
            // the consumer's next fetch is answered with no records above the high watermark
            try (RawFollower raw = follower(-1, RawFollower.OLD_VERSION)) // replica id -1: a consumer
            {
                final FetchResponseData.PartitionData atEnd = raw.fetch(EPOCH, 4);
                assertEquals(4, atEnd.highWatermark());
                assertEquals(List.of(), offsets(atEnd), "a consumer's fetch at the high watermark");
                assertEquals(List.of(0L, 1L, 2L, 3L), offsets(raw.fetch(EPOCH, 0)), "a consumer's fetch from the start");
            }
            fetch(three, 10);
            fetch(two, 10);
            await(() -> partition().log.highWatermark() == 10, WAIT, "the high watermark of followers at 10");
            await(() ->
            {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100)))
                {
                    read.add(r.offset());
                }
                return read.size() >= 10;
            }, WAIT, () -> "all 10 records once the followers have them, read " + read);
            assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L), read);
        }
    }

    @Test
    void ackAllIsRefusedWhileTheIsrIsBelowTheMinimum() throws Exception
    {
        lead(1, 2); // min.insync.replicas=2: enough
        try (RawFollower two = follower(2, RawFollower.OLD_VERSION);
             KafkaProducer<byte[], byte[]> all = producer("all");
             KafkaProducer<byte[], byte[]> one = producer("1"))
        {
            broker.broker.leadership().applyIsr(TOPIC, 0, new int[] {1}).get(20, TimeUnit.SECONDS);
            final ExecutionException refused = assertThrows(ExecutionException.class, () -> all.send(record(0)).get(20, TimeUnit.SECONDS));
            assertInstanceOf(NotEnoughReplicasException.class, refused.getCause());
            assertEquals(0, partition().log.logEndOffset(), "nothing appended");
            assertEquals(0, one.send(record(1)).get(20, TimeUnit.SECONDS).offset(), "acks=1 is the leader's own answer");
            // Kafka 4.4 does not move the high watermark while the ISR is below the minimum
            fetch(two, 1);
            logThreadLooked(1, -1);
            assertEquals(0, partition().log.highWatermark());
        }
    }

    @Test
    void ackAllTimesOutWhenTheFollowersDoNotFetch() throws Exception
    {
        lead(1, 2, 3);
        final ProduceRequestData request = new ProduceRequestData().setAcks((short)-1).setTimeoutMs(300);
        request.topicData().add(new ProduceRequestData.TopicProduceData().setName(TOPIC).setPartitionData(List.of(
            new ProduceRequestData.PartitionProduceData().setIndex(0)
                .setRecords(MemoryRecords.withRecords(Compression.NONE, new SimpleRecord("late".getBytes(StandardCharsets.UTF_8)))))));
        final short version = 9;
        try (RawClient client = new RawClient(broker.broker.address().getPort()))
        {
            final ProduceResponseData response = new ProduceResponseData(
                new ByteBufferAccessor(client.exchange(ApiKeys.PRODUCE, version, request)), version);
            final ProduceResponseData.PartitionProduceResponse p = response.responses().iterator().next().partitionResponses().get(0);
            assertEquals(Errors.REQUEST_TIMED_OUT, Errors.forCode(p.errorCode()));
            assertEquals(1, partition().log.logEndOffset(), "appended, not committed");
            assertEquals(0, partition().log.highWatermark());
        }
    }

    @Test
    void aFollowerThatStopsFetchingIsProposedOutOfTheIsrAndBackInOnceCaughtUp() throws Exception
    {
        try (Led led = ledWithFollowers("1"))
        {
            led.producer.send(record(0)).get(20, TimeUnit.SECONDS);
            fetch(led.three, 0); // behind the leader's log end, and then silent
            fetch(led.two, 0);
            fetch(led.two, 1); // at the log end: caught up
            await(() -> !proposals.isEmpty(), WAIT, "a proposal once follower 3 lagged replica.lag.time.max.ms");
            assertArrayEquals(new int[] {1, 2}, proposals.get(0), "proposed: " + Arrays.toString(proposals.get(0)));
            assertEquals(0, partition().log.highWatermark(), "the ISR is the controller's to change: follower 3 still holds it");
            broker.broker.leadership().applyIsr(TOPIC, 0, new int[] {1, 2}).get(20, TimeUnit.SECONDS);
            await(() -> partition().log.highWatermark() == 1, WAIT, "the high watermark of the ISR {1, 2}");
            // caught up to the high watermark (and to the epoch's start): proposed back in
            fetch(led.three, 1);
            await(() -> proposals.size() == 2, WAIT, "a proposal to take follower 3 back");
            assertArrayEquals(new int[] {1, 2, 3}, proposals.get(1), "proposed: " + Arrays.toString(proposals.get(1)));
        }
    }

    @Test
    void aFollowerProposedIntoTheIsrHoldsTheHighWatermarkUntilTheControllerAnswers() throws Exception
    {
        try (Led led = ledWithFollowers("1"))
        {
            led.producer.send(record(0)).get(20, TimeUnit.SECONDS);
            fetch(led.three, 0); // behind, and then silent: proposed out
            fetch(led.two, 0);
            fetch(led.two, 1);
            await(() -> !proposals.isEmpty(), WAIT, "a proposal once follower 3 lagged replica.lag.time.max.ms");
            broker.broker.leadership().applyIsr(TOPIC, 0, new int[] {1, 2}).get(20, TimeUnit.SECONDS);
            await(() -> partition().log.highWatermark() == 1, WAIT, "the high watermark of the ISR {1, 2}");
            // follower 3's next fetch must not count as caught up within the lag: it would hold the HW for that alone
            final long lagMs = partition().replicas().lagMaxMs;
            final long lastFetch = System.currentTimeMillis();
            await(() -> System.currentTimeMillis() - lastFetch > lagMs, WAIT, "follower 3's last fetch older than the lag");
            led.producer.send(record(1)).get(20, TimeUnit.SECONDS);
            led.producer.send(record(2)).get(20, TimeUnit.SECONDS);
            fetch(led.three, 1); // at the high watermark: proposed back in
            await(() -> proposals.size() == 2, WAIT, "a proposal to take follower 3 back");
            assertArrayEquals(new int[] {1, 2, 3}, proposals.get(1), "proposed: " + Arrays.toString(proposals.get(1)));
            fetch(led.two, 3);
            logThreadLooked(3, 1);
            assertEquals(1, partition().log.highWatermark(), "Kafka's maximal ISR: follower 3, proposed in at 1, holds it");
            broker.broker.leadership().applyIsr(TOPIC, 0, new int[] {1, 2, 3}).get(20, TimeUnit.SECONDS);
            fetch(led.three, 3);
            await(() -> partition().log.highWatermark() == 3, WAIT, "the high watermark once follower 3 in the ISR has it");
        }
    }

    @Test
    void replicaFetchesAreAnsweredWithKafkasErrors() throws Exception
    {
        try (RawFollower early = follower(2, RawFollower.NEW_VERSION))
        {
            // a partition led alone (no followers): follower 2 is not a replica of it
            assertEquals(Errors.NOT_LEADER_OR_FOLLOWER, Errors.forCode(early.fetch(-1, 0).errorCode()));
            assertEquals(Errors.UNKNOWN_LEADER_EPOCH, Errors.forCode(early.fetch(0, 0).errorCode()));
        }
        epoch = 5;
        lead(1, 2, 3);
        try (RawFollower two = follower(2, RawFollower.NEW_VERSION);
             RawFollower four = follower(4, RawFollower.OLD_VERSION))
        {
            assertEquals(Errors.FENCED_LEADER_EPOCH, Errors.forCode(two.fetch(epoch - 1, 0).errorCode()));
            assertEquals(Errors.UNKNOWN_LEADER_EPOCH, Errors.forCode(two.fetch(epoch + 1, 0).errorCode()));
            assertEquals(Errors.NONE, Errors.forCode(two.fetch(epoch, 0).errorCode()));
            assertEquals(Errors.NONE, Errors.forCode(two.fetch(-1, 0).errorCode()), "no epoch named: no check");
            assertEquals(Errors.NOT_LEADER_OR_FOLLOWER, Errors.forCode(four.fetch(-1, 0).errorCode()), "not a replica");
            assertEquals(Errors.UNKNOWN_LEADER_EPOCH, Errors.forCode(four.fetch(epoch, 0).errorCode()), "not a replica, epoch named");
        }
    }

    /**
     * Kafka's check of a replica fetch's last_fetched_epoch against the leader's epoch cache ({@code Partition.readRecords}),
     * on the wire: the leader has led epochs 1 (offsets 0-2), 3 (3-4) and 5 (5, its log end 6). A consistent fetch reads;
     * one whose epoch ends below its fetch offset, or which names an epoch the leader never had, is answered
     * diverging_epoch {the largest epoch at or below it, that epoch's end}, no records, error NONE, and does not move
     * the follower; an epoch newer than the leader knows is OFFSET_OUT_OF_RANGE; -1 (and v12 with replica_id alike)
     * follows the same rule or none.
     */
    @Test
    void aReplicaFetchWhoseLastFetchedEpochDivergesIsAnsweredTheLeadersEndOfThatEpoch() throws Exception
    {
        try (KafkaProducer<byte[], byte[]> producer = producer("1"))
        {
            for (final int[] epochAndCount : new int[][] {{1, 3}, {3, 2}, {5, 1}})
            {
                epoch = epochAndCount[0];
                // no ISR proposal is checked here: the followers never fetch while it leads these epochs
                broker.broker.leadership().leadWithoutController(TOPIC, 0, epoch, new int[] {1, 2, 3}, new int[] {1, 2, 3},
                    (topic, partition, leaderEpoch, isr) -> { }).get(20, TimeUnit.SECONDS);
                for (int i = 0; i < epochAndCount[1]; i++)
                {
                    producer.send(record(i)).get(20, TimeUnit.SECONDS);
                }
            }
        }
        assertArrayEquals(new long[][] {{1, 0}, {3, 3}, {5, 5}}, partition().log.leaderEpochCache().snapshot());
        try (RawFollower two = follower(2, RawFollower.NEW_VERSION);
             RawFollower three = follower(3, RawFollower.OLD_VERSION))
        {
            assertEquals(List.of(4L, 5L), offsets(consistent(two.fetch(epoch, 4, 3))), "epoch 3 ends at 5, above 4");
            assertEquals(List.of(5L), offsets(consistent(two.fetch(epoch, 5, 3))), "epoch 3 ends at 5, the fetch offset");
            assertEquals(List.of(2L, 3L, 4L, 5L), offsets(consistent(two.fetch(epoch, 2, -1))), "no last fetched epoch: no check");
            assertEquals(List.of(), offsets(consistent(two.fetch(epoch, 6, 5))), "the latest epoch ends at the log end");
            assertEquals(6, partition().replicas().follower(2).logEndOffset(), "follower 2's position after its fetches");

            diverging(two.fetch(epoch, 6, 3), 3, 5);         // epoch 3 ends at 5, below the fetch offset
            diverging(two.fetch(epoch, 4, 2), 1, 3);         // no epoch 2 here: epoch 1, which ends at 3
            diverging(two.fetch(epoch, 2, 4), 3, 5);         // no epoch 4: epoch 3, ending at 5 (not below 2, but older)
            diverging(two.fetch(epoch, 1, 0), 0, 0);         // below the first epoch: that epoch, ending at the first start
            diverging(three.fetch(epoch, 6, 3), 3, 5);       // v12, replica_id in the header
            assertEquals(6, partition().replicas().follower(2).logEndOffset(), "a diverging fetch does not move the follower");
            assertEquals(-1, partition().replicas().follower(3).logEndOffset(), "nor does it record follower 3's first");

            final FetchResponseData.PartitionData newer = two.fetch(epoch, 6, 7);
            assertEquals(Errors.OFFSET_OUT_OF_RANGE, Errors.forCode(newer.errorCode()), "an epoch newer than the leader's");
            assertEquals(-1, newer.divergingEpoch().epoch());
        }
    }

    private static FetchResponseData.PartitionData consistent(final FetchResponseData.PartitionData p)
    {
        assertEquals(Errors.NONE, Errors.forCode(p.errorCode()));
        assertEquals(-1, p.divergingEpoch().epoch(), "no diverging epoch");
        assertEquals(-1L, p.divergingEpoch().endOffset());
        return p;
    }

    private static void diverging(final FetchResponseData.PartitionData p, final int epoch, final long endOffset)
    {
        assertEquals(Errors.NONE, Errors.forCode(p.errorCode()));
        assertEquals(epoch, p.divergingEpoch().epoch(), "the diverging epoch");
        assertEquals(endOffset, p.divergingEpoch().endOffset(), "its end offset");
        assertEquals(0, p.records().sizeInBytes(), "no records with a diverging epoch");
    }

    /** The partition led with replicas {1, 2, 3}, all in sync; a producer at {@code acks}; followers 2 (v12) and 3 (v17). */
    private Led ledWithFollowers(final String acks) throws Exception
    {
        lead(1, 2, 3);
        return new Led(producer(acks), follower(2, RawFollower.OLD_VERSION), follower(3, RawFollower.NEW_VERSION));
    }

    private record Led(KafkaProducer<byte[], byte[]> producer, RawFollower two, RawFollower three) implements AutoCloseable
    {
        @Override
        public void close() throws Exception
        {
            try (producer; two; three)
            {
                // closes all three
            }
        }
    }

    /**
     * Follower 3 has not fetched past the acks=all batch at offset 0 (follower 2 has): the high watermark stays
     * and so does the answer, until follower 3's next fetch offset passes the batch.
     */
    private void heldUntilFollowerThreeFetchesPastIt(final Future<RecordMetadata> sent, final RawFollower three,
        final long threeAt) throws Exception
    {
        logThreadLooked(1, threeAt);
        assertEquals(0, partition().log.highWatermark());
        assertFalse(sent.isDone(), "acks=all answered before follower 3 had the batch");
        fetch(three, 1);
        assertEquals(0, sent.get(20, TimeUnit.SECONDS).offset());
        assertEquals(1, partition().log.highWatermark());
    }

    /**
     * Returns once the partition's log thread has looked at the high watermark with followers 2 and 3 at
     * {@code twoAt} and {@code threeAt} (-1: never fetched; a fetch nudges it before it is answered; neither
     * moves after, so the last look saw both), and has finished that look: a task on the thread runs after
     * the duty cycle's look, in the same or a later cycle.
     */
    private void logThreadLooked(final long twoAt, final long threeAt) throws InterruptedException
    {
        final LeaderReplicas replicas = partition().replicas();
        await(() -> replicas.follower(2).lookedLogEnd() == twoAt && replicas.follower(3).lookedLogEnd() == threeAt, WAIT,
            () -> "the log thread's look at followers 2 at " + twoAt + " and 3 at " + threeAt);
        broker.holdLogThread(partition().owner, new CountDownLatch(0));
    }

    private static List<Long> offsets(final FetchResponseData.PartitionData p)
    {
        final List<Long> offsets = new ArrayList<>();
        ((MemoryRecords)p.records()).records().forEach(r -> offsets.add(r.offset()));
        return offsets;
    }
}
