package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import org.apache.kafka.coordinator.transaction.TransactionState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The states and the error codes the coordinator answers, held against Kafka 4.4's. */
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
    void errorCodesAreKafkas()
    {
        assertEquals(org.apache.kafka.common.protocol.Errors.COORDINATOR_LOAD_IN_PROGRESS.code(), Errors.COORDINATOR_LOAD_IN_PROGRESS);
        assertEquals(org.apache.kafka.common.protocol.Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND.code(), Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
        assertEquals(org.apache.kafka.common.protocol.Errors.INVALID_TXN_STATE.code(), Errors.INVALID_TXN_STATE);
        assertEquals(org.apache.kafka.common.protocol.Errors.INVALID_PRODUCER_ID_MAPPING.code(), Errors.INVALID_PRODUCER_ID_MAPPING);
        assertEquals(org.apache.kafka.common.protocol.Errors.INVALID_TRANSACTION_TIMEOUT.code(), Errors.INVALID_TRANSACTION_TIMEOUT);
        assertEquals(org.apache.kafka.common.protocol.Errors.CONCURRENT_TRANSACTIONS.code(), Errors.CONCURRENT_TRANSACTIONS);
        assertEquals(org.apache.kafka.common.protocol.Errors.PRODUCER_FENCED.code(), Errors.PRODUCER_FENCED);
        assertEquals(org.apache.kafka.common.protocol.Errors.TRANSACTIONAL_ID_NOT_FOUND.code(), Errors.TRANSACTIONAL_ID_NOT_FOUND);
        assertEquals(org.apache.kafka.common.protocol.Errors.INVALID_REGULAR_EXPRESSION.code(), Errors.INVALID_REGULAR_EXPRESSION);
        assertEquals(org.apache.kafka.common.protocol.Errors.TRANSACTION_ABORTABLE.code(), Errors.TRANSACTION_ABORTABLE);
    }

    @Test
    void partitionOfAnIdIsKafkasUtilsAbs()
    {
        // "polygenelubricants".hashCode() is Integer.MIN_VALUE: Kafka's Utils.abs makes it 0, Math.abs would leave it negative
        assertEquals(Integer.MIN_VALUE, "polygenelubricants".hashCode());
        assertEquals(0, TxnConfig.partitionOf("polygenelubricants", 50));
        for (final String id : new String[] {"", "a", "txn-1", "orders-app-0", "\u00e9t\u00e9", "Aa", "BB"})
        {
            assertEquals(org.apache.kafka.common.utils.Utils.abs(id.hashCode()) % 50, TxnConfig.partitionOf(id, 50), id);
        }
        assertEquals(TxnConfig.partitionOf("group-1", 7), new TxnConfig(1, 50, 7, 1, (short)2).offsetsPartitionFor("group-1"));
    }
}
