package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a transactional producer of a crash test began, and how each transaction ended as it saw it;
 * every record's value is {@code txn-N-i} (its transaction and its index in it), so that a
 * read_committed consumer's records tell whole, partial and aborted transactions apart.
 * {@link #assertEveryTransactionWhole} is the check after a restart ({@link TransactionCrashTest},
 * {@link TransactionCrashPointTest}).
 */
final class TransactionLedger
{
    /** What the producer saw of a transaction. */
    enum Outcome
    {
        /** it must be read whole: {@code commitTransaction} returned, or the kill came once its PrepareCommit was durable. */
        COMMITTED,
        /** aborted, or ended by the kill before a commit was asked for: no record may be read. */
        ABORTED,
        /** the kill interrupted its {@code commitTransaction}: all records or none. */
        UNKNOWN
    }

    private final List<TopicPartition> partitions;
    private final Map<Integer, Outcome> outcomes = new ConcurrentHashMap<>();
    private final Map<Integer, Integer> sizes = new ConcurrentHashMap<>();

    TransactionLedger(final List<TopicPartition> partitions)
    {
        this.partitions = partitions;
    }

    static String value(final int txn, final int index)
    {
        return "txn-" + txn + "-" + index;
    }

    /** Transaction {@code txn} begins with {@code size} records: aborted until said otherwise. */
    void begin(final int txn, final int size)
    {
        sizes.put(txn, size);
        outcomes.put(txn, Outcome.ABORTED);
    }

    void end(final int txn, final Outcome outcome)
    {
        outcomes.put(txn, outcome);
    }

    Outcome outcome(final int txn)
    {
        return outcomes.get(txn);
    }

    boolean any(final Outcome outcome)
    {
        return outcomes.containsValue(outcome);
    }

    @Override
    public String toString()
    {
        return outcomes.toString();
    }

    /**
     * After a restart: no transaction left Ongoing or Prepare*, each partition's last stable offset
     * at its log end, and read_committed reads every COMMITTED transaction whole, nothing of an
     * ABORTED one, all or nothing of an UNKNOWN one (decided then: later rounds must read the same),
     * and no record of a transaction never begun.
     */
    void assertEveryTransactionWhole(final ServerCommand.Running server, final int round) throws Exception
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
            for (final TopicPartition tp : partitions)
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
                e.setValue(whole ? Outcome.COMMITTED : Outcome.ABORTED);
            }
        }
        assertEquals(List.of(), wrong, "after round " + round);
        for (final Integer txn : read.keySet())
        {
            assertTrue(outcomes.containsKey(txn), "read a transaction never begun: " + txn);
        }
    }

    /** Every record under read_committed from the start to the last stable offset: indexes by transaction, none twice. */
    private Map<Integer, Set<Integer>> readCommitted(final ServerCommand.Running server, final int round)
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
            consumer.assign(partitions);
            final Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, Duration.ofSeconds(30)); // the LSOs
            consumer.seekToBeginning(partitions);
            await(() ->
            {
                for (final ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200)))
                {
                    final String[] parts = r.value().split("-");
                    assertEquals(3, parts.length, r.value());
                    assertTrue(read.computeIfAbsent(Integer.parseInt(parts[1]), t -> new HashSet<>()).add(Integer.parseInt(parts[2])),
                        () -> "read twice: " + r.value() + " after round " + round);
                }
                for (final TopicPartition tp : partitions)
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

    static long latest(final Admin admin, final TopicPartition tp, final IsolationLevel isolation) throws Exception
    {
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest()), new ListOffsetsOptions(isolation)).partitionResult(tp).get().offset();
    }

    static Admin admin(final ServerCommand.Running server)
    {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port()));
    }

    static KafkaProducer<String, String> producer(final ServerCommand.Running server, final String transactionalId)
    {
        final Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 1);
        p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 10);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000);
        return new KafkaProducer<>(p);
    }
}
