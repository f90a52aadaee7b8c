package io.ferrite.log;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The partition's half of Kafka's produce verification (KIP-890 part 1; {@code UnifiedLog.maybeStartTransactionVerification},
 * {@code VerificationGuard}, {@code ProducerAppendInfo.checkSequence}): a transactional batch that would open its producer's
 * transaction is verified first and appended with its guard; a marker between the two makes the append a late write,
 * refused INVALID_TXN_STATE; batches of a transaction already open are appended at once. Real logs on real files.
 */
class TxnVerificationTest
{
    private static final long T0 = System.currentTimeMillis();
    private static final long PID = 7;

    @TempDir
    Path dir;

    private LogManager manager;
    private final Batches batches = new Batches();
    private final AppendResult result = new AppendResult();
    private long pid = PID;

    @AfterEach
    void closeManager() throws IOException
    {
        if (manager != null)
        {
            manager.close();
        }
    }

    private PartitionLog newLog() throws IOException
    {
        manager = LogManager.open(LogManagerConfig.of(dir.resolve("data")));
        return manager.createLog("t", 0, Map.of());
    }

    private int append(final PartitionLog log, final short epoch, final int sequence, final boolean transactional, final long verification)
    {
        batches.producer(2, pid, epoch, sequence, transactional, T0);
        log.transactions().append(batches.buffer, 0, batches.length, verification, result);
        return result.status;
    }

    private long guard(final PartitionLog log, final short epoch, final int sequence, final long first)
    {
        final long endBefore = log.logEndOffset();
        assertEquals(AppendResult.VERIFICATION_NEEDED, append(log, epoch, sequence, true, first), result.toString());
        assertEquals(endBefore, log.logEndOffset(), "nothing appended by a verification's start");
        return result.verificationGuard;
    }

    @Test
    void aVerifiedBatchIsAppendedWithItsGuardAndTheRestOfTheTransactionWithoutVerification() throws IOException
    {
        final PartitionLog log = newLog();
        final long guard = guard(log, (short)0, 0, LogTransactions.VERIFY_FIRST);
        assertTrue(guard > 0, "a guard is positive: " + guard);
        assertEquals(AppendResult.OK, append(log, (short)0, 0, true, guard), result.toString());
        assertEquals(0, log.transactions().lastStableOffset(), "the transaction is open at offset 0");
        // the transaction is open here: no verification, whatever the caller passes
        assertEquals(AppendResult.OK, append(log, (short)0, 2, true, LogTransactions.VERIFY_FIRST), result.toString());
        assertEquals(4, log.logEndOffset());
    }

    @Test
    void aMarkerBetweenTheVerificationAndTheAppendMakesItALateWriteRefusedInvalidTxnState() throws IOException
    {
        final PartitionLog log = newLog();
        // the transaction's first batch opened it here; its commit marker is written
        final long first = guard(log, (short)0, 0, LogTransactions.VERIFY_FIRST);
        assertEquals(AppendResult.OK, append(log, (short)0, 0, true, first));
        // a second batch, verified while the transaction is still ongoing at the coordinator, is late
        log.transactions().appendMarker(PID, (short)0, 0, true, false, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
        final long late = guard(log, (short)0, 2, LogTransactions.VERIFY_FIRST);
        log.transactions().appendMarker(PID, (short)0, 0, false, false, result); // the next transaction's abort, say
        assertEquals(AppendResult.OK, result.status, result.toString());
        final long end = log.logEndOffset();
        assertEquals(AppendResult.INVALID_TXN_STATE, append(log, (short)0, 2, true, late), result.toString());
        assertEquals(end, log.logEndOffset(), "nothing appended");
        log.highWatermark(end);
        assertEquals(end, log.transactions().lastStableOffset(), "no transaction left open");
    }

    @Test
    void aGuardOfAnotherVerificationOrOfNoneIsRefused() throws IOException
    {
        final PartitionLog log = newLog();
        final long guard = guard(log, (short)0, 0, LogTransactions.VERIFY_FIRST);
        assertEquals(AppendResult.INVALID_TXN_STATE, append(log, (short)0, 0, true, guard + 1), result.toString());
        // a second start while the first is under way shares its guard (Kafka's computeIfAbsent)
        assertEquals(guard, guard(log, (short)0, 0, LogTransactions.VERIFY_FIRST));
        assertEquals(AppendResult.OK, append(log, (short)0, 0, true, guard), result.toString());
        log.transactions().appendMarker(PID, (short)0, 0, true, false, result);
        assertNotEquals(guard, guard(log, (short)0, 2, LogTransactions.VERIFY_FIRST), "a new verification, a new guard");
    }

    @Test
    void nonTransactionalBatchesAndAnEmbeddedWriterAreNotVerified() throws IOException
    {
        final PartitionLog log = newLog();
        assertEquals(AppendResult.OK, append(log, (short)0, 0, false, LogTransactions.VERIFY_FIRST), result.toString());
        batches.producer(2, PID + 1, (short)0, 0, true, T0);
        log.append(batches.buffer, 0, batches.length, result); // PartitionLog.append: no coordinator to ask
        assertEquals(AppendResult.OK, result.status, result.toString());
    }

    @Test
    void anOlderEpochIsRefusedBeforeAnyVerification() throws IOException
    {
        final PartitionLog log = newLog();
        assertEquals(AppendResult.OK, append(log, (short)3, 0, false, LogTransactions.VERIFICATION_NOT_REQUIRED));
        assertEquals(AppendResult.INVALID_PRODUCER_EPOCH, append(log, (short)2, 0, true, LogTransactions.VERIFY_FIRST), result.toString());
    }

    @Test
    void transactionVersionTwoWantsSequenceZeroFromAProducerWithoutStateAndNoneAboveTheLowestVerified() throws IOException
    {
        final PartitionLog log = newLog();
        final long guard = guard(log, (short)0, 4, LogTransactions.VERIFY_FIRST_EPOCH_BUMP);
        assertEquals(AppendResult.OUT_OF_ORDER_SEQUENCE, append(log, (short)0, 4, true, guard), result.toString());
        assertTrue(result.message.contains("Expected sequence 0 for transactions v2"), result.message);
        assertEquals(AppendResult.OK, append(log, (short)0, 0, true, guard(log, (short)0, 0, LogTransactions.VERIFY_FIRST_EPOCH_BUMP)));
        // another producer (any version): two verifications of one epoch under way, the lowest sequence must come first
        pid = PID + 1;
        final long other = guard(log, (short)0, 2, LogTransactions.VERIFY_FIRST);
        assertEquals(other, guard(log, (short)0, 0, LogTransactions.VERIFY_FIRST));
        assertEquals(AppendResult.OUT_OF_ORDER_SEQUENCE, append(log, (short)0, 2, true, other), result.toString());
        assertTrue(result.message.contains("0 (earliest seen sequence)"), result.message);
        assertEquals(AppendResult.OK, append(log, (short)0, 0, true, other), result.toString());
    }

    @Test
    void aTransactionVersionTwoMarkerOfTheEpochTheNextTransactionVerifiesWithKeepsItsVerification() throws IOException
    {
        final PartitionLog log = newLog();
        final long first = guard(log, (short)0, 0, LogTransactions.VERIFY_FIRST_EPOCH_BUMP);
        assertEquals(AppendResult.OK, append(log, (short)0, 0, true, first));
        // the client's next transaction (epoch 1, after EndTxn v5) starts verifying before this partition's marker (epoch 1) lands
        final long next = guard(log, (short)1, 0, LogTransactions.VERIFY_FIRST_EPOCH_BUMP);
        log.transactions().appendMarker(PID, (short)1, 0, true, true, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
        assertEquals(AppendResult.OK, append(log, (short)1, 0, true, next), result.toString());
    }

    @Test
    void verificationsExpireWithTheProducerExpiry()
    {
        final ProducerStateManager producers = new ProducerStateManager(dir);
        final io.ferrite.wire.record.RecordBatch batch = new io.ferrite.wire.record.RecordBatch();
        batches.producer(1, PID, (short)0, 0, true, T0);
        assertEquals(AppendResult.VERIFICATION_NEEDED, producers.check(batch.wrap(batches.buffer, 0), LogTransactions.VERIFY_FIRST, T0,
            result));
        assertEquals(1, producers.verifying());
        producers.expire(T0 + 9, 10);
        assertEquals(1, producers.verifying());
        producers.expire(T0 + 10, 10);
        assertEquals(0, producers.verifying());
    }
}
