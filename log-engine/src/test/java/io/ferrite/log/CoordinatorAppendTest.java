package io.ferrite.log;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A coordinator's transactional batch (Kafka's append origin COORDINATOR: the group coordinator's
 * offsets inside a transaction, base sequence -1): checked for its epoch only, never taken for a
 * duplicate, and it opens the producer's transaction as a client's batch does (last stable offset,
 * marker, aborted transaction). Real logs on real files.
 */
class CoordinatorAppendTest
{
    static final long T0 = System.currentTimeMillis();
    private static final long PID = 9;

    @TempDir
    Path dir;

    private LogManager manager;
    private final Batches batches = new Batches();
    private final AppendResult result = new AppendResult();
    private final List<long[]> aborted = new ArrayList<>();

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
        final PartitionLog log = manager.createLog("__consumer_offsets", 0, Map.of());
        log.transactions().abortedTxnListener((pid, first, last, lso) -> aborted.add(new long[] {pid, first, last, lso}));
        return log;
    }

    private int asCoordinator(final PartitionLog log, final short epoch, final int count)
    {
        batches.producer(count, PID, epoch, -1, true, T0);
        log.transactions().appendAsCoordinator(batches.buffer, 0, batches.length, result);
        return result.status;
    }

    @Test
    void coordinatorBatchesWithoutSequencesAreAppendedAndOpenTheTransaction() throws IOException
    {
        final PartitionLog log = newLog();
        assertEquals(AppendResult.OK, asCoordinator(log, (short)2, 2), result.toString());
        final long first = result.firstOffset;
        assertEquals(AppendResult.OK, asCoordinator(log, (short)2, 1), "the same (absent) sequences again: " + result);
        assertEquals(first + 2, result.firstOffset, "appended, not answered as the first batch's duplicate");
        log.highWatermark(log.logEndOffset());
        assertTrue(log.transactions().hasOngoingTransaction(PID, (short)2));
        assertEquals(first, log.transactions().lastStableOffset(), "the open transaction holds the last stable offset");

        // the same bytes through a client's append are a retry of the batch before (Kafka's CLIENT origin)
        batches.producer(1, PID, (short)2, -1, true, T0);
        log.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.DUPLICATE, result.status, result.toString());

        log.transactions().appendMarker(PID, (short)2, 0, false, false, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
        final long marker = result.firstOffset;
        log.highWatermark(log.logEndOffset());
        assertFalse(log.transactions().hasOngoingTransaction(PID, (short)2));
        assertEquals(marker + 1, log.transactions().lastStableOffset());
        assertEquals(1, aborted.size());
        assertEquals(List.of(PID, first, marker), List.of(aborted.get(0)[0], aborted.get(0)[1], aborted.get(0)[2]));
    }

    @Test
    void aCoordinatorBatchBelowTheProducersEpochIsRefused() throws IOException
    {
        final PartitionLog log = newLog();
        assertEquals(AppendResult.OK, asCoordinator(log, (short)3, 1), result.toString());
        log.transactions().appendMarker(PID, (short)3, 0, true, false, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
        final long end = log.logEndOffset();
        assertEquals(AppendResult.INVALID_PRODUCER_EPOCH, asCoordinator(log, (short)2, 1), result.toString());
        assertEquals(end, log.logEndOffset(), "nothing appended");
        assertFalse(log.transactions().hasOngoingTransaction(PID, (short)2));
        assertEquals(AppendResult.OK, asCoordinator(log, (short)4, 1), "a higher epoch opens the next transaction: " + result);
        assertTrue(log.transactions().hasOngoingTransaction(PID, (short)4));
    }
}
