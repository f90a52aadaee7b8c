package io.ferrite.log.clean;

import io.ferrite.wire.compress.Codecs;
import io.ferrite.wire.record.CorruptRecordException;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import io.ferrite.wire.record.RecordReader;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.common.message.AbortedTxn;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.storage.internals.log.CleanedTransactionMetadata;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@link CleanedTransactions} beyond its initial capacity (16 ongoing aborted transactions), against Kafka 4.4's own
 * {@code CleanedTransactionMetadata} fed the same {@code .txnindex} entries and the same batches; and a malformed
 * control key, which Kafka's {@code ControlRecordType.parse} rejects.
 */
class CleanedTransactionsTest
{
    @Test
    void manyInterleavedAbortedTransactionsAnswerAsKafkas()
    {
        // 40 producers open a transaction each before any ends: 40 ongoing aborted transactions at once, so the
        // arrays and the heap grow; producers 0, 7, 14 ... write no data (their ABORT has no entry to keep), every
        // third one commits instead
        final int producers = 40;
        final ByteBuffer bytes = ByteBuffer.allocate(1 << 20);
        final UnsafeBuffer log = new UnsafeBuffer(bytes);
        final RecordBatchBuilder builder = new RecordBatchBuilder(new Codecs());
        final long[] first = new long[producers];
        final List<AbortedTxn> aborted = new ArrayList<>();
        final List<AbortedTxn> expectedKept = new ArrayList<>();
        int end = 0;
        long offset = 0;
        for (int round = 0; round < 2; round++)
        {
            for (int p = 0; p < producers; p++)
            {
                if (p % 7 == 0)
                {
                    continue;
                }
                if (round == 0)
                {
                    first[p] = offset;
                }
                builder.wrap(log, end).baseOffset(offset).producer(1000 + p, (short)0, round).transactional(true)
                    .appendRecord(1_700_000_000_000L, new byte[] {(byte)p}, new byte[] {1});
                end += builder.build();
                offset++;
            }
        }
        for (int p = 0; p < producers; p++)
        {
            final boolean commit = p % 3 == 0;
            builder.wrap(log, end).baseOffset(offset).producer(1000 + p, (short)0, -1).transactional(true).control(true)
                .appendEndTxnMarker(1_700_000_000_000L, commit, 1);
            end += builder.build();
            if (!commit)
            {
                final AbortedTxn txn = new AbortedTxn().setProducerId(1000 + p).setFirstOffset(p % 7 == 0 ? offset : first[p])
                    .setLastOffset(offset).setLastStableOffset(offset + 1);
                aborted.add(txn);
                if (p % 7 != 0)
                {
                    expectedKept.add(txn);
                }
            }
            offset++;
        }
        bytes.limit(end);

        final List<AbortedTxn> kept = new ArrayList<>();
        final CleanedTransactions ours = new CleanedTransactions(new RecordReader(new Codecs(), 1 << 20))
            .keptAbortedTxns((pid, f, l, lso) -> kept.add(new AbortedTxn().setProducerId(pid).setFirstOffset(f).setLastOffset(l)
                .setLastStableOffset(lso)));
        for (final AbortedTxn t : aborted)
        {
            ours.addAbortedTransaction(t.producerId(), t.firstOffset(), t.lastOffset(), t.lastStableOffset());
        }
        final CleanedTransactionMetadata kafka = new CleanedTransactionMetadata();
        kafka.addAbortedTransactions(aborted);

        final RecordBatch batch = new RecordBatch();
        int position = 0;
        int discardable = 0;
        for (final MutableRecordBatch k : MemoryRecords.readableRecords(bytes.duplicate()).batches())
        {
            batch.wrap(log, position);
            assertEquals(k.baseOffset(), batch.baseOffset());
            final boolean expected = k.isControlBatch() ? kafka.onControlBatchRead(k) : kafka.onBatchRead(k);
            final boolean actual = batch.isControl() ? ours.onControlBatchRead(batch) : ours.onBatchRead(batch);
            assertEquals(expected, actual, "the batch at " + k.baseOffset());
            discardable += actual ? 1 : 0;
            position += batch.sizeInBytes();
        }
        assertEquals(expectedKept, kept, "the ABORT entries kept: the aborted transactions with data, in marker order");
        // what can go: the aborted data (22 producers with data abort, two batches each), and the markers of the
        // transactions without data (producers 0, 7, ... 35: four aborts, and the commits of 0 and 21)
        assertEquals(2 * 22 + 4 + 2, discardable);
    }

    @Test
    void aMalformedControlKeyIsCorruptAsInKafka()
    {
        final UnsafeBuffer log = new UnsafeBuffer(new byte[256]);
        final RecordBatchBuilder builder = new RecordBatchBuilder(new Codecs());
        final CleanedTransactions transactions = new CleanedTransactions(new RecordReader(new Codecs(), 1 << 20));
        final RecordBatch batch = new RecordBatch();

        builder.wrap(log, 0).baseOffset(5).producer(3, (short)0, -1).transactional(true).control(true)
            .appendRecord(1_700_000_000_000L, new byte[] {0, 0}, new byte[6]); // a 2-byte key
        builder.build();
        batch.wrap(log, 0);
        assertThrows(CorruptRecordException.class, () -> transactions.onControlBatchRead(batch));

        builder.wrap(log, 0).baseOffset(5).producer(3, (short)0, -1).transactional(true).control(true)
            .appendRecord(1_700_000_000_000L, new byte[] {(byte)0xFF, (byte)0xFF, 0, 0}, new byte[6]); // version -1
        builder.build();
        batch.wrap(log, 0);
        assertThrows(CorruptRecordException.class, () -> transactions.onControlBatchRead(batch));

        builder.wrap(log, 0).baseOffset(5).producer(3, (short)0, -1).transactional(true).control(true)
            .appendRecord(1_700_000_000_000L, new byte[] {0, 0, 0, 9}, new byte[6]); // an unknown type: not a marker
        builder.build();
        batch.wrap(log, 0);
        assertEquals(false, transactions.onControlBatchRead(batch));
    }
}
