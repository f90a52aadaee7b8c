package io.ferrite.broker.cluster;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntPredicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A consume-transform-produce loop on three Ferrite brokers in cluster mode (issue 14, {@link ThreeNodes}): a
 * kafka-clients transactional producer reads an input topic with a group's committed offsets, writes each record
 * transformed to an output topic and commits the input's offsets in the same transaction ({@code sendOffsetsToTransaction}),
 * where the transactional id's coordinator, the group's coordinator and the output partition's leader are three
 * different nodes (the names chosen so, and asserted): TxnOffsetCommit is verified by the id's coordinator on another node,
 * the markers reach the output's leader and the group's {@code __consumer_offsets} leader over WriteTxnMarkers. Every third
 * transaction is aborted and its records processed again. At the end read_committed sees each input record transformed
 * exactly once, in order; the group's committed offset (read RequireStable, so after each transaction's marker) moved with
 * the committed transactions only, an aborted one's offset (one no committed transaction sends) never seen; and a producer
 * fenced by a new one with the same id has its open transaction's offsets dropped (seen before the new one commits another
 * offset) and its commit refused. And the group's
 * coordinator SIGKILLed with offsets pending in an open transaction: its commit makes them the group's at the new one.
 */
@Tag("slow") // three broker JVMs: 50-145 s for both tests on the loaded CI machine
final class ClusterTransformTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(120);
    private static final String IN = "ctp-in";
    private static final String OUT = "ctp-out";
    private static final int RECORDS = 30;
    private static final int BATCH = 4;

    @RegisterExtension
    final ThreeNodes cluster = new ThreeNodes();

    @Test
    void offsetsCommitInTheTransactionWhenItsCoordinatorTheGroupsAndTheOutputsLeaderAreThreeNodes() throws Exception
    {
        cluster.start();
        try (Admin admin = cluster.admin(1))
        {
            final Placement at = place(admin);
            final String group = at.group();
            final String transactionalId = at.transactionalId();
            final int groupNode = at.groupNode();
            final int txnNode = at.txnNode();
            fill();

            final TopicPartition in = new TopicPartition(IN, 0);
            final KafkaProducer<String, String> producer = producer(transactionalId);
            try (KafkaConsumer<String, String> consumer = consumer(group); AutoCloseable closing = closing(producer))
            {
                consumer.assign(List.of(in));
                int transactions = 0;
                long committed = 0;
                while (committed < RECORDS)
                {
                    consumer.seek(in, committed);
                    final List<ConsumerRecord<String, String>> batch = poll(consumer, in, Math.min(BATCH, RECORDS - (int)committed));
                    final boolean abort = transactions++ % 3 == 2;
                    producer.beginTransaction();
                    for (final ConsumerRecord<String, String> r : batch)
                    {
                        producer.send(new ProducerRecord<>(OUT, 0, r.key(), r.value().toUpperCase()));
                    }
                    final long next = batch.get(batch.size() - 1).offset() + 1;
                    // an aborted transaction's offset is one no committed transaction sends: were it committed, it would show
                    producer.sendOffsetsToTransaction(Map.of(in, new OffsetAndMetadata(abort ? next + 1000 : next)),
                        new ConsumerGroupMetadata(group));
                    if (abort)
                    {
                        producer.abortTransaction();
                    }
                    else
                    {
                        producer.commitTransaction();
                        committed = next;
                    }
                    // what the group holds after each transaction: the last committed one's offset, never an aborted one's;
                    // read RequireStable, so once the transaction's marker settled the pending offset (an abort's marker
                    // reaches the group's node after EndTxn was answered: a plain read before it would pass whatever it does)
                    awaitStableOffset(admin, group, in, committed, (abort ? "aborted" : "committed") + " transaction " + transactions);
                }
                assertEquals(groupNode, admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                    .get(30, TimeUnit.SECONDS).coordinator().id(), "the group's coordinator");
                assertEquals(txnNode, admin.describeTransactions(List.of(transactionalId)).description(transactionalId)
                    .get(30, TimeUnit.SECONDS).coordinatorId(), "the transaction coordinator");
            }

            final List<String> out = readCommitted(cluster.bootstrap());
            final List<String> expected = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++)
            {
                expected.add("R" + i);
            }
            assertEquals(expected, out, "read_committed: every input record transformed once, in order");

            // a producer fenced with its transaction open: the offsets it sent are dropped (checked before anyone commits
            // another offset), its commit refused
            final KafkaProducer<String, String> old = producer(transactionalId);
            try (AutoCloseable closingOld = closing(old))
            {
                old.beginTransaction();
                old.send(new ProducerRecord<>(OUT, 0, "fenced", "FENCED"));
                old.sendOffsetsToTransaction(Map.of(in, new OffsetAndMetadata(RECORDS + 100)), new ConsumerGroupMetadata(group));
                final KafkaProducer<String, String> fresh = producer(transactionalId); // its InitProducerId aborts old's
                try (AutoCloseable closingFresh = closing(fresh))
                {
                    awaitStableOffset(admin, group, in, RECORDS, "the fenced producer's transaction aborted: its offset dropped");
                    final KafkaException refused = assertThrows(KafkaException.class, old::commitTransaction);
                    assertTrue(refused instanceof ProducerFencedException || refused instanceof InvalidProducerEpochException ||
                        refused.getCause() instanceof ProducerFencedException, "the fenced producer's commit: " + refused);
                    fresh.beginTransaction();
                    fresh.sendOffsetsToTransaction(Map.of(in, new OffsetAndMetadata(RECORDS - 1)), new ConsumerGroupMetadata(group));
                    fresh.commitTransaction();
                }
            }
            awaitStableOffset(admin, group, in, RECORDS - 1, "the new producer's commit");
            assertEquals(expected, readCommitted(cluster.bootstrap()), "nothing of the fenced transaction read_committed");
            assertNotEquals(groupNode, txnNode);
        }
    }

    /**
     * The group's coordinator SIGKILLed while a transaction holds offsets pending there: the transaction coordinator's
     * COMMIT marker for the group's {@code __consumer_offsets} partition reaches that partition's new leader, whose group
     * coordinator loaded the pending offsets from the log, and the commit makes them the group's.
     */
    @Test
    void pendingOffsetsCommitAtTheNewGroupCoordinatorWhenTheOldOneIsKilledMidTransaction() throws Exception
    {
        cluster.start();
        final Placement at;
        try (Admin admin = cluster.admin(1))
        {
            at = place(admin);
        }
        fill();
        final TopicPartition in = new TopicPartition(IN, 0);
        final KafkaProducer<String, String> producer = producer(at.transactionalId());
        try (AutoCloseable closing = closing(producer))
        {
            transform(producer, at.group(), 0, BATCH);
            producer.commitTransaction();
            transform(producer, at.group(), BATCH, 2 * BATCH);
            cluster.kill(at.groupNode());
            producer.commitTransaction();
        }
        final int survivor = at.outLeader();
        try (Admin admin = cluster.admin(survivor))
        {
            Await.await(() -> committedOffset(admin, at.group(), in) == 2 * BATCH, DEADLINE,
                () -> "the group's offset at " + 2 * BATCH + " at its new coordinator\n" + cluster.tails(at.group()));
            final int newCoordinator = admin.describeConsumerGroups(List.of(at.group())).describedGroups().get(at.group())
                .get(30, TimeUnit.SECONDS).coordinator().id();
            assertNotEquals(at.groupNode(), newCoordinator, "the group's coordinator after the kill");
        }
        final List<String> expected = new ArrayList<>();
        for (int i = 0; i < 2 * BATCH; i++)
        {
            expected.add("R" + i);
        }
        assertEquals(expected, readCommitted("127.0.0.1:" + cluster.brokerPort(survivor)), "read_committed after the kill");
    }

    /** Where the test's names land: the group's and the transactional id's coordinators and the output's leader, all different. */
    private record Placement(String group, String transactionalId, int groupNode, int txnNode, int outLeader)
    {
    }

    /** Makes the topics (the internal ones by a FindCoordinator each) and chooses the names so the three nodes differ. */
    private Placement place(final Admin admin) throws Exception
    {
        admin.createTopics(List.of(new NewTopic(IN, 1, (short)3), new NewTopic(OUT, 1, (short)3))).all().get(60, TimeUnit.SECONDS);
        final int outLeader = leaders(admin, OUT, 1)[0];
        final int[] offsetsLeaders = Await.awaitValue(() -> probeGroup(admin), l -> l != null, DEADLINE,
            () -> "__consumer_offsets made and led\n" + cluster.tails("__consumer_offsets"));
        final int[] stateLeaders = Await.awaitValue(() -> probeTransactions(admin), l -> l != null, DEADLINE,
            () -> "__transaction_state made and led\n" + cluster.tails("__transaction_state"));
        final String group = name("ctp-group-", offsetsLeaders, node -> node != outLeader);
        final int groupNode = offsetsLeaders[Utils.abs(group.hashCode()) % offsetsLeaders.length];
        final String transactionalId = name("ctp-txn-", stateLeaders, node -> node != outLeader && node != groupNode);
        final int txnNode = stateLeaders[Utils.abs(transactionalId.hashCode()) % stateLeaders.length];
        assertEquals(3, java.util.Set.of(outLeader, groupNode, txnNode).size(),
            "output leader " + outLeader + ", group coordinator " + groupNode + ", transaction coordinator " + txnNode);
        return new Placement(group, transactionalId, groupNode, txnNode, outLeader);
    }

    /** The input's records, acks=all. */
    private void fill() throws Exception
    {
        final KafkaProducer<String, String> plain = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            cluster.bootstrap(), ProducerConfig.ACKS_CONFIG, "all"), new StringSerializer(), new StringSerializer());
        try (AutoCloseable closing = closing(plain))
        {
            for (int i = 0; i < RECORDS; i++)
            {
                plain.send(new ProducerRecord<>(IN, 0, "k" + i, "r" + i)).get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Begins a transaction holding input records {@code from} to {@code to} (exclusive) transformed, and their offsets. */
    private static void transform(final KafkaProducer<String, String> producer, final String group, final int from, final int to)
    {
        producer.beginTransaction();
        for (int i = from; i < to; i++)
        {
            producer.send(new ProducerRecord<>(OUT, 0, "k" + i, "R" + i));
        }
        producer.sendOffsetsToTransaction(Map.of(new TopicPartition(IN, 0), new OffsetAndMetadata(to)), new ConsumerGroupMetadata(group));
    }

    /** A name {@code prefix + i} whose partition in {@code leaders} (one entry per partition) is led by a node {@code fits}. */
    private static String name(final String prefix, final int[] leaders, final IntPredicate fits)
    {
        for (int i = 0; i < 10_000; i++)
        {
            final String candidate = prefix + i;
            if (fits.test(leaders[Utils.abs(candidate.hashCode()) % leaders.length]))
            {
                return candidate;
            }
        }
        throw new AssertionError("no name of " + prefix + " led by a fitting node: " + java.util.Arrays.toString(leaders));
    }

    /** The leaders of {@code topic}'s partitions, once each has one. */
    private int[] leaders(final Admin admin, final String topic, final int partitions)
    {
        return Await.awaitValue(() ->
        {
            final TopicDescription d = describe(admin, topic);
            if (d == null || d.partitions().size() != partitions || d.partitions().stream().anyMatch(p -> p.leader() == null))
            {
                return null;
            }
            return d.partitions().stream().mapToInt(p -> p.leader().id()).toArray();
        }, l -> l != null, DEADLINE, () -> topic + "'s partitions led\n" + cluster.tails(topic));
    }

    private static TopicDescription describe(final Admin admin, final String topic) throws InterruptedException
    {
        try
        {
            return admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
        }
        catch (final ExecutionException | TimeoutException ex)
        {
            return null;
        }
    }

    /** FindCoordinator(GROUP) through DescribeGroups (makes {@code __consumer_offsets}), then its partitions' leaders. */
    private static int[] probeGroup(final Admin admin) throws InterruptedException
    {
        try
        {
            admin.describeConsumerGroups(List.of("ctp-probe")).all().get(30, TimeUnit.SECONDS);
        }
        catch (final ExecutionException | TimeoutException ex)
        {
            // GROUP_ID_NOT_FOUND once the coordinator answers: the topic is there
        }
        return allLed(describe(admin, "__consumer_offsets"));
    }

    /** FindCoordinator(TRANSACTION) through DescribeTransactions (makes {@code __transaction_state}), then its leaders. */
    private static int[] probeTransactions(final Admin admin) throws InterruptedException
    {
        try
        {
            admin.describeTransactions(List.of("ctp-probe")).all().get(30, TimeUnit.SECONDS);
        }
        catch (final ExecutionException | TimeoutException ex)
        {
            // TRANSACTIONAL_ID_NOT_FOUND once the coordinator answers: the topic is there
        }
        return allLed(describe(admin, "__transaction_state"));
    }

    private static int[] allLed(final TopicDescription d)
    {
        if (d == null || d.partitions().isEmpty() || d.partitions().stream().anyMatch(p -> p.leader() == null))
        {
            return null;
        }
        return d.partitions().stream().sorted(java.util.Comparator.comparingInt(p -> p.partition())).mapToInt(p -> p.leader().id())
            .toArray();
    }

    /** The group's committed offset of {@code tp} (0 when none), or -1 while the coordinator cannot be asked. */
    private static long committedOffset(final Admin admin, final String group, final TopicPartition tp) throws InterruptedException
    {
        try
        {
            final OffsetAndMetadata o = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS)
                .get(tp);
            return o == null ? 0 : o.offset();
        }
        catch (final ExecutionException | TimeoutException ex)
        {
            return -1;
        }
    }

    /**
     * Waits until the group's committed offset of {@code tp}, read RequireStable (OffsetFetch answers UNSTABLE_OFFSET_COMMIT,
     * which the Admin leaves out, while a transaction holds an offset of it pending), is {@code expected}.
     */
    private void awaitStableOffset(final Admin admin, final String group, final TopicPartition tp, final long expected,
        final String after)
    {
        Await.awaitValue(() -> stableOffset(admin, group, tp), o -> o == expected, DEADLINE,
            () -> "the group's stable offset at " + expected + " after " + after + "\n" + cluster.tails(group));
    }

    /** The group's committed offset of {@code tp} read RequireStable, or -1 while none is stable or the coordinator cannot be asked. */
    private static long stableOffset(final Admin admin, final String group, final TopicPartition tp) throws InterruptedException
    {
        try
        {
            final OffsetAndMetadata o = admin.listConsumerGroupOffsets(group, new ListConsumerGroupOffsetsOptions().requireStable(true))
                .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS).get(tp);
            return o == null ? -1 : o.offset();
        }
        catch (final ExecutionException | TimeoutException ex)
        {
            return -1;
        }
    }

    /** {@code count} records of {@code tp} from the consumer's position. */
    private static List<ConsumerRecord<String, String>> poll(final KafkaConsumer<String, String> consumer, final TopicPartition tp,
        final int count)
    {
        final List<ConsumerRecord<String, String>> got = new ArrayList<>();
        Await.await(() ->
        {
            final ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
            got.addAll(records.records(tp));
            return got.size() >= count;
        }, DEADLINE, () -> count + " records of " + tp + ", got " + got);
        return got.subList(0, count);
    }

    /** Closes {@code producer} within a bound (its plain close waits for ever for what a failed test left unsent). */
    private static AutoCloseable closing(final KafkaProducer<String, String> producer)
    {
        return () -> producer.close(Duration.ofSeconds(10));
    }

    /** The loop's consumer: the group's id, manual assignment, read_committed, its offsets committed by the producer only. */
    private KafkaConsumer<String, String> consumer(final String group)
    {
        final Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    private KafkaProducer<String, String> producer(final String transactionalId)
    {
        return ThreeNodes.transactionalProducer(cluster.bootstrap(), transactionalId);
    }

    /** The output partition read_committed from its beginning to its last stable offset. */
    private static List<String> readCommitted(final String bootstrap)
    {
        final Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        final List<String> read = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer()))
        {
            final TopicPartition tp = new TopicPartition(OUT, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            final long end = consumer.endOffsets(List.of(tp), Duration.ofSeconds(30)).get(tp); // read_committed: the LSO
            Await.await(() ->
            {
                consumer.poll(Duration.ofMillis(200)).records(tp).forEach(r -> read.add(r.value()));
                return consumer.position(tp) >= end;
            }, DEADLINE, () -> "read_committed to reach " + end + ", read " + read);
        }
        return read;
    }
}
