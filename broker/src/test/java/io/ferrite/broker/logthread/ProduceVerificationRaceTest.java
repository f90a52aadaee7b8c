package io.ferrite.broker.logthread;

import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.AppendResult;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.log.LogTransactions;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The race Kafka's VerificationGuard closes, on a log thread stepped with an {@link AgentInvoker}:
 * a transactional batch comes back to be verified, the coordinator says its partition is in the
 * ongoing transaction, and before the batch's second append the transaction ends — its marker is
 * written through the same log thread. The late batch must not open a transaction nobody will end
 * (a "hanging transaction" pinning the last stable offset): INVALID_TXN_STATE, nothing appended.
 * In the other order (the batch first, then the marker) the batch is in the transaction.
 */
class ProduceVerificationRaceTest
{
    private static final long PID = 42;

    @TempDir
    Path dir;

    private LogManager logs;
    private TopicRegistry registry;
    private LogThread thread;
    private AgentInvoker invoker;
    private Partition partition;
    private final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);

    @BeforeEach
    void start() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        registry = new TopicRegistry(logs, 1);
        registry.load();
        thread = new LogThread(0, 1, 8, new LogThread.Completion()
        {
            @Override
            public void completed(final int networkThread)
            {
            }

            @Override
            public void highWatermarkAdvanced(final Partition p)
            {
            }
        });
        invoker = new AgentInvoker(thread.faults(), null, thread);
        invoker.start();
        partition = registry.create("orders", 1, Map.of()).partitions[0];
    }

    @AfterEach
    void stop() throws Exception
    {
        invoker.close();
        logs.close();
    }

    /** A produce's command for a transactional batch of PID at {@code sequence}, as ProduceHandler sends it first. */
    private AppendCommand transactionalBatch(final int sequence)
    {
        final RecordBatchBuilder builder = new RecordBatchBuilder().wrap(buffer, 0).producer(PID, (short)0, sequence).transactional(true);
        builder.appendRecord(System.currentTimeMillis(), null, 0, -1, new UnsafeBuffer(new byte[10]), 0, 10);
        final AppendCommand command = new AppendCommand();
        command.set(0, null, 0, partition, buffer, 0, builder.build(), (short)-1);
        command.verification = LogTransactions.VERIFY_FIRST;
        return command;
    }

    private AppendCommand roundTrip(final AppendCommand command)
    {
        assertTrue(thread.offer(0, command));
        invoker.invoke();
        final AppendCommand back = thread.poll(0);
        assertSame(command, back);
        return back;
    }

    private void commitMarker()
    {
        final AppendCommand marker = new AppendCommand();
        marker.setMarker(0, null, 0, partition, PID, (short)0, 0, true, false);
        assertEquals(AppendResult.OK, roundTrip(marker).result.status, marker.result.toString());
    }

    @Test
    void aBatchVerifiedBeforeTheMarkerAndAppendedAfterItIsRefused()
    {
        final AppendCommand batch = roundTrip(transactionalBatch(0));
        assertEquals(AppendResult.VERIFICATION_NEEDED, batch.result.status, batch.result.toString());
        assertEquals(0, partition.log.logEndOffset(), "nothing appended before the verification");
        batch.verification = batch.result.verificationGuard; // the coordinator said: in the ongoing transaction

        commitMarker(); // meanwhile EndTxn: the transaction's marker reaches the partition first

        roundTrip(batch);
        assertEquals(AppendResult.INVALID_TXN_STATE, batch.result.status, batch.result.toString());
        assertEquals(1, partition.log.logEndOffset(), "only the marker");
        assertEquals(1, partition.log.transactions().lastStableOffset(), "no transaction left open on the partition");
    }

    @Test
    void aBatchAppendedBeforeTheMarkerIsInTheTransactionAndTheNextBatchesAreNotVerified()
    {
        final AppendCommand batch = roundTrip(transactionalBatch(0));
        assertEquals(AppendResult.VERIFICATION_NEEDED, batch.result.status);
        batch.verification = batch.result.verificationGuard;
        assertEquals(AppendResult.OK, roundTrip(batch).result.status, batch.result.toString());
        assertEquals(AppendResult.OK, roundTrip(transactionalBatch(1)).result.status, "the transaction is open here: appended at once");
        assertEquals(0, partition.log.transactions().lastStableOffset(), "open from offset 0");
        commitMarker();
        assertEquals(3, partition.log.transactions().lastStableOffset());
    }
}
