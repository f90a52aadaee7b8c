package io.ferrite.wire.record;

/**
 * Layout of a RecordBatch v2 (magic 2), big-endian, as Kafka writes it on the wire and on disk:
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                     Base Offset (int64)                       |  0
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     Batch Length (int32)                      |  8   bytes after this field
 *  +---------------------------------------------------------------+
 *  |                Partition Leader Epoch (int32)                 | 12
 *  +---------------+-----------------------------------------------+
 *  | Magic (int8)  |              CRC (uint32) ...                 | 16, 17
 *  +---------------+-------------------------------+---------------+
 *  |  ... CRC      |      Attributes (int16)       | Last Offset   | 21   CRC32C covers from here
 *  +---------------+-------------------------------+   Delta       |      to the end of the batch
 *  |                 (int32) ...                   |               | 23
 *  +-----------------------------------------------+---------------+
 *  |   Base Timestamp (int64) 27, Max Timestamp (int64) 35,        |
 *  |   Producer Id (int64) 43, Producer Epoch (int16) 51,          |
 *  |   Base Sequence (int32) 53, Record Count (int32) 57           |
 *  +---------------------------------------------------------------+
 *  |                 Records ... (61, compressed as a whole)       |
 *  +---------------------------------------------------------------+
 * </pre>
 * Attributes: bits 0-2 compression, bit 3 timestamp type (1 = LogAppendTime), bit 4 transactional,
 * bit 5 control, bit 6 the base timestamp is a delete horizon (compaction).
 *
 * <p>Why the CRC starts at the attributes: the broker rewrites the base offset and the partition
 * leader epoch of every batch it appends, and keeping them outside the CRC spares it recomputing
 * the CRC for each append; the records and everything a producer sets stay covered.
 */
public final class RecordBatchDescriptor
{
    public static final int BASE_OFFSET_OFFSET = 0;
    public static final int BATCH_LENGTH_OFFSET = BASE_OFFSET_OFFSET + 8;
    public static final int PARTITION_LEADER_EPOCH_OFFSET = BATCH_LENGTH_OFFSET + 4;
    public static final int MAGIC_OFFSET = PARTITION_LEADER_EPOCH_OFFSET + 4;
    public static final int CRC_OFFSET = MAGIC_OFFSET + 1;
    public static final int ATTRIBUTES_OFFSET = CRC_OFFSET + 4;
    public static final int LAST_OFFSET_DELTA_OFFSET = ATTRIBUTES_OFFSET + 2;
    public static final int BASE_TIMESTAMP_OFFSET = LAST_OFFSET_DELTA_OFFSET + 4;
    public static final int MAX_TIMESTAMP_OFFSET = BASE_TIMESTAMP_OFFSET + 8;
    public static final int PRODUCER_ID_OFFSET = MAX_TIMESTAMP_OFFSET + 8;
    public static final int PRODUCER_EPOCH_OFFSET = PRODUCER_ID_OFFSET + 8;
    public static final int BASE_SEQUENCE_OFFSET = PRODUCER_EPOCH_OFFSET + 2;
    public static final int RECORD_COUNT_OFFSET = BASE_SEQUENCE_OFFSET + 4;
    public static final int RECORDS_OFFSET = RECORD_COUNT_OFFSET + 4;

    /** Header bytes before the records: 61. */
    public static final int HEADER_LENGTH = RECORDS_OFFSET;
    /** The batch length field counts the bytes after it: at least 49. */
    public static final int LOG_OVERHEAD = BATCH_LENGTH_OFFSET + 4;

    public static final byte MAGIC_V2 = 2;

    public static final int COMPRESSION_MASK = 0x07;
    public static final int TIMESTAMP_TYPE_MASK = 0x08;
    public static final int TRANSACTIONAL_MASK = 0x10;
    public static final int CONTROL_MASK = 0x20;
    public static final int DELETE_HORIZON_MASK = 0x40;

    public static final long NO_PRODUCER_ID = -1L;
    public static final short NO_PRODUCER_EPOCH = -1;
    public static final int NO_SEQUENCE = -1;
    public static final int NO_PARTITION_LEADER_EPOCH = -1;
    public static final long NO_TIMESTAMP = -1L;

    private RecordBatchDescriptor()
    {
    }
}
