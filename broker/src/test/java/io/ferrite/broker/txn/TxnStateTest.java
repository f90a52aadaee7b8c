package io.ferrite.broker.txn;

import io.ferrite.broker.coordinator.CoordinatorTopic;
import org.apache.kafka.coordinator.transaction.TransactionState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The states, and the partition of an id, held against Kafka 4.4's (the error codes: ErrorsTest). */
class TxnStateTest
{
    @ParameterizedTest
    @EnumSource(TxnState.class)
    void idNameExpiryAndPreviousStatesAreKafkas(final TxnState ours)
    {
        final TransactionState kafka = KafkaTxn.state(ours);
        assertEquals(kafka.name(), ours.name());
        assertEquals(kafka.stateName(), ours.stateName());
        assertEquals(kafka.isExpirationAllowed(), ours.expirationAllowed());
        for (final TxnState previous : TxnState.values())
        {
            assertEquals(kafka.validPreviousStates().contains(KafkaTxn.state(previous)), ours.mayFollow(previous),
                ours + " after " + previous);
        }
        assertEquals(ours, TxnState.ofName(kafka.stateName()));
    }

    @Test
    void unknownIdsAndNamesAreNull()
    {
        assertNull(TxnState.ofId((byte)8));
        assertNull(TxnState.ofId((byte)-1));
        assertNull(TxnState.ofName("ongoing"));
        assertNull(TxnState.ofName("Unknown"));
    }

    @Test
    void partitionOfAnIdIsKafkasUtilsAbs()
    {
        // "polygenelubricants".hashCode() is Integer.MIN_VALUE: Kafka's Utils.abs makes it 0, Math.abs would leave it negative
        assertEquals(Integer.MIN_VALUE, "polygenelubricants".hashCode());
        assertEquals(0, CoordinatorTopic.partitionFor("polygenelubricants", 50));
        for (final String id : new String[] {"", "a", "txn-1", "orders-app-0", "\u00e9t\u00e9", "Aa", "BB"})
        {
            assertEquals(org.apache.kafka.common.utils.Utils.abs(id.hashCode()) % 50, CoordinatorTopic.partitionFor(id, 50), id);
        }
        assertEquals(CoordinatorTopic.partitionFor("group-1", 7), new TxnConfig(1, 50, 7, 1, (short)2).offsetsPartitionFor("group-1"));
    }
}
