package io.ferrite.broker.e2e;

import io.ferrite.broker.e2e.TransactionLedger.Outcome;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
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
 * profile); {@code -Dferrite.txn.crash.seed} replays a seed's choices (not the kill's timing). The last round's kill
 * waits, past its drawn moment, until a {@code commitTransaction} and an {@code abortTransaction} have returned in some
 * round, so that the closing claims (some transaction committed, some aborted) do not depend on the machine's load.
 *
 * <p>Long run, 2026-12-05, commit ec0c75c: 50 rounds, no failure, 977 s; 49 of the 50 kills landed in a
 * commit under way (UNKNOWN), one in a transaction not asked to commit — the narrow windows are {@link
 * TransactionCrashPointTest}'s (its doc has the machine).
 */
@Tag("slow") // a crash loop (SIGKILL rounds): outside the default build, in `mvn -B verify -Pslow` (CI runs it; issue 17)
class TransactionCrashTest
{
    private static final int DEFAULT_ROUNDS = 3;
    private static final String TOPIC = "ledger";
    private static final String TRANSACTIONAL_ID = "ledger-writer";
    private static final List<TopicPartition> PARTITIONS = List.of(new TopicPartition(TOPIC, 0), new TopicPartition(TOPIC, 1));

    @TempDir
    Path dir;

    private final TransactionLedger ledger = new TransactionLedger(PARTITIONS);
    private volatile RuntimeException writerFailure;
    /** Calls of {@code commitTransaction} and of {@code abortTransaction} that returned, over all rounds. */
    private final AtomicInteger commitsReturned = new AtomicInteger();
    private final AtomicInteger abortsReturned = new AtomicInteger();
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
        try (Admin admin = TransactionLedger.admin(server))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS.size(), (short)1))).all().get(20, TimeUnit.SECONDS);
        }
        for (int round = 0; round < rounds; round++)
        {
            final long killAfterMs = 200 + random.nextInt(1_300);
            final int firstTxn = nextTxn.get();
            final KafkaProducer<String, String> producer = TransactionLedger.producer(server, TRANSACTIONAL_ID);
            producer.initTransactions();
            final Random choices = new Random(random.nextLong());
            writerFailure = null;
            final Thread writer = new Thread(() -> runTransactions(producer, choices, nextTxn), "txn-writer");
            final long started = System.nanoTime();
            writer.start();
            writer.join(killAfterMs);
            if (round == rounds - 1)
            {
                // the liveness claims at the end (some transaction committed, some aborted) must not hang on the kills'
                // timing: on a loaded machine every kill can land before the first commit returned (seen once at load
                // 45). So the last kill also waits until a commit and an abort have returned in some round; the kills
                // before it land anywhere, in a round's first transaction too
                await(() -> !writer.isAlive() || commitsReturned.get() > 0 && abortsReturned.get() > 0, Duration.ofSeconds(120),
                    () -> "a commit and an abort returned before the last kill: " + ledger);
            }
            assertTrue(writer.isAlive(), () -> "the writer failed before the kill: " + writerFailure);
            final long killedAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            server.process().destroyForcibly(); // SIGKILL wherever the writer is
            assertTrue(server.process().waitFor(30, TimeUnit.SECONDS));
            assertEquals(137, server.process().exitValue(), "killed");
            producer.close(Duration.ZERO); // ends a send or commit blocked on the dead server
            writer.join(TimeUnit.SECONDS.toMillis(30));
            assertTrue(!writer.isAlive(), "the writer ended");
            System.out.println("round " + round + ": killed after " + killedAfterMs + " ms (drawn " + killAfterMs + ")"
                + " in transaction " + (nextTxn.get() - 1) + " (" + ledger.outcome(nextTxn.get() - 1) + " as the producer saw it)"
                + ", " + (nextTxn.get() - firstTxn) + " transactions begun in it; the writer ended with " + writerFailure);

            server = start(data);
            try (KafkaProducer<String, String> successor = TransactionLedger.producer(server, TRANSACTIONAL_ID))
            {
                successor.initTransactions(); // fences the killed producer's epoch and aborts what it had open
            }
            ledger.assertEveryTransactionWhole(server, round);
        }
        server.stop();
        // sure by the last round's wait, whatever the kills' timing: a returned commit stays COMMITTED (read whole after
        // every restart), a returned abort ABORTED (none of it read)
        assertTrue(ledger.any(Outcome.COMMITTED), "some transaction committed: " + ledger);
        assertTrue(ledger.any(Outcome.ABORTED), "some transaction aborted: " + ledger);
    }

    /** Transactions until the kill fails one: each records its size before it ends and its outcome once known. */
    private void runTransactions(final KafkaProducer<String, String> producer, final Random choices, final AtomicInteger nextTxn)
    {
        while (true)
        {
            final int txn = nextTxn.getAndIncrement();
            final int size = 1 + choices.nextInt(20);
            final boolean commit = choices.nextInt(4) != 0;
            ledger.begin(txn, size);
            try
            {
                producer.beginTransaction();
                for (int i = 0; i < size; i++)
                {
                    producer.send(new ProducerRecord<>(TOPIC, choices.nextInt(PARTITIONS.size()), null, TransactionLedger.value(txn, i)));
                }
                if (commit)
                {
                    ledger.end(txn, Outcome.UNKNOWN);
                    producer.commitTransaction();
                    ledger.end(txn, Outcome.COMMITTED);
                    commitsReturned.incrementAndGet();
                }
                else
                {
                    producer.abortTransaction();
                    abortsReturned.incrementAndGet();
                }
            }
            catch (final RuntimeException killed)
            {
                writerFailure = killed;
                return;
            }
        }
    }

    private ServerCommand.Running start(final Path data) throws Exception
    {
        return ServerCommand.start(dir, "--override", "log.dir=" + data, "--override", "listeners=PLAINTEXT://127.0.0.1:0",
            "--override", "ferrite.log.durability=fsync");
    }
}
