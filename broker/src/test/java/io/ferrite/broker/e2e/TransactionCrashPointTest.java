package io.ferrite.broker.e2e;

import io.ferrite.broker.e2e.TransactionLedger.Outcome;
import io.ferrite.wire.record.RecordBatch;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static io.ferrite.testing.Await.await;
import static io.ferrite.testing.Await.awaitValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * SIGKILLs of the broker forced into the narrow windows of a transaction, which {@link
 * TransactionCrashTest}'s kills at random times rarely hit. The server runs in a child JVM in
 * {@code ferrite.log.durability=fsync} with the LD_PRELOAD shim {@code crash_point.c}: once the test
 * creates its arming file, the shim SIGKILLs the process right after a chosen fsync or instead of a
 * chosen segment write, picked by the file's path and a count ({@link CrashPoint}), so the broker has
 * no test hook. Each round: a transactional producer runs a whole transaction or two, then one over
 * all {@value #PARTITION_COUNT} partitions whose records are all acknowledged (so durable), the shim
 * is armed and that transaction driven into the crash point; the broker must die there (exit 137, the
 * shim's line naming a file of the expected kind), and the segments must hold as many of the
 * transaction's markers as the crash point leaves (none before the markers; exactly the ones written
 * before the write the kill stopped; at least the one whose fsync it followed). After the restart, before any client touches the
 * transactional id: a transaction whose Prepare* was durable is completed by the coordinator's load as
 * prepared (the load logged "1 to complete"; DescribeTransactions CompleteCommit or CompleteAbort);
 * one killed before EndTxn is still Ongoing (the load logged "0 to complete") and holds every
 * partition's last stable offset below its end. Then a new producer with the id initialises (fencing
 * the killed one's epoch and aborting what it left open) and {@link
 * TransactionLedger#assertEveryTransactionWhole}: nothing Ongoing or Prepare*, every LSO at its log
 * end, read_committed reads each committed transaction whole — the one whose PrepareCommit was durable
 * too, whatever the client saw — and nothing of an aborted one, none partial, nothing lost from the
 * earlier rounds. The aborts by timeout are {@link TransactionTimeoutTest}'s (its sweep runs every
 * 10 s: too slow for rounds).
 *
 * <p>It can fail: with the load changed (in a scratch run, never committed) to complete every prepared
 * transaction with ABORT markers, PREPARE_DURABLE failed at its first commit round ("txn 1 COMMITTED:
 * read 0 of 4") and MID_MARKERS too, with a partial transaction; with the fsync kill alone, before the
 * channel-write point existed, every "mid-marker" kill found all four markers already in the page cache
 * (so that breakage went unseen there: hence MID_MARKERS kills instead of a write). With the log's
 * crash recovery changed (scratch) to leave transactional data batches out of the producer state it
 * rebuilds, every point failed: BEFORE_END_TXN with "the open transaction holds the LSO of ledger-0
 * below its end 14: 14", the others with an aborted transaction read whole after a later round.
 *
 * <p>The default build runs {@value #DEFAULT_ROUNDS} rounds per crash point (about ten seconds each on
 * two cores); {@code -Dferrite.txn.crashpoint.rounds=50} is the long form (the {@code long} profile),
 * {@code -Dferrite.txn.crashpoint.seed} replays a seed's choices.
 *
 * <p>Long run, 2026-12-05, commit ec0c75c ({@code mvn -B verify -pl broker -am -Plong
 * -Dtest=TransactionCrashPointTest,TransactionCrashTest}): 50 rounds per crash point, 200 kills, no
 * failure, 1916 s (BEFORE_END_TXN 1049 s, PREPARE_DURABLE 441 s, MID_MARKERS 294 s, MARKER_FSYNC 130 s:
 * the machine was shared with other builds, load average 25 to 58, so the times say little). Markers
 * in the files at the kills: MID_MARKERS 1 in 13 rounds, 2 in 14, 3 in 23; MARKER_FSYNC 4 in 49, 3 in 1.
 * {@link TransactionCrashTest} alongside: 50 rounds, no failure, 977 s; 49 of its 50 kills landed in a
 * commit under way. OpenJDK 17.0.15 (Debian 12), Linux 6.x, 2 cores (AMD EPYC), 23 GiB.
 */
@Tag("slow") // outside the default build: `mvn -B verify -Pslow` (CI runs it), see the README
class TransactionCrashPointTest
{
    private static final int DEFAULT_ROUNDS = 2;
    private static final String TOPIC = "ledger";
    private static final int PARTITION_COUNT = 4;
    private static final String TRANSACTIONAL_ID = "ledger-writer";
    private static final List<TopicPartition> PARTITIONS = List.of(new TopicPartition(TOPIC, 0), new TopicPartition(TOPIC, 1),
        new TopicPartition(TOPIC, 2), new TopicPartition(TOPIC, 3));

    /**
     * Where the kill lands: at the {@code call} ("fsync": right after it; "pwrite": instead of it) of a
     * segment ({@code .log}) whose path contains {@code path}, the broker writing its segments with
     * {@code writeStrategy}.
     */
    enum CrashPoint
    {
        /**
         * The transaction's records acknowledged, a last record's AddPartitions written: killed at the
         * fsync of that record's partition. The transaction is Ongoing, never asked to end: aborted.
         */
        BEFORE_END_TXN("fsync", "/" + TOPIC + "-", "mapped"),
        /**
         * EndTxn sent: killed at the first {@code __transaction_state} fsync after it, its
         * PrepareCommit/PrepareAbort's. Durable Prepare*, no marker written: the load must finish it.
         */
        PREPARE_DURABLE("fsync", "/__transaction_state-", "mapped"),
        /**
         * EndTxn sent: killed instead of the write of the second, third or fourth of the four
         * partitions' markers (segments written with {@code pwrite}: the channel write strategy), so
         * one to three markers are in the files and the rest never will be: Prepare* durable, some
         * markers, no Complete*. The load must write the missing ones.
         */
        MID_MARKERS("pwrite", "/" + TOPIC + "-", "channel"),
        /**
         * EndTxn sent: killed at the fsync of the first, second or third marker's partition (mapped
         * writes): Prepare* durable, that marker written, no Complete*; the others' as the log thread
         * got on — mostly all of them, since it copies each into its mapping before the group commit
         * fsyncs any, and the page cache keeps them.
         */
        MARKER_FSYNC("fsync", "/" + TOPIC + "-", "mapped");

        final String call;
        final String path;
        final String writeStrategy;

        CrashPoint(final String call, final String path, final String writeStrategy)
        {
            this.call = call;
            this.path = path;
            this.writeStrategy = writeStrategy;
        }

        /** How many matching calls, once armed, go through before the kill, chosen by {@code random}. */
        int skip(final Random random)
        {
            return switch (this)
            {
                case BEFORE_END_TXN, PREPARE_DURABLE -> 0;
                case MID_MARKERS -> 1 + random.nextInt(PARTITION_COUNT - 1);
                case MARKER_FSYNC -> random.nextInt(PARTITION_COUNT - 1);
            };
        }
    }

    @TempDir
    Path dir;

    private final TransactionLedger ledger = new TransactionLedger(PARTITIONS);
    private ServerCommand.Running server;
    private int nextTxn;
    private final int[] markersAtKills = new int[PARTITION_COUNT + 1];

    @AfterEach
    void killTheServerLeft()
    {
        if (server != null && server.process().isAlive())
        {
            server.process().destroyForcibly();
        }
    }

    @ParameterizedTest
    @EnumSource(CrashPoint.class)
    void aKillAtTheCrashPointLeavesEveryTransactionWholeAfterTheRestart(final CrashPoint point) throws Exception
    {
        final CrashRounds crash = CrashRounds.of(TransactionCrashPointTest.class, "txn.crashpoint", DEFAULT_ROUNDS);
        final Random random = crash.random();
        final Path data = dir.resolve("data");
        final Path shim = FsyncShim.compile(dir, "crash_point");
        final Path armed = dir.resolve("armed");
        final Path kills = dir.resolve("kills.txt");
        int skip = point.skip(random);
        server = start(data, shim, point, armed, kills, skip);
        try (Admin admin = TransactionLedger.admin(server))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITION_COUNT, (short)1))).all().get(20, TimeUnit.SECONDS);
        }
        KafkaProducer<String, String> producer = TransactionLedger.producer(server, TRANSACTIONAL_ID);
        producer.initTransactions();
        for (int round = 0; round < crash.rounds(); round++)
        {
            final int whole = 1 + random.nextInt(2);
            for (int t = 0; t < whole; t++)
            {
                wholeTransaction(producer, random, t == 0 || random.nextInt(4) != 0);
            }
            final boolean commit = point != CrashPoint.BEFORE_END_TXN && round % 3 != 1;
            final int txn = crashTransaction(producer, random, point, commit, armed);
            final String kill = Files.readAllLines(kills).get(round);
            assertTrue(kill.contains(point.path) && kill.endsWith(".log"), kill);
            final int markers = markersOnDisk(data);
            markersAtKills[markers]++;
            System.out.println(point + " round " + round + ": transaction " + txn + (commit ? " committing" : " aborting")
                + " after " + whole + " whole ones, " + kill + "; " + markers + " of its markers in the files");
            switch (point)
            {
                case BEFORE_END_TXN, PREPARE_DURABLE -> assertEquals(0, markers, "no marker before the kill");
                case MID_MARKERS -> assertEquals(skip, markers, "the markers written before the one the kill stopped");
                case MARKER_FSYNC -> assertTrue(markers >= 1, "the marker whose fsync the kill followed is in its file");
            }

            Files.delete(armed);
            skip = point.skip(random);
            server = start(data, shim, point, armed, kills, skip);
            assertTheLoadFound(point, commit, round);
            producer = TransactionLedger.producer(server, TRANSACTIONAL_ID);
            producer.initTransactions(); // fences the killed producer's epoch and aborts what it had open
            ledger.assertEveryTransactionWhole(server, round);
        }
        producer.close();
        server.stop();
        System.out.println(point + ": rounds by how many of the crash transaction's " + PARTITION_COUNT + " markers the kill left, 0 to "
            + PARTITION_COUNT + ": " + Arrays.toString(markersAtKills));
        assertTrue(ledger.any(Outcome.COMMITTED), "some transaction committed: " + ledger);
        assertTrue(ledger.any(Outcome.ABORTED), "some transaction aborted: " + ledger);
    }

    /** A transaction of 1 to 10 records that ends as asked. */
    private void wholeTransaction(final KafkaProducer<String, String> producer, final Random random, final boolean commit)
    {
        final int txn = nextTxn++;
        final int size = 1 + random.nextInt(10);
        ledger.begin(txn, size);
        producer.beginTransaction();
        for (int i = 0; i < size; i++)
        {
            producer.send(new ProducerRecord<>(TOPIC, random.nextInt(PARTITION_COUNT), null, TransactionLedger.value(txn, i)));
        }
        if (commit)
        {
            producer.commitTransaction();
            ledger.end(txn, Outcome.COMMITTED);
        }
        else
        {
            producer.abortTransaction();
        }
    }

    /**
     * A transaction over every partition, its records acknowledged, then the shim armed and the
     * transaction driven into {@code point} by a thread of its own (its call blocks on the dead
     * server until the producer is closed): returns its number once the shim killed the server.
     */
    private int crashTransaction(final KafkaProducer<String, String> producer, final Random random, final CrashPoint point,
        final boolean commit, final Path armed) throws Exception
    {
        final int txn = nextTxn++;
        final int acknowledged = PARTITION_COUNT + random.nextInt(12);
        final int size = point == CrashPoint.BEFORE_END_TXN ? acknowledged + 1 : acknowledged;
        ledger.begin(txn, size);
        producer.beginTransaction();
        for (int i = 0; i < acknowledged; i++)
        {
            final int partition = i < PARTITION_COUNT ? i : random.nextInt(PARTITION_COUNT);
            producer.send(new ProducerRecord<>(TOPIC, partition, null, TransactionLedger.value(txn, i)));
        }
        producer.flush(); // every record acknowledged: durable, and each partition's AddPartitions written before it
        // what the kill leaves durable decides it: a durable PrepareCommit must commit, whatever the client saw
        ledger.end(txn, commit ? Outcome.COMMITTED : Outcome.ABORTED);
        final int lastPartition = random.nextInt(PARTITION_COUNT);
        Files.createFile(armed);
        final AtomicReference<Object> ended = new AtomicReference<>();
        final Thread ender = new Thread(() ->
        {
            try
            {
                if (point == CrashPoint.BEFORE_END_TXN)
                {
                    ended.set(producer.send(new ProducerRecord<>(TOPIC, lastPartition, null,
                        TransactionLedger.value(txn, acknowledged))).get());
                }
                else if (commit)
                {
                    producer.commitTransaction();
                    ended.set("committed");
                }
                else
                {
                    producer.abortTransaction();
                    ended.set("aborted");
                }
            }
            catch (final Exception ex)
            {
                ended.set(ex);
            }
        }, "txn-ender");
        ender.start();
        assertTrue(server.process().waitFor(30, TimeUnit.SECONDS), () -> "the shim killed the server at " + point + "; the client: " + ended);
        assertEquals(137, server.process().exitValue(), "SIGKILL");
        producer.close(Duration.ZERO); // ends a send or commit blocked on the dead server
        ender.join(TimeUnit.SECONDS.toMillis(30));
        assertFalse(ender.isAlive(), "the client's call ended");
        System.out.println("transaction " + txn + ": the client saw " + ended.get());
        return txn;
    }

    /** What the restarted coordinator made of the killed transaction, before any client asks for the id. */
    private void assertTheLoadFound(final CrashPoint point, final boolean commit, final int round) throws Exception
    {
        final boolean prepared = point != CrashPoint.BEFORE_END_TXN;
        final String loaded = "; " + (prepared ? 1 : 0) + " to complete";
        await(() -> server.stderr().contains(loaded), Duration.ofSeconds(30), () -> "the load logged '" + loaded + "' after round " + round);
        try (Admin admin = TransactionLedger.admin(server))
        {
            final TransactionState expected = !prepared ? TransactionState.ONGOING
                : commit ? TransactionState.COMPLETE_COMMIT : TransactionState.COMPLETE_ABORT;
            awaitValue(() -> admin.describeTransactions(List.of(TRANSACTIONAL_ID)).description(TRANSACTIONAL_ID).get().state(),
                expected::equals, Duration.ofSeconds(30), "the killed transaction " + expected + " after round " + round);
            if (!prepared)
            {
                for (final TopicPartition tp : PARTITIONS)
                {
                    final long lso = TransactionLedger.latest(admin, tp, IsolationLevel.READ_COMMITTED);
                    final long end = TransactionLedger.latest(admin, tp, IsolationLevel.READ_UNCOMMITTED);
                    assertTrue(lso < end, () -> "the open transaction holds the LSO of " + tp + " below its end " + end + ": " + lso);
                }
            }
        }
    }

    /**
     * How many partitions hold the crash transaction's marker as the kill left the files: it wrote
     * to every partition, so a partition's marker is there when its segment's last batch is a
     * control batch (one segment each: these logs are far below {@code segment.bytes}).
     */
    private static int markersOnDisk(final Path data) throws IOException
    {
        int markers = 0;
        final RecordBatch batch = new RecordBatch();
        for (final TopicPartition tp : PARTITIONS)
        {
            try (FileChannel channel = FileChannel.open(data.resolve(tp.toString()).resolve("00000000000000000000.log"), StandardOpenOption.READ))
            {
                final UnsafeBuffer file = new UnsafeBuffer(channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size()));
                boolean lastIsControl = false;
                // the file is preallocated: the zeros after the last batch end the walk (a length below the header's)
                for (int at = 0; batch.wrap(file, at).check(file.capacity() - at) == RecordBatch.OK; at += batch.sizeInBytes())
                {
                    lastIsControl = batch.isControl();
                }
                markers += lastIsControl ? 1 : 0;
            }
        }
        return markers;
    }

    private ServerCommand.Running start(final Path data, final Path shim, final CrashPoint point, final Path armed, final Path kills,
        final int skip) throws Exception
    {
        final Map<String, String> environment = Map.of("LD_PRELOAD", shim.toString(), "FERRITE_KILL_ARMED", armed.toString(),
            "FERRITE_KILL_CALL", point.call, "FERRITE_KILL_PATH", point.path, "FERRITE_KILL_SUFFIX", ".log",
            "FERRITE_KILL_SKIP", Integer.toString(skip), "FERRITE_KILL_LOG", kills.toString(),
            // the load's line "...; N to complete" (INFO; the tests' logger configuration says WARN)
            "JAVA_TOOL_OPTIONS", "-Dorg.slf4j.simpleLogger.log.io.ferrite.broker.txn.TxnCoordinator=info");
        return ServerCommand.start(dir, environment, "--override", "log.dir=" + data, "--override", "listeners=PLAINTEXT://127.0.0.1:0",
            "--override", "ferrite.log.durability=fsync", "--override", "ferrite.log.write.strategy=" + point.writeStrategy);
    }
}
