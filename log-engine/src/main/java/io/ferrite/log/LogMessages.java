package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;

import java.io.IOException;

/**
 * The messages of the append and read paths' failures, built here rather than in the hot methods that report
 * them: javac's inline string concatenation (the build's {@code -XDstringConcat=inline}, issue 17) turns each
 * concatenation into a StringBuilder chain, which would grow those methods past the JIT's inlining limits.
 * Every method here runs only on a failure (or a failed assertion).
 */
final class LogMessages
{
    private LogMessages()
    {
    }

    static String secondWriter(final PartitionLog log)
    {
        return "second writer on " + log + ": " + Thread.currentThread();
    }

    static String closed(final PartitionLog log)
    {
        return "log " + log + " is closed";
    }

    static String failed(final String what, final PartitionLog log, final Throwable ex)
    {
        return what + log + ": " + ex;
    }

    static String fsyncFailed(final PartitionLog log, final Throwable failure)
    {
        return "an fsync of " + log + " failed, it takes no appends until a restart: " + failure;
    }

    static IllegalStateException claimState(final String what, final PartitionLog log)
    {
        return new IllegalStateException(what + log);
    }

    static IllegalStateException claimOpen(final PartitionLog log)
    {
        return new IllegalStateException("a claim is open on " + log + ": commit or abort it first");
    }

    static String claimTooSmall(final int maxLength, final int header)
    {
        return "A claim of " + maxLength + " bytes cannot hold a record batch (" + header + " bytes at least)";
    }

    static String cannotClaim(final int maxLength, final PartitionLog log, final IOException ex)
    {
        return "cannot claim " + maxLength + " bytes in " + log + ": " + ex;
    }

    static String batchOverClaim(final int length, final int capacity)
    {
        return "A batch of " + length + " bytes in a claim of " + capacity;
    }

    static String changedAfterCrc(final PartitionLog log)
    {
        return "the batch in the claim on " + log + " was changed after its CRC was computed";
    }

    static String indexAbortFailed(final long producerId, final PartitionLog log, final Exception ex)
    {
        return "cannot index the aborted transaction of producer " + producerId + " in " + log + ": " + ex;
    }

    static String notUncommitted(final long baseOffset)
    {
        return "A claimed batch must carry base offset " + BatchClaim.UNCOMMITTED +
            " until its commit (build it with BatchClaim.wrap), not " + baseOffset;
    }

    static String corrupt(final int check)
    {
        return "Record batch is corrupt (check " + check + ")";
    }

    static String countMismatch(final int count, final int lastOffsetDelta)
    {
        return "Record batch declares " + count + " records but a last offset delta of " + lastOffsetDelta;
    }

    static String controlFromClient(final String log)
    {
        return "Clients are not allowed to write control records in topic partition " + log;
    }

    static String offsetDelta(final int i, final int offsetDelta)
    {
        return "Record " + i + " has offset delta " + offsetDelta;
    }

    static String timestampOutOfRange(final long ts, final int i, final long low, final long high)
    {
        return "Timestamp " + ts + " of message with offset " + i + " is out of range. The timestamp should be within [" +
            low + ", " + high + "]";
    }

    static String smallerEpoch(final long producerId, final short epoch, final short lastEpoch)
    {
        return "Epoch of producer " + producerId + " is " + epoch + ", which is smaller than the last seen epoch " + lastEpoch;
    }

    static String epochOf(final RecordBatch batch, final short lastEpoch)
    {
        return smallerEpoch(batch.producerId(), batch.producerEpoch(), lastEpoch);
    }

    // the general shapes, for the messages used once

    /** {@code a + x + b}. */
    static String text(final String a, final Object x, final String b)
    {
        return a + x + b;
    }


    static String newEpochSequence(final long producerId, final short epoch, final int first, final short current)
    {
        return "Invalid sequence number for new epoch of producer " + producerId + ": " + epoch + " (request epoch), " + first +
            " (seq. number), " + current + " (current producer epoch)";
    }

    static String markerEpoch(final long producerId, final long offset, final short epoch, final boolean epochBump,
        final short current)
    {
        return "Epoch of producer " + producerId + " at offset " + offset + " is " + epoch + ", which is " +
            (epochBump ? "<=" : "<") + " the last seen epoch " + current + " (TV" + (epochBump ? 2 : 1) + ")";
    }

    static String zombieCoordinator(final long producerId, final long offset, final int coordinatorEpoch, final int current)
    {
        return "Invalid coordinator epoch for producerId " + producerId + " at offset " + offset + ": " + coordinatorEpoch +
            " (zombie), " + current + " (current)";
    }

    static String noRoom(final Object path, final int length, final int position)
    {
        return "segment " + path + " has no room for " + length + " bytes at " + position;
    }

    static IllegalArgumentException noPartition(final String topic, final int partition)
    {
        return new IllegalArgumentException("no partition " + topic + "-" + partition);
    }

    static String outOfOrder(final long producerId, final int first, final int last, final String lastIs)
    {
        return "Out of order sequence number for producer " + producerId + ": " + first + " (incoming seq. number), " + last + lastIs;
    }

    static String expectedTransactional(final long producerId, final long txnFirstOffset)
    {
        return "Expected transactional write from producer " + producerId + " (its transaction opened at offset " +
            txnFirstOffset + ")";
    }

    static String verifiedTxnEnded(final long producerId)
    {
        return "Record was not part of an ongoing transaction: producer " + producerId +
            "'s transaction ended on this partition after it was verified";
    }

    static String notFromZero(final long producerId, final int first)
    {
        return "Invalid sequence number for producer " + producerId + ": " + first + " (incoming seq. number). " +
            "Expected sequence 0 for transactions v2 idempotent producer with no existing state.";
    }

    static IllegalStateException claimMisplaced(final int position, final int size)
    {
        return new IllegalStateException("a claim at " + position + " of a segment of " + size + " bytes");
    }

    static IllegalArgumentException scratchTooSmall(final int capacity)
    {
        return new IllegalArgumentException("a scratch buffer of " + capacity + " bytes holds no index entry");
    }

    static String followerMagic(final byte magic)
    {
        return "a record batch with magic " + magic + ": only magic 2 is supported";
    }

    static String followerCorrupt(final int check)
    {
        return "a corrupt record batch (check " + check + ")";
    }

    static String followerCrc(final int crc)
    {
        return "Record is corrupt (stored crc = " + Integer.toUnsignedString(crc) + ")";
    }

    static String followerTooLarge(final int size, final int segmentBytes)
    {
        return "Message batch size is " + size + " bytes, which exceeds the maximum configured segment size of " + segmentBytes;
    }

    static String followerDelta(final int lastOffsetDelta)
    {
        return "a record batch with last offset delta " + lastOffsetDelta;
    }

    static String followerOffsets(final boolean first, final long base, final long expected)
    {
        return first ? "First offset " + base + " is less than the next offset " + expected
            : "Out of order offsets: base offset " + base + " after last offset " + (expected - 1);
    }

    static String followerNotTransactional(final long producerId, final long baseOffset, final PartitionLog log,
        final long txnFirstOffset)
    {
        return "Expected transactional write from producer " + producerId + " at offset " + baseOffset + " in " + log +
            " (its transaction opened at offset " + txnFirstOffset + ")";
    }
}
