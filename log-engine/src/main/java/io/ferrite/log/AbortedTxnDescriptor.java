package io.ferrite.log;

/**
 * Layout of one entry of a segment's {@code .txnindex}: Kafka's {@code AbortedTxn} (message schema
 * version 0), prefixed with its version as {@code MessageUtil.toVersionPrefixedByteBuffer} writes it,
 * big-endian, 34 bytes, no padding, no checksum (the index is rebuildable from the log):
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |     Version (int16) = 0       |   Producer Id (int64) ...     |  0, 2
 *  +-------------------------------+                               |
 *  |                                                               |
 *  +-------------------------------+-------------------------------+
 *  |  ... Producer Id              |   First Offset (int64) ...    |  10  the transaction's first batch
 *  +-------------------------------+                               |      (may lie in an earlier segment)
 *  |                                                               |
 *  +-------------------------------+-------------------------------+
 *  |  ... First Offset             |   Last Offset (int64) ...     |  18  the ABORT marker's offset,
 *  +-------------------------------+                               |      in this segment
 *  |                                                               |
 *  +-------------------------------+-------------------------------+
 *  |  ... Last Offset              | Last Stable Offset (int64)... |  26  the partition's LSO once the
 *  +-------------------------------+                               |      marker completed the txn
 *  |                                                               |
 *  +-------------------------------+-------------------------------+
 *  |  ... Last Stable Offset       |                                  34
 *  +-------------------------------+
 * </pre>
 * Entries follow each other with strictly increasing last offsets; the file holds nothing else.
 */
final class AbortedTxnDescriptor
{
    static final int VERSION_OFFSET = 0;
    static final int PRODUCER_ID_OFFSET = VERSION_OFFSET + 2;
    static final int FIRST_OFFSET_OFFSET = PRODUCER_ID_OFFSET + 8;
    static final int LAST_OFFSET_OFFSET = FIRST_OFFSET_OFFSET + 8;
    static final int LAST_STABLE_OFFSET_OFFSET = LAST_OFFSET_OFFSET + 8;
    /** 34 bytes an entry. */
    static final int ENTRY_LENGTH = LAST_STABLE_OFFSET_OFFSET + 8;

    /** The only version of the entry Kafka 4.4 reads or writes. */
    static final short VERSION = 0;

    private AbortedTxnDescriptor()
    {
    }
}
