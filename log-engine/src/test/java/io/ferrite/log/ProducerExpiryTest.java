package io.ferrite.log;

import org.agrona.concurrent.AgentInvoker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Producer-id expiry as Kafka 4.4's {@code removeExpiredProducers}: every check interval (the scheduler,
 * stepped here with the test's clock) each log's writer — the test's thread, which runs what the
 * scheduler hands it — forgets the producers idle for {@code producer.id.expiration.ms} with no
 * transaction open, and the produce verifications that old; a snapshot after it does not have them, and
 * a snapshot's load leaves out a producer expired by then (Kafka's loadFromSnapshot), while one the replay
 * after the snapshot brings back stays until the first check (as in Kafka).
 */
class ProducerExpiryTest
{
    private static final long T0 = 1_700_000_000_000L;
    private static final long EXPIRY_MS = 10_000;
    private static final long CHECK_MS = 1_000;

    @TempDir
    Path dir;
    private final MutableClock clock = new MutableClock(T0);
    /** How many checks the scheduler said were due and the writer has not run yet (the test's thread is the writer). */
    private int due;
    private final Batches batches = new Batches();
    private final AppendResult result = new AppendResult();
    private LogManager manager;

    @AfterEach
    void close() throws IOException
    {
        if (manager != null)
        {
            manager.close();
        }
    }

    private PartitionLog open() throws IOException
    {
        final LogManagerConfig config = LogManagerConfig.of(dir).withClock(clock)
            .withProducerIdExpiration(EXPIRY_MS, CHECK_MS, () -> due++);
        manager = LogManager.open(config, true);
        final PartitionLog existing = manager.log("t", 0);
        return existing != null ? existing : manager.createLog("t", 0, Map.of());
    }

    private int append(final PartitionLog log, final long pid, final int sequence, final boolean transactional, final long verification)
    {
        batches.producer(1, pid, (short)0, sequence, transactional, clock.time());
        log.transactions().append(batches.buffer, 0, batches.length, verification, result);
        return result.status;
    }

    private static TreeSet<Long> producers(final PartitionLog log)
    {
        final TreeSet<Long> ids = new TreeSet<>();
        log.transactions().forEachProducer((id, epoch, lastSequence, lastTimestamp, coordinatorEpoch, txnStart) -> ids.add(id));
        return ids;
    }

    /** Steps the scheduler at the clock's time; returns how many checks are due and not run yet by the writer. */
    private int step()
    {
        final AgentInvoker scheduler = manager.background().schedulerInvoker();
        scheduler.invoke();
        return due;
    }

    private void runHanded()
    {
        for (; due > 0; due--)
        {
            manager.log("t", 0).transactions().removeExpiredProducers(); // what a log thread's walk does for each of its logs
        }
    }

    @Test
    void theWriterForgetsIdleProducersWithoutATransactionAndOldVerificationsAtTheCheck() throws IOException
    {
        final PartitionLog log = open();
        assertEquals(AppendResult.OK, append(log, 1, 0, false, LogTransactions.VERIFICATION_NOT_REQUIRED), result.toString());
        assertEquals(AppendResult.OK, append(log, 2, 0, true, LogTransactions.VERIFICATION_NOT_REQUIRED), result.toString());
        assertEquals(AppendResult.VERIFICATION_NEEDED, append(log, 3, 0, true, LogTransactions.VERIFY_FIRST), result.toString());
        final long guard = result.verificationGuard;

        clock.advance(CHECK_MS - 1);
        assertEquals(0, step(), "no check before its interval");
        clock.advance(1);
        assertEquals(1, step(), "the check tells the writer it is due");
        runHanded();
        assertEquals(List.of(1L, 2L), new ArrayList<>(producers(log)), "nothing is expired yet");

        clock.advance(EXPIRY_MS - CHECK_MS);
        assertEquals(1, step());
        assertEquals(List.of(1L, 2L), new ArrayList<>(producers(log)), "told, not done on the scheduler's thread");
        runHanded();
        assertEquals(List.of(2L), new ArrayList<>(producers(log)), "producer 1 is forgotten; 2 has a transaction open");
        assertEquals(AppendResult.INVALID_TXN_STATE, append(log, 3, 0, true, guard),
            "the verification started an expiry ago is gone: its guard is refused");

        // as against Kafka 4.4: a forgotten producer's next batch is taken whatever its sequence
        assertEquals(AppendResult.OK, append(log, 1, 5, false, LogTransactions.VERIFICATION_NOT_REQUIRED), result.toString());
        assertEquals(List.of(1L, 2L), new ArrayList<>(producers(log)));
    }

    @Test
    void aSnapshotAfterTheExpiryDoesNotHaveTheProducerNorDoesTheRestart() throws IOException
    {
        PartitionLog log = open();
        assertEquals(AppendResult.OK, append(log, 1, 0, false, LogTransactions.VERIFICATION_NOT_REQUIRED), result.toString());
        clock.advance(EXPIRY_MS / 2);
        assertEquals(AppendResult.OK, append(log, 2, 0, false, LogTransactions.VERIFICATION_NOT_REQUIRED), result.toString());
        clock.advance(EXPIRY_MS / 2);
        while (step() == 0)
        {
            clock.advance(CHECK_MS);
        }
        runHanded();
        assertEquals(List.of(2L), new ArrayList<>(producers(log)));

        final long end = log.logEndOffset();
        final Path partitionDir = log.dir();
        manager.close(); // a clean close writes <end>.snapshot
        manager = null;
        final List<Long> inSnapshot = new ArrayList<>();
        assertTrue(ProducerSnapshots.read(ProducerSnapshots.snapshotFile(partitionDir, end), (s, txn) -> inSnapshot.add(s.producerId)));
        assertEquals(List.of(2L), inSnapshot, "the snapshot after the expiry has no expired producer");

        log = open();
        assertEquals(List.of(2L), new ArrayList<>(producers(log)), "the restart does not bring producer 1 back");
    }

    @Test
    void aCleanRestartLeavesOutProducersThatExpiredWhileTheLogWasShut() throws IOException
    {
        PartitionLog log = open();
        assertEquals(AppendResult.OK, append(log, 1, 0, false, LogTransactions.VERIFICATION_NOT_REQUIRED), result.toString());
        assertEquals(AppendResult.OK, append(log, 2, 0, true, LogTransactions.VERIFICATION_NOT_REQUIRED), result.toString());
        clock.advance(1);
        assertEquals(AppendResult.OK, append(log, 3, 0, false, LogTransactions.VERIFICATION_NOT_REQUIRED), result.toString());
        manager.close(); // the snapshot has all three
        manager = null;

        clock.advance(EXPIRY_MS - 1);
        log = open();
        assertEquals(List.of(2L, 3L), new ArrayList<>(producers(log)),
            "expired while shut: 1 is left out of the snapshot's load (Kafka's loadFromSnapshot); 2 has a transaction open, 3 is younger");
        assertEquals(1, log.transactions().lastStableOffset(), "2's transaction is open again, at offset 1");
    }

    @Test
    void anUncleanRestartKeepsTheReplaysExpiredProducerUntilTheFirstCheck() throws IOException
    {
        PartitionLog log = open();
        assertEquals(AppendResult.OK, append(log, 1, 0, false, LogTransactions.VERIFICATION_NOT_REQUIRED), result.toString());
        manager.close();
        manager = null;
        // as after a crash: no clean-shutdown marker, so the whole log is replayed (no snapshot at or below 0)
        Files.delete(dir.resolve(LogManager.CLEAN_SHUTDOWN_FILE));

        clock.advance(EXPIRY_MS);
        log = open();
        assertEquals(List.of(1L), new ArrayList<>(producers(log)),
            "the replay's producer 1 stays until the first check, as in Kafka (its retry is still a duplicate)");
        assertEquals(AppendResult.DUPLICATE, append(log, 1, 0, false, LogTransactions.VERIFICATION_NOT_REQUIRED), result.toString());
        while (step() == 0)
        {
            clock.advance(CHECK_MS);
        }
        runHanded();
        assertEquals(List.of(), new ArrayList<>(producers(log)), "the first check forgets it");
        assertEquals(1, log.logEndOffset(), "its batch stays");
    }

    @Test
    void anExpiryAfterTheLogClosedDoesNothing() throws IOException
    {
        final PartitionLog log = open();
        assertEquals(AppendResult.OK, append(log, 1, 0, false, LogTransactions.VERIFICATION_NOT_REQUIRED), result.toString());
        clock.advance(EXPIRY_MS);
        manager.close(); // its snapshot has producer 1
        manager = null;
        assertEquals(0, log.transactions().removeExpiredProducers(), "a closed log's writer gate refuses it, as an append");
        assertEquals(List.of(1L), new ArrayList<>(producers(log)), "the state as the close left it");
    }
}
