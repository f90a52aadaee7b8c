package io.ferrite.wire.record;

import org.agrona.DirectBuffer;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * The records of control batches. The key is {@code version: int16 (0), type: int16}; for the
 * transaction markers (ABORT 0, COMMIT 1) the value is {@code version: int16 (0),
 * coordinatorEpoch: int32}. Kafka's Raft types (2 and up) are recognised but not interpreted.
 */
public final class ControlRecords
{
    public static final short ABORT = 0;
    public static final short COMMIT = 1;
    public static final short LEADER_CHANGE = 2;
    public static final short SNAPSHOT_HEADER = 3;
    public static final short SNAPSHOT_FOOTER = 4;
    public static final short KRAFT_VERSION = 5;
    public static final short KRAFT_VOTERS = 6;

    public static final short CURRENT_KEY_VERSION = 0;
    public static final int KEY_LENGTH = 4;
    public static final short CURRENT_MARKER_VERSION = 0;
    public static final int MARKER_VALUE_LENGTH = 6;

    /** A type that is not one of these: the record is not a control record Kafka would write. */
    public static final short UNKNOWN = -1;

    private ControlRecords()
    {
    }

    /** The control type of {@code record}, or {@link #UNKNOWN} when its key is not a control key. */
    public static short type(final Record record)
    {
        if (record.keyLength() < KEY_LENGTH)
        {
            return UNKNOWN;
        }
        final DirectBuffer b = record.buffer();
        final short version = b.getShort(record.keyOffset(), BIG_ENDIAN);
        if (version < 0)
        {
            return UNKNOWN;
        }
        final short type = b.getShort(record.keyOffset() + 2, BIG_ENDIAN);
        return type >= ABORT && type <= KRAFT_VOTERS ? type : UNKNOWN;
    }

    /**
     * The coordinator epoch of a COMMIT or ABORT marker.
     *
     * @throws CorruptRecordException when the value is too short to be a marker
     */
    public static int coordinatorEpoch(final Record record)
    {
        if (record.valueLength() < MARKER_VALUE_LENGTH)
        {
            throw CorruptRecordException.of("Invalid end transaction marker: value of ", record.valueLength(), " bytes");
        }
        return record.buffer().getInt(record.valueOffset() + 2, BIG_ENDIAN);
    }
}
