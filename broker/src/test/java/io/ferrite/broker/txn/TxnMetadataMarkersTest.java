package io.ferrite.broker.txn;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link TxnMetadata#markerDone}: a prepared transaction lists only the partitions still without their marker,
 * what it hands out cannot be changed, a snapshot keeps what it saw, and the next transition starts afresh.
 */
class TxnMetadataMarkersTest
{
    private static final int PARTITIONS = 1_000;

    @Test
    void eachMarkerLeavesThePreparedTransactionAndTheCompleteStartsAfresh()
    {
        final Set<TxnPartition> all = new HashSet<>();
        for (int i = 0; i < PARTITIONS; i++)
        {
            all.add(new TxnPartition("t" + i % 7, i));
        }
        final TxnMetadata m = new TxnMetadata("id", new TxnTransit(5, -1, -1, (short)3, (short)2, 60_000, TxnState.PREPARE_COMMIT,
            all, 10, 20, (short)2));
        final TxnTransit atPrepare = m.snapshot();
        final Set<TxnPartition> left = new HashSet<>(all);
        int n = 0;
        for (final TxnPartition tp : all)
        {
            m.markerDone(tp);
            m.markerDone(tp); // a marker answered twice (sent again after a retriable error) changes nothing more
            left.remove(tp);
            if (++n % 97 == 0)
            {
                assertEquals(left, m.partitions(), "after " + n + " markers");
                assertEquals(left, m.snapshot().partitions(), "a snapshot after " + n + " markers");
            }
        }
        m.markerDone(new TxnPartition("not-in-it", 0));
        assertTrue(m.partitions().isEmpty(), "every marker done");
        assertEquals(all, atPrepare.partitions(), "a snapshot taken before the markers keeps every partition");
        assertThrows(UnsupportedOperationException.class, () -> m.partitions().add(new TxnPartition("t0", 0)));

        final TxnTransit complete = m.prepareComplete(30);
        m.complete(complete);
        assertEquals(TxnState.COMPLETE_COMMIT, m.state());
        assertTrue(m.partitions().isEmpty());
        final TxnPartition next = new TxnPartition("t0", 0);
        m.complete(m.prepareAddPartitions(Set.of(next), 40, (short)2));
        m.markerDone(next); // not prepared: nothing leaves an ongoing transaction
        assertEquals(Set.of(next), m.partitions());
    }
}
