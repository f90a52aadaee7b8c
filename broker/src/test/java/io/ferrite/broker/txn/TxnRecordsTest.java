package io.ferrite.broker.txn;

import io.ferrite.wire.ProtocolException;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Arrays;
import java.util.Set;

import static io.ferrite.broker.txn.TxnHarness.state;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What {@link TxnRecords} refuses to write and to read. */
class TxnRecordsTest
{
    private static final TxnPartition TP = new TxnPartition("orders", 0);
    private static final TxnTransit ONGOING = new TxnTransit(7, 6, 8, (short)3, (short)-1, 60_000, TxnState.ONGOING,
        Set.of(TP, new TxnPartition("t", 2)), 5_000, 6_000, (short)2);

    @ParameterizedTest
    @ValueSource(shorts = {-1, 2, 3})
    void onlyValueVersions0And1AreWritten(final short version)
    {
        assertThrows(IllegalArgumentException.class, () -> TxnRecords.value(ONGOING, version));
    }

    @Test
    void anEmptyTransactionWithPartitionsIsNotWritten()
    {
        final TxnTransit empty = state(7, 3, TxnState.EMPTY, Set.of(TP), 0);
        assertThrows(IllegalStateException.class, () -> TxnRecords.value(empty, (short)0));
        assertThrows(IllegalStateException.class, () -> TxnRecords.value(empty, (short)1));
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void version0HasNoRoomForAClientTransactionVersion(final int clientTv)
    {
        final TxnTransit t = state(7, 3, TxnState.ONGOING, Set.of(TP), clientTv);
        assertThrows(IllegalStateException.class, () -> TxnRecords.value(t, (short)0));
        assertEquals(t, read(TxnRecords.value(t, (short)1)));
    }

    @ParameterizedTest
    @ValueSource(bytes = {8, 9, 127, -1, -128})
    void anUnknownStateIsRefused(final byte stateId)
    {
        final byte[][] values = {TxnRecords.value(ONGOING, (short)1), TxnRecords.value(state(7, 3, TxnState.ONGOING, Set.of(TP), 0),
            (short)0)};
        for (final byte[] value : values)
        {
            // version int16 | producerId int64 | epoch int16 | timeout int32 | state int8
            assertEquals(TxnState.ONGOING.id(), value[16]);
            value[16] = stateId;
            final ProtocolException ex = assertThrows(ProtocolException.class, () -> read(value));
            assertTrue(ex.getMessage().contains("unknown state " + stateId), ex.getMessage());
        }
    }

    @Test
    void everyTruncationIsRefused()
    {
        final byte[][] values = {TxnRecords.value(ONGOING, (short)1), TxnRecords.value(state(7, 3, TxnState.PREPARE_COMMIT, Set.of(TP), 0),
            (short)0), TxnRecords.value(state(7, 3, TxnState.EMPTY, Set.of(), 0), (short)1)};
        for (final byte[] value : values)
        {
            read(value);
            for (int length = 0; length < value.length; length++)
            {
                final byte[] cut = Arrays.copyOf(value, length);
                assertThrows(ProtocolException.class, () -> read(cut), "cut at " + length + " of " + value.length);
            }
        }
    }

    private static TxnTransit read(final byte[] value)
    {
        // read from the middle of a larger buffer: nothing past the value may be read
        final byte[] framed = new byte[value.length + 16];
        Arrays.fill(framed, (byte)1);
        System.arraycopy(value, 0, framed, 4, value.length);
        return TxnRecords.readValue(new UnsafeBuffer(framed), 4, value.length);
    }
}
