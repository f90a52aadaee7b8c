package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The server in a child JVM in {@code ferrite.log.durability=fsync}; a kafka-clients transactional
 * producer in this JVM runs transaction after transaction (random sizes over 2 partitions, most
 * committed, some aborted, each record {@code txn-N-i}) until a SIGKILL at a random moment of each round
 * — between sends, with a commit or abort under way, between its Prepare* and the markers, whatever the
 * timing gives. After each restart a new producer with the same transactional id initialises (fencing
 * and aborting what was open) and then: no transaction is left Ongoing or Prepare*, the last stable
 * offset of each partition reaches its log end, and a read_committed consumer reads every transaction
 * whose {@code commitTransaction} returned completely, no record of one that was aborted or never asked
 * to commit, and of one whose commit the kill interrupted all records or none. The default build runs
 * {@value #DEFAULT_ROUNDS} rounds; {@code -Dferrite.txn.crash.rounds=50} the long form (the {@code long}
 * profile); {@code -Dferrite.txn.crash.seed} replays a seed's choices (not the kill's timing).
 */
class TransactionCrashTest
{
    private static final int DEFAULT_ROUNDS = 3;
    private static final String TOPIC = "ledger";
    private static final String TRANSACTIONAL_ID = "ledger-writer";
    private static final List<TopicPartition> PARTITIONS = List.of(new TopicPartition(TOPIC, 0), new TopicPartition(TOPIC, 1));

    /** What the producer saw of a transaction. */
    private enum Outcome
    {
        /** {@code commitTransaction} returned: every record must be read. */
        COMMITTED,
        /** aborted, or ended by the kill before a commit was asked for: no record may be read. */
        ABORTED,
        /** the kill interrupted its {@code commitTransaction}: all records or none. */
        UNKNOWN
    }

    @TempDir
    Path dir;

    private final Map<Integer, Outcome> outcomes = new ConcurrentHashMap<>();
    private final Map<Integer, Integer> sizes = new ConcurrentHashMap<>();
    private volatile RuntimeException writerFailure;
    private ServerCommand.Running server;

    @AfterEach
    void killTheServerLeft()
    {
        if (server != null && server.process().isAlive())
        {
            server.process().destroyForcibly();
        }
    }

    @Test
    void everyTransactionEndsCommittedOrAbortedWholeAcrossSigkills() throws Exception
    {
        final CrashRounds crash = CrashRounds.of(TransactionCrashTest.class, "txn.crash", DEFAULT_ROUNDS);
        final int rounds = crash.rounds();
        final Random random = crash.random();
        final Path data = dir.resolve("data");
        final AtomicInteger nextTxn = new AtomicInteger();
        server = start(data);
        try (Admin admin = admin(server))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS.size(), (short)1))).all().get(20, TimeUnit.SECONDS);
        }
        for (int round = 0; round < rounds; round++)
        {
            final long killAfterMs = 200 + random.nextInt(1_300);
            final int firstTxn = nextTxn.get();
            final KafkaProducer<String, String> producer = producer(server);
            producer.initTransactions();
            final Random choices = new Random(random.nextLong());
            writerFailure = null;
            final Thread writer = new Thread(() -> runTransactions(producer, choices, nextTxn), "txn-writer");
            writer.start();
            writer.join(killAfterMs);
            assertTrue(writer.isAlive(), () -> "the writer failed before the kill: " + writerFailure);
            server.process().destroyForcibly(); // SIGKILL wherever the writer is
            assertTrue(server.process().waitFor(30, TimeUnit.SECONDS));
            assertEquals(137, server.process().exitValue(), "killed");
            producer.close(Duration.ZERO); // ends a send or commit blocked on the dead server
            writer.join(TimeUnit.SECONDS.toMillis(30));
            assertTrue(!writer.isAlive(), "the writer ended");
            System.out.println("round " + round + ": killed after " + killAfterMs + " ms in transaction " + (nextTxn.get() - 1) + " ("
                + outcomes.get(nextTxn.get() - 1) + " as the producer saw it)"
                + ", " + (nextTxn.get() - firstTxn) + " transactions begun in it; the writer ended with " + writerFailure);

            server = start(data);
            try (KafkaProducer<String, String> successor = producer(server))
            {
                successor.initTransactions(); // fences the killed producer's epoch and aborts what it had open
            }
            assertEveryTransactionWhole(server, round);
        }
        server.stop();
        assertTrue(outcomes.containsValue(Outcome.COMMITTED), "some transaction committed: " + outcomes);
        assertTrue(outcomes.containsValue(Outcome.ABORTED), "some transaction aborted: " + outcomes);
    }

    /** Transactions until the kill fails one: each records its size before it ends and its outcome once known. */
    private void runTransactions(final KafkaProducer<String, String> producer, final Random choices, final AtomicInteger nextTxn)
    {
        while (true)
        {
            final int txn = nextTxn.getAndIncrement();
            final int size = 1 + choices.nextInt(20);
            final boolean commit = choices.nextInt(4) != 0;
            sizes.put(txn, size);
            outcomes.put(txn, Outcome.ABORTED);
            try
            {
                producer.beginTransaction();
                for (int i = 0; i < size; i++)
                {
                    producer.send(new ProducerRecord<>(TOPIC, choices.nextInt(PARTITIONS.size()), null, "txn-" + txn + "-" + i));
                }
                if (commit)
                {
                    outcomes.put(txn, Outcome.UNKNOWN);
                    producer.commitTransaction();
                    outcomes.put(txn, Outcome.COMMITTED);
                }
                else
                {
                    producer.abortTransaction();
                }
            }
            catch (final RuntimeException killed)
            {
                writerFailure = killed;
                return;
            }
        }
    }

    private void assertEveryTransactionWhole(final ServerCommand.Running server, final int round) throws Exception
    {
        try (Admin admin = admin(server))
        {
            await(() ->
            {
                for (final TransactionListing t : admin.listTransactions().all().get())
                {
                    if (t.state() != TransactionState.COMPLETE_COMMIT && t.state() != TransactionState.COMPLETE_ABORT
                        && t.state() != TransactionState.EMPTY)
                    {
                        return false;
                    }
                }
                return true;
            }, Duration.ofSeconds(30), () -> "every transaction ended after round " + round);
            for (final TopicPartition tp : PARTITIONS)
            {
                await(() -> latest(admin, tp, IsolationLevel.READ_COMMITTED) == latest(admin, tp, IsolationLevel.READ_UNCOMMITTED),
                    Duration.ofSeconds(30), () -> "the LSO of " + tp + " at its log end after round " + round);
            }
        }
        final Map<Integer, Set<Integer>> read = readCommitted(server, round);
        final List<String> wrong = new ArrayList<>();
        for (final Map.Entry<Integer, Outcome> e : outcomes.entrySet())
        {
            final int txn = e.getKey();
            final Set<Integer> indexes = read.getOrDefault(txn, Set.of());
            final int size = sizes.get(txn);
            final boolean whole = indexes.size() == size;
            final boolean ok = switch (e.getValue())
            {
                case COMMITTED -> whole;
                case ABORTED -> indexes.isEmpty();
                case UNKNOWN -> whole || indexes.isEmpty();
            };
            if (!ok)
            {
                wrong.add("txn " + txn + " " + e.getValue() + ": read " + indexes.size() + " of " + size);
            }
            else if (e.getValue() == Outcome.UNKNOWN)
            {
                e.setValue(whole ? Outcome.COMMITTED : Outcome.ABORTED); // decided now: later rounds must read the same
            }
        }
        assertEquals(List.of(), wrong, "after round " + round);
        for (final Integer txn : read.keySet())
        {
            assertTrue(outcomes.containsKey(txn), "read a transaction never begun: " + txn);
        }
    }

    /** Every record under read_committed from the start to the last stable offset: indexes by transaction, none twice. */
    private static Map<Integer, Set<Integer>> readCommitted(final ServerCommand.Running server, final int round)
    {
        final Map<String, Object> c = new HashMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port());
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, IsolationLevel.READ_COMMITTED.toString());
        final Map<Integer, Set<Integer>> read = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c))
        {
            consumer.assign(PARTITIONS);
            final Map<TopicPartition, Long> ends = consumer.endOffsets(PARTITIONS, Duration.ofSeconds(30)); // the LSOs
            consumer.seekToBeginning(PARTITIONS);
            await(() ->
            {
                for (final ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200)))
                {
                    final String[] parts = r.value().split("-");
                    assertEquals(3, parts.length, r.value());
                    assertTrue(read.computeIfAbsent(Integer.parseInt(parts[1]), t -> new HashSet<>()).add(Integer.parseInt(parts[2])),
                        () -> "read twice: " + r.value() + " after round " + round);
                }
                for (final TopicPartition tp : PARTITIONS)
                {
                    if (consumer.position(tp) < ends.get(tp))
                    {
                        return false;
                    }
                }
                return true;
            }, Duration.ofSeconds(60), () -> "read to the LSOs " + ends + " after round " + round);
        }
        return read;
    }

    private static long latest(final Admin admin, final TopicPartition tp, final IsolationLevel isolation) throws Exception
    {
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(isolation)).partitionResult(tp).get().offset();
    }

    private ServerCommand.Running start(final Path data) throws Exception
    {
        return ServerCommand.start(dir, "--override", "log.dir=" + data, "--override", "listeners=PLAINTEXT://127.0.0.1:0",
            "--override", "ferrite.log.durability=fsync");
    }

    private static Admin admin(final ServerCommand.Running server)
    {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port()));
    }

    private static KafkaProducer<String, String> producer(final ServerCommand.Running server)
    {
        final Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, TRANSACTIONAL_ID);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 1);
        p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 10);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000);
        return new KafkaProducer<>(p);
    }
}
