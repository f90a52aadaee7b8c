package io.ferrite.client;

import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@link Consumer}'s committed offsets (a {@code group.id} with manual assignment) and read_committed, against a
 * broker over a socket (run by {@link FerriteInteropTest} and {@link KafkaInteropTest}, so each case meets Ferrite and
 * Apache Kafka 4.4): offsets committed by this consumer read by kafka-clients' and the other way round, the start
 * position taken from the committed offset ({@code auto.offset.reset} only without one), commitAsync's handler, the
 * typed error for a group with members; a kafka-clients transactional producer's commits and aborts read under
 * read_committed (exactly the committed records, the position held at the last stable offset, also one batch per
 * answer) and read_uncommitted; review 1's cases (a lookup given up, staged offsets after a failed commit, commitSync
 * after a commit left outstanding, refused timeouts and calls after close, the coordinator lost in flight).
 */
interface GroupOffsetsInteropContract
{
    long DEADLINE_NS = TimeUnit.SECONDS.toNanos(60);

    String bootstrap();

    void createTopic(String name, int partitions) throws Exception;

    @Test
    default void offsetsCommittedHereAreReadByKafkaClientsAndStartTheNextConsumer() throws Exception
    {
        final String topic = "offsets-here";
        final String group = "offsets-here-group";
        createTopic(topic, 2);
        produce(topic, 0, 30);
        try (Consumer consumer = new Consumer(config(group).autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST)))
        {
            consumer.assign(topic, 0);
            assertEquals(-1, consumer.committed(topic, 0, 30_000), "nothing committed yet");
            assertEquals(0, readValues(consumer, 10).get(0), "no committed offset: auto.offset.reset (earliest)");
            consumer.commitSync(30_000); // the position: 10
            assertEquals(10, consumer.committed(topic, 0, 30_000));
        }
        assertEquals(Map.of(0, 10L), kafkaCommitted(group, topic, 2));
        // latest would start at 30: the committed offset wins
        try (Consumer consumer = new Consumer(config(group).autoOffsetReset(ConsumerConfig.OffsetReset.LATEST)))
        {
            consumer.assign(topic, 0);
            assertEquals(IntStream.range(10, 30).boxed().toList(), readValues(consumer, 20),
                "from the committed offset on, not from the end");
            consumer.commitOffset(topic, 0, 25);
            consumer.commitSync(30_000);
        }
        assertEquals(Map.of(0, 25L), kafkaCommitted(group, topic, 2));
    }

    @Test
    default void offsetsCommittedByKafkaClientsStartThisConsumer() throws Exception
    {
        final String topic = "offsets-kafka";
        final String group = "offsets-kafka-group";
        createTopic(topic, 2);
        produce(topic, 0, 30);
        produce(topic, 1, 30);
        try (KafkaConsumer<byte[], byte[]> kafka = kafkaConsumer(group))
        {
            kafka.assign(List.of(new TopicPartition(topic, 0)));
            kafka.commitSync(Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(17, "from kafka-clients")));
        }
        try (Consumer consumer = new Consumer(config(group).autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST)))
        {
            assertEquals(17, consumer.committed(topic, 0, 30_000), "a partition not assigned may be looked up");
            consumer.assign(topic, 0);
            consumer.assign(topic, 1);
            final List<ConsumerInteropContract.Read> read = read(consumer, 13 + 30);
            assertEquals(17, read.stream().filter(r -> r.partition() == 0).findFirst().orElseThrow().offset(), "partition 0: committed");
            assertEquals(0, read.stream().filter(r -> r.partition() == 1).findFirst().orElseThrow().offset(), "partition 1: earliest");
            assertEquals(17, consumer.committed(topic, 0, 30_000));
            assertEquals(-1, consumer.committed(topic, 1, 30_000));
        }
    }

    @Test
    default void commitAsyncTellsItsHandlerOnce() throws Exception
    {
        final String topic = "offsets-async";
        final String group = "offsets-async-group";
        createTopic(topic, 2);
        try (Consumer consumer = new Consumer(config(group)))
        {
            consumer.assign(topic, 0);
            consumer.assign(topic, 1);
            consumer.commitOffset(topic, 0, 5);
            consumer.commitOffset(topic, 1, 7);
            final long[] outcome = {0, -1, 0}; // calls, tag, error
            final OffsetCommitHandler handler = (tag, error) ->
            {
                outcome[0]++;
                outcome[1] = tag;
                outcome[2] = error;
            };
            assertTrue(consumer.commitAsync(handler, 42));
            assertFalse(consumer.commitAsync(handler, 43), "one commit outstanding at a time");
            doWorkUntil(consumer, () -> outcome[0] != 0, "the commit completed in time");
            assertArrayEquals(new long[] {1, 42, ClientErrors.NONE}, outcome);
            // a second commit, now allowed, runs the duty cycles in which a duplicate call of the first would come
            consumer.commitOffset(topic, 0, 6);
            final long[] second = {0};
            assertTrue(consumer.commitAsync((tag, error) -> second[0]++, 44));
            doWorkUntil(consumer, () -> second[0] != 0, "the second commit completed in time");
            assertArrayEquals(new long[] {1, 42, ClientErrors.NONE}, outcome, "the first handler told once only");
            assertEquals(1, second[0]);
        }
        assertEquals(Map.of(0, 6L, 1, 7L), kafkaCommitted(group, topic, 2));
    }

    /**
     * A lookup whose caller gave up after its OffsetFetch was sent (committed() timed out) must not answer the next
     * lookup, of another partition: its answer comes first on the coordinator connection (-1 for lk-a).
     */
    @Test
    default void aLookupGivenUpDoesNotAnswerTheNextOne() throws Exception
    {
        final String group = "offsets-lookup-group";
        createTopic("offsets-lk-a", 1);
        createTopic("offsets-lk-b", 1);
        try (Consumer committer = new Consumer(config(group)))
        {
            committer.assign("offsets-lk-b", 0);
            committer.commitOffset("offsets-lk-b", 0, 7);
            committer.commitSync(30_000);
        }
        try (Consumer consumer = new Consumer(config(group)))
        {
            assertEquals(7, consumer.committed("offsets-lk-b", 0, 30_000), "the coordinator found and connected");
            final CommittedOffsets c = consumer.groupOffsets().committed;
            c.startLookup("offsets-lk-a", 0, System.nanoTime());
            doWorkUntil(consumer, c::lookupInFlight, "the lookup of lk-a sent in time");
            c.endLookup(); // what committed("offsets-lk-a", 0, t) does when t runs out now
            assertEquals(7, consumer.committed("offsets-lk-b", 0, 30_000), "lk-b's committed offset, not lk-a's answer");
            assertEquals(-1, consumer.committed("offsets-lk-a", 0, 30_000));
        }
    }

    /**
     * A commit that fails (UNKNOWN_MEMBER_ID while the group has a member) keeps the staged offset: once the member
     * left, committing again commits it, not the position ahead of it (records handed out but not processed).
     */
    @Test
    default void aFailedCommitKeepsTheStagedOffsets() throws Exception
    {
        final String topic = "offsets-staged";
        final String group = "offsets-staged-group";
        createTopic(topic, 1);
        produce(topic, 0, 10);
        try (Consumer consumer = new Consumer(config(group).autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST)))
        {
            consumer.assign(topic, 0);
            assertEquals(10, readValues(consumer, 10).size());
            awaitPosition(consumer, topic, 10);
            try (KafkaConsumer<byte[], byte[]> member = kafkaConsumer(group))
            {
                member.subscribe(List.of(topic));
                awaitJoined(member);
                consumer.commitOffset(topic, 0, 3);
                final OffsetCommitException e = assertThrows(OffsetCommitException.class, () -> consumer.commitSync(30_000));
                assertEquals(ClientErrors.UNKNOWN_MEMBER_ID, e.errorCode(), e.getMessage());
            } // the member leaves the group
            consumer.commitSync(30_000);
            assertEquals(3, consumer.committed(topic, 0, 30_000), "the staged offset, not the position (10)");
        }
        assertEquals(Map.of(0, 3L), kafkaCommitted(group, topic, 1));
    }

    /**
     * commitSync while a commit is outstanding — one whose commitSync timed out with it in flight (its answer told to
     * no one), or a commitAsync — waits for it and commits its own, as kafka-clients commits again after a timeout.
     */
    @Test
    default void commitSyncAfterACommitLeftInFlightCommitsAgain() throws Exception
    {
        final String topic = "offsets-again";
        final String group = "offsets-again-group";
        createTopic(topic, 1);
        try (Consumer consumer = new Consumer(config(group)))
        {
            consumer.assign(topic, 0);
            consumer.commitOffset(topic, 0, 5);
            final long[] calls = {0};
            final OffsetCommitHandler handler = (tag, error) -> calls[0]++;
            assertTrue(consumer.commitAsync(handler, 1));
            final GroupOffsets offsets = consumer.groupOffsets();
            doWorkUntil(consumer, offsets::commitInFlight, "the commit sent in time");
            offsets.forgetCommitCaller(handler); // what commitSync does when its timeout runs out now
            consumer.commitOffset(topic, 0, 6);
            consumer.commitSync(30_000);
            assertEquals(0, calls[0], "the forgotten commit's answer told no one");
            assertEquals(6, consumer.committed(topic, 0, 30_000));

            consumer.commitOffset(topic, 0, 8);
            assertTrue(consumer.commitAsync(handler, 2));
            consumer.commitOffset(topic, 0, 9);
            consumer.commitSync(Long.MAX_VALUE); // waits for the commitAsync (8), then commits 9; no overflow
            assertEquals(1, calls[0], "commitAsync's handler told before commitSync returned");
            assertEquals(9, consumer.committed(topic, 0, Long.MAX_VALUE));
        }
        assertEquals(Map.of(0, 9L), kafkaCommitted(group, topic, 1));
    }

    /**
     * The coordinator forgotten (as a NOT_COORDINATOR answer or a lost connection makes it) while a commit and then a
     * lookup are in flight: the connection is shut, the commit's handler gets NOT_COORDINATOR and its staged offset
     * stays; the coordinator is found again, the commit made again and the lookup asked again, both on the new
     * connection.
     */
    @Test
    default void aCoordinatorLostInFlightIsFoundAgain() throws Exception
    {
        final String topic = "offsets-lost";
        final String group = "offsets-lost-group";
        createTopic(topic, 1);
        try (Consumer consumer = new Consumer(config(group)))
        {
            consumer.assign(topic, 0);
            consumer.commitOffset(topic, 0, 4);
            final long[] outcome = {0, 0}; // calls, error
            assertTrue(consumer.commitAsync((tag, error) ->
            {
                outcome[0]++;
                outcome[1] = error;
            }, 1));
            final GroupOffsets offsets = consumer.groupOffsets();
            doWorkUntil(consumer, offsets::commitInFlight, "the commit sent in time");
            offsets.coordinatorUnknown();
            doWorkUntil(consumer, () -> outcome[0] != 0, "the commit failed in time");
            assertArrayEquals(new long[] {1, ClientErrors.NOT_COORDINATOR}, outcome);
            consumer.commitSync(30_000); // the staged 4 again, the coordinator found again
            final CommittedOffsets c = offsets.committed;
            c.startLookup(topic, 0, System.nanoTime());
            doWorkUntil(consumer, c::lookupInFlight, "the lookup sent in time");
            offsets.coordinatorUnknown();
            doWorkUntil(consumer, c::lookupDone, "the lookup answered in time");
            assertEquals(ClientErrors.NONE, c.lookupError());
            assertEquals(4, c.lookupOffset());
            c.endLookup();
        }
        assertEquals(Map.of(0, 4L), kafkaCommitted(group, topic, 1));
    }

    /** Negative timeouts are refused; a closed consumer refuses the committed-offset calls (as kafka-clients). */
    @Test
    default void badTimeoutsAndClosedConsumerAreRefused() throws Exception
    {
        final String topic = "offsets-refused";
        createTopic(topic, 1);
        final Consumer consumer = new Consumer(config("offsets-refused-group"));
        consumer.assign(topic, 0);
        assertThrows(IllegalArgumentException.class, () -> consumer.commitSync(-1));
        assertThrows(IllegalArgumentException.class, () -> consumer.committed(topic, 0, -1));
        consumer.close();
        assertThrows(IllegalStateException.class, () -> consumer.committed(topic, 0, 30_000));
        assertThrows(IllegalStateException.class, () -> consumer.commitOffset(topic, 0, 1));
        assertThrows(IllegalStateException.class, () -> consumer.commitSync(30_000));
        assertFalse(consumer.commitAsync((tag, error) -> { }, 0));
    }

    /**
     * A group with a member (a kafka-clients consumer subscribed): a commit from outside the group (generation -1, no
     * member id) is refused with UNKNOWN_MEMBER_ID, kafka-clients' CommitFailedException — thrown, not retried.
     */
    @Test
    default void commitForAGroupWithMembersIsATypedError() throws Exception
    {
        final String topic = "offsets-members";
        final String group = "offsets-members-group";
        createTopic(topic, 1);
        try (KafkaConsumer<byte[], byte[]> member = kafkaConsumer(group);
             Consumer consumer = new Consumer(config(group).autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST)))
        {
            member.subscribe(List.of(topic));
            awaitJoined(member);
            consumer.assign(topic, 0);
            consumer.commitOffset(topic, 0, 3);
            final OffsetCommitException e = assertThrows(OffsetCommitException.class, () -> consumer.commitSync(30_000));
            assertEquals(ClientErrors.UNKNOWN_MEMBER_ID, e.errorCode(), e.getMessage());
        }
    }

    /**
     * A kafka-clients transactional producer commits, aborts, commits and leaves a fourth transaction open; a second
     * producer's transaction interleaved with the aborted one commits. read_committed hands out exactly the committed
     * records and stops at the last stable offset (the open transaction's first offset) until it commits;
     * read_uncommitted hands out all of them.
     */
    @Test
    default void readCommittedLeavesOutAbortedTransactions() throws Exception
    {
        final String topic = "offsets-read-committed";
        createTopic(topic, 1);
        try (KafkaProducer<byte[], byte[]> a = transactional("a");
             KafkaProducer<byte[], byte[]> b = transactional("b");
             Consumer committed = new Consumer(new ConsumerConfig().bootstrapServers(bootstrap()).fetchMaxWaitMs(100)
                 .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).isolationLevel(ConsumerConfig.IsolationLevel.READ_COMMITTED));
             Consumer uncommitted = new Consumer(new ConsumerConfig().bootstrapServers(bootstrap()).fetchMaxWaitMs(100)
                 .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST)))
        {
            transaction(a, topic, 0, 3, true);       // 0-2, marker 3
            a.beginTransaction();                     // aborted: 4-5 (a), with b's 6-7 interleaved, 8 (a)
            send(a, topic, 20, 2);
            b.beginTransaction();
            send(b, topic, 50, 2);
            send(a, topic, 22, 1);
            a.abortTransaction();                     // marker 9
            b.commitTransaction();                    // marker 10
            transaction(a, topic, 3, 3, true);       // 11-13, marker 14
            a.beginTransaction();                     // open: 15-16
            send(a, topic, 6, 2);

            committed.assign(topic, 0);
            assertEquals(List.of(0, 1, 2, 50, 51, 3, 4, 5), readValues(committed, 8), "the committed records only");
            awaitPosition(committed, topic, 15); // the last stable offset: the open transaction's first
            uncommitted.assign(topic, 0);
            assertEquals(List.of(0, 1, 2, 20, 21, 50, 51, 22, 3, 4, 5, 6, 7), readValues(uncommitted, 13));

            a.commitTransaction();                    // marker 17
            assertEquals(List.of(6, 7), readValues(committed, 2), "the fourth transaction once committed");
            awaitPosition(committed, topic, 18);
        }
    }

    /**
     * read_committed with one record batch per Fetch answer (fetch sizes of 1 byte): a Fetch that starts inside the
     * aborted transaction gets it in its aborted list with a first offset below the fetch offset.
     */
    @Test
    default void readCommittedOneBatchPerAnswer() throws Exception
    {
        final String topic = "offsets-one-batch";
        createTopic(topic, 1);
        try (KafkaProducer<byte[], byte[]> a = transactional("oa");
             KafkaProducer<byte[], byte[]> b = transactional("ob");
             Consumer committed = new Consumer(new ConsumerConfig().bootstrapServers(bootstrap()).fetchMaxWaitMs(100)
                 .maxPartitionFetchBytes(1).fetchMaxBytes(1).autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST)
                 .isolationLevel(ConsumerConfig.IsolationLevel.READ_COMMITTED)))
        {
            a.beginTransaction();
            sendEach(a, topic, 0, 3);
            a.commitTransaction();
            a.beginTransaction();                     // aborted: 4-5 (a), b's 6-7 interleaved, 8 (a)
            sendEach(a, topic, 20, 2);
            b.beginTransaction();
            sendEach(b, topic, 50, 2);
            sendEach(a, topic, 22, 1);
            a.abortTransaction();
            b.commitTransaction();
            a.beginTransaction();
            sendEach(a, topic, 3, 3);
            a.commitTransaction();
            committed.assign(topic, 0);
            assertEquals(List.of(0, 1, 2, 50, 51, 3, 4, 5), readValues(committed, 8));
        }
    }

    /** One batch per record: each flushed alone. */
    private static void sendEach(final KafkaProducer<byte[], byte[]> p, final String topic, final int first, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            send(p, topic, first + i, 1);
        }
    }

    private static void transaction(final KafkaProducer<byte[], byte[]> p, final String topic, final int first,
        final int count, final boolean commit)
    {
        p.beginTransaction();
        send(p, topic, first, count);
        if (commit)
        {
            p.commitTransaction();
        }
        else
        {
            p.abortTransaction();
        }
    }

    /** Records with the values first..first+count-1 (one byte each), flushed, so the log's order is the call order. */
    private static void send(final KafkaProducer<byte[], byte[]> p, final String topic, final int first, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            p.send(new ProducerRecord<>(topic, 0, null, new byte[] {(byte)(first + i)}));
        }
        p.flush();
    }

    private KafkaProducer<byte[], byte[]> transactional(final String name)
    {
        final KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrap(),
            "key.serializer", ByteArraySerializer.class, "value.serializer", ByteArraySerializer.class,
            "transactional.id", "offsets-" + name + "-" + System.nanoTime()));
        p.initTransactions();
        return p;
    }

    private ConsumerConfig config(final String group)
    {
        return new ConsumerConfig().bootstrapServers(bootstrap()).fetchMaxWaitMs(100).groupId(group).enableAutoCommit(false);
    }

    private KafkaConsumer<byte[], byte[]> kafkaConsumer(final String group)
    {
        return new KafkaConsumer<>(Map.of("bootstrap.servers", bootstrap(), "group.id", group,
            "enable.auto.commit", false, "key.deserializer", ByteArrayDeserializer.class,
            "value.deserializer", ByteArrayDeserializer.class));
    }

    /** The group's committed offsets of the topic's partitions as kafka-clients reads them (partitions without one left out). */
    private Map<Integer, Long> kafkaCommitted(final String group, final String topic, final int partitions)
    {
        try (KafkaConsumer<byte[], byte[]> kafka = kafkaConsumer(group))
        {
            final Set<TopicPartition> tps = new java.util.HashSet<>();
            for (int p = 0; p < partitions; p++)
            {
                tps.add(new TopicPartition(topic, p));
            }
            final Map<Integer, Long> out = new java.util.HashMap<>();
            kafka.committed(tps, Duration.ofSeconds(30)).forEach((tp, om) ->
            {
                if (om != null)
                {
                    out.put(tp.partition(), om.offset());
                }
            });
            return out;
        }
    }

    private void produce(final String topic, final int partition, final int count)
    {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrap(),
            "key.serializer", ByteArraySerializer.class, "value.serializer", ByteArraySerializer.class)))
        {
            for (int i = 0; i < count; i++)
            {
                producer.send(new ProducerRecord<>(topic, partition, null, new byte[] {(byte)i}));
            }
            producer.flush();
        }
    }

    private static List<ConsumerInteropContract.Read> read(final Consumer consumer, final int count)
    {
        return ConsumerInteropContract.read(consumer, count);
    }

    /** The one-byte values of the next {@code count} records. */
    private static List<Integer> readValues(final Consumer consumer, final int count)
    {
        return read(consumer, count).stream().map(r -> (int)r.value()[0]).toList();
    }

    /** A kafka-clients member polled until it has its assignment (it joined the group). */
    private static void awaitJoined(final KafkaConsumer<byte[], byte[]> member)
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (member.assignment().isEmpty())
        {
            assertTrue(System.nanoTime() - deadline < 0, "the member joined in time");
            member.poll(Duration.ofMillis(100));
        }
    }

    /** The consumer's duty cycle run until {@code done}, within {@link #DEADLINE_NS}. */
    private static void doWorkUntil(final Consumer consumer, final java.util.function.BooleanSupplier done, final String what)
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (!done.getAsBoolean())
        {
            assertTrue(System.nanoTime() - deadline < 0, what);
            consumer.doWork();
        }
    }

    private static void awaitPosition(final Consumer consumer, final String topic, final long position)
    {
        ConsumerInteropContract.awaitPosition(consumer, topic, position);
    }
}
