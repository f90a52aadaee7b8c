package io.ferrite.broker.cluster;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Transactions through a transaction coordinator failover (issue 14), on three Ferrite brokers in cluster mode (child
 * JVMs, {@link ThreeNodes}): a kafka-clients transactional producer writes to a topic of three partitions, replication
 * factor 3, led by different nodes (so most markers go to another node than the coordinator, as WriteTxnMarkers), and
 * commits two transactions of three, aborts the third; the coordinator's node (the leader of the id's
 * {@code __transaction_state} partition) is SIGKILLed mid-stream; the producer finds the new coordinator (a survivor,
 * which loaded the partition as it became its leader) — a new producer and initTransactions when kafka-clients says the
 * old one cannot go on — and carries on. At the end every transaction is complete on the coordinator, and a
 * read_committed consumer sees every record of each committed transaction once, nothing of an aborted one, and each
 * transaction whose outcome the producer did not learn (the one the kill interrupted) whole or not at all.
 */
@Tag("slow") // three broker JVMs and a failover: about a minute
final class TransactionCoordinatorFailoverTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(120);
    private static final String TOPIC = "txn-events";
    private static final String TXN_ID = "failover-txn";
    private static final int PARTITIONS = 3;
    private static final int BEFORE_KILL = 12;
    private static final int TRANSACTIONS = 30;

    @RegisterExtension
    final ThreeNodes cluster = new ThreeNodes();
    private final Set<Integer> committed = new TreeSet<>();
    private final Set<Integer> aborted = new TreeSet<>();
    /** Transactions whose outcome the producer did not learn (its commit or abort failed): all or nothing. */
    private final Set<Integer> unknown = new TreeSet<>();
    private final List<Integer> survivors = new ArrayList<>();

    @Test
    void transactionsEndWholeAndReadCommittedSeesExactlyTheCommittedOnesAfterTheCoordinatorIsKilled() throws Exception
    {
        cluster.start();
        try (Admin admin = cluster.admin(1))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short)3))).all().get(60, TimeUnit.SECONDS);
            final TopicDescription topic = Await.awaitValue(() -> describeTopic(admin),
                t -> t != null && t.partitions().stream().allMatch(p -> p.leader() != null), DEADLINE,
                () -> TOPIC + "'s partitions to have leaders");
            final Set<Integer> leaders = topic.partitions().stream().map(p -> p.leader().id()).collect(Collectors.toSet());
            assertTrue(leaders.size() > 1, "the partitions are led by more than one node: " + topic);
        }

        KafkaProducer<String, String> producer = producer(cluster.bootstrap());
        for (int txn = 0; txn < BEFORE_KILL; txn++)
        {
            run(producer, txn);
        }
        assertEquals(Set.of(), unknown, "every transaction before the kill ended as asked");
        final int coordinator;
        try (Admin admin = cluster.admin(1))
        {
            final TransactionDescription described = admin.describeTransactions(List.of(TXN_ID)).description(TXN_ID)
                .get(30, TimeUnit.SECONDS);
            coordinator = described.coordinatorId();
        }
        // a transaction open with records sent when the coordinator dies
        producer.beginTransaction();
        sendAll(producer, BEFORE_KILL);
        producer.flush();
        cluster.kill(coordinator);
        for (int id = 1; id <= 3; id++)
        {
            if (id != coordinator)
            {
                survivors.add(id);
            }
        }
        producer = end(producer, BEFORE_KILL);
        for (int txn = BEFORE_KILL + 1; txn < TRANSACTIONS; txn++)
        {
            producer = runOrRenew(producer, txn);
        }
        producer.close(Duration.ofSeconds(10));
        assertTrue(committed.size() > TRANSACTIONS / 3, "transactions committed: " + committed + ", unknown " + unknown);

        final String bootstrap = survivors.stream().map(id -> "127.0.0.1:" + cluster.brokerPort(id)).collect(Collectors.joining(","));
        try (Admin admin = cluster.admin(survivors.get(0)))
        {
            final TransactionDescription after = Await.awaitValue(() -> describe(admin), d -> d != null && switch (d.state())
                {
                    case COMPLETE_COMMIT, COMPLETE_ABORT, EMPTY -> true;
                    default -> false;
                }, DEADLINE, () -> TXN_ID + " to end complete at its new coordinator\n" + cluster.tails("transaction"));
            assertNotEquals(coordinator, after.coordinatorId(), "the coordinator after the kill of node " + coordinator);
            // nothing left open: the last stable offset of every partition reaches its end
            final Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            for (int p = 0; p < PARTITIONS; p++)
            {
                latest.put(new TopicPartition(TOPIC, p), OffsetSpec.latest());
            }
            Await.await(() -> offsets(admin.listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all()
                .get(30, TimeUnit.SECONDS)).equals(offsets(admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS))), DEADLINE,
                () -> "every partition's last stable offset at its end: " + openTransactions(admin, latest) + "\n" +
                    cluster.tails("txn-events"));
        }

        final Map<Integer, Set<Integer>> seen = readCommitted(bootstrap);
        for (final Map.Entry<Integer, Set<Integer>> e : seen.entrySet())
        {
            final int txn = e.getKey();
            assertEquals(PARTITIONS, e.getValue().size(), "transaction " + txn + " seen whole, not in part: " + e.getValue());
            assertTrue(!aborted.contains(txn), "aborted transaction " + txn + " seen by read_committed");
        }
        for (final int txn : committed)
        {
            assertTrue(seen.containsKey(txn), "committed transaction " + txn + " seen by read_committed: seen " + seen.keySet());
        }
        assertTrue(seen.keySet().stream().allMatch(t -> committed.contains(t) || unknown.contains(t)),
            "only committed (or unknown) transactions seen: " + seen.keySet() + ", committed " + committed + ", unknown " + unknown);
    }

    /** The topic as node 1 describes it, or null while its image does not have it yet (UNKNOWN_TOPIC_OR_PARTITION). */
    private static TopicDescription describeTopic(final Admin admin) throws InterruptedException
    {
        try
        {
            return admin.describeTopics(List.of(TOPIC)).allTopicNames().get(30, TimeUnit.SECONDS).get(TOPIC);
        }
        catch (final java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException ex)
        {
            return null;
        }
    }

    /** The offsets alone (a ListOffsetsResultInfo has no equals). */
    private static Map<TopicPartition, Long> offsets(final Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> infos)
    {
        return infos.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
    }

    /** What the partitions' leaders say of their ends and open transactions (a failure's message). */
    private static String openTransactions(final Admin admin, final Map<TopicPartition, OffsetSpec> latest)
    {
        try
        {
            return "read_committed " + admin.listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all()
                .get(30, TimeUnit.SECONDS) + ", ends " + admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS) + ", producers " +
                admin.describeProducers(latest.keySet()).all().get(30, TimeUnit.SECONDS);
        }
        catch (final Exception ex)
        {
            return ex.toString();
        }
    }

    /** The transaction as its coordinator describes it, or null while that fails (the coordinator moving). */
    private static TransactionDescription describe(final Admin admin) throws InterruptedException
    {
        try
        {
            return admin.describeTransactions(List.of(TXN_ID)).description(TXN_ID).get(30, TimeUnit.SECONDS);
        }
        catch (final java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException ex)
        {
            return null;
        }
    }

    /** One transaction: a record to each partition, committed unless its number is 2 mod 3 (aborted). */
    private void run(final KafkaProducer<String, String> producer, final int txn)
    {
        producer.beginTransaction();
        sendAll(producer, txn);
        end(producer, txn);
    }

    private static void sendAll(final KafkaProducer<String, String> producer, final int txn)
    {
        for (int p = 0; p < PARTITIONS; p++)
        {
            producer.send(new ProducerRecord<>(TOPIC, p, "t" + txn, txn + ":" + p));
        }
    }

    /**
     * Ends transaction {@code txn} as its number says; on a failure the outcome is unknown, and the producer is replaced
     * when kafka-clients says it cannot go on (its initTransactions then ends what the old one left open). Returns the
     * producer to go on with.
     */
    private KafkaProducer<String, String> end(final KafkaProducer<String, String> producer, final int txn)
    {
        final boolean commit = txn % 3 != 2;
        try
        {
            if (commit)
            {
                producer.commitTransaction();
                committed.add(txn);
            }
            else
            {
                producer.abortTransaction();
                aborted.add(txn);
            }
            return producer;
        }
        catch (final KafkaException ex)
        {
            unknown.add(txn);
            return renew(producer, ex);
        }
    }

    private KafkaProducer<String, String> runOrRenew(final KafkaProducer<String, String> producer, final int txn)
    {
        try
        {
            producer.beginTransaction();
            sendAll(producer, txn);
        }
        catch (final KafkaException ex)
        {
            unknown.add(txn);
            return renew(producer, ex);
        }
        return end(producer, txn);
    }

    /** A new producer on the survivors (its initTransactions fences the old one and ends what it left). */
    private KafkaProducer<String, String> renew(final KafkaProducer<String, String> old, final KafkaException why)
    {
        old.close(Duration.ofSeconds(5));
        final String bootstrap = survivors.stream().map(id -> "127.0.0.1:" + cluster.brokerPort(id)).collect(Collectors.joining(","));
        return Await.awaitValue(() ->
        {
            try
            {
                return producer(bootstrap);
            }
            catch (final KafkaException ex)
            {
                return null; // the new coordinator not found or loading yet: initTransactions again
            }
        }, p -> p != null, DEADLINE, () -> "a new producer's initTransactions after " + why + "\n" + cluster.tails("transaction"));
    }

    private static KafkaProducer<String, String> producer(final String bootstrap)
    {
        return ThreeNodes.transactionalProducer(bootstrap, TXN_ID);
    }

    /** Reads every partition to its last stable offset, read_committed: the partitions seen of each transaction. */
    private static Map<Integer, Set<Integer>> readCommitted(final String bootstrap)
    {
        final Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        final Map<Integer, Set<Integer>> seen = new HashMap<>();
        final List<String> duplicates = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer()))
        {
            final List<TopicPartition> all = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++)
            {
                all.add(new TopicPartition(TOPIC, p));
            }
            consumer.assign(all);
            consumer.seekToBeginning(all);
            final Map<TopicPartition, Long> ends = consumer.endOffsets(all, Duration.ofSeconds(30)); // read_committed: the LSO
            Await.await(() ->
            {
                for (final ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200)))
                {
                    final String[] parts = r.value().split(":");
                    if (!seen.computeIfAbsent(Integer.parseInt(parts[0]), t -> new HashSet<>()).add(Integer.parseInt(parts[1])))
                    {
                        duplicates.add(r.value() + "@" + r.offset());
                    }
                }
                return all.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp));
            }, DEADLINE, () -> "read_committed to reach " + ends);
        }
        assertEquals(List.of(), duplicates, "records seen twice");
        return seen;
    }
}
