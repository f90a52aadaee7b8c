package io.ferrite.broker.group;

import io.ferrite.wire.ProtocolException;
import io.ferrite.wire.message.GroupMetadataKeyDecoder;
import io.ferrite.wire.message.GroupMetadataValueDecoder;
import io.ferrite.wire.message.GroupRecordTypes;
import io.ferrite.wire.message.OffsetCommitKeyDecoder;
import io.ferrite.wire.message.OffsetCommitValueDecoder;
import io.ferrite.wire.record.Record;
import org.agrona.DirectBuffer;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * One {@code __consumer_offsets} record read, in every key and value version Kafka 4.4's group
 * coordinator writes or reads (the decoders are generated from its schemas): a key is an int16 record
 * type and that type's key (version 0), a value an int16 version and the type's value at that
 * version. Types 0 and 1 are a committed offset (OffsetCommitKey; OffsetCommitValue 0-4, 4 flexible),
 * type 2 a classic group's metadata (GroupMetadataKey; GroupMetadataValue 0-4, 4 flexible); the
 * other types Kafka declares (KIP-848's ConsumerGroup* records, share and streams groups') are
 * {@link Kind#UNUSED}: their bytes are not read. Reusable: {@link #read} re-points it.
 *
 * <p>A record that cannot be read — no key, a key or value cut short or holding lengths past its
 * end, a record type Kafka does not declare, a value version above the type's highest — throws one
 * {@link ProtocolException} naming what is wrong; the whole record is read (key and value) before
 * anything is kept, so a bad record changes nothing.
 */
final class OffsetsTopicRecord
{
    enum Kind
    {
        OFFSET, GROUP, UNUSED
    }

    private final OffsetCommitKeyDecoder offsetKey = new OffsetCommitKeyDecoder();
    private final OffsetCommitValueDecoder offsetValue = new OffsetCommitValueDecoder();
    private final GroupMetadataKeyDecoder groupKey = new GroupMetadataKeyDecoder();
    private final GroupMetadataValueDecoder groupValue = new GroupMetadataValueDecoder();

    private Kind kind;
    private short type;
    private boolean tombstone;

    /** Reads {@code record}'s key and value; returns what it is. */
    Kind read(final Record record)
    {
        if (!record.hasKey())
        {
            throw new ProtocolException("key", "a record without a key");
        }
        final DirectBuffer buffer = record.buffer();
        type = prefix(buffer, record.keyOffset(), record.keyLength(), "record type");
        final String name = GroupRecordTypes.name(type);
        if (name == null)
        {
            throw new ProtocolException("key", "record type " + type + ", which Kafka 4.4 does not declare");
        }
        tombstone = !record.hasValue();
        final int keyEnd = record.keyOffset() + record.keyLength();
        if (type == OffsetCommitKeyDecoder.RECORD_TYPE || type == 0)
        {
            offsetKey.wrap(buffer, record.keyOffset() + 2, keyEnd, (short)0);
            if (!tombstone)
            {
                offsetValue.wrap(buffer, record.valueOffset() + 2, record.valueOffset() + record.valueLength(),
                    // type 0's value is LegacyOffsetCommitValue, version 0 only (OffsetCommitValue 0's layout), as Kafka 4.4 reads it
                    valueVersion(record, type == 0 ? GroupRecordTypes.highestValueVersion(0) : OffsetCommitValueDecoder.HIGHEST_VERSION));
            }
            kind = Kind.OFFSET;
        }
        else if (type == GroupMetadataKeyDecoder.RECORD_TYPE)
        {
            groupKey.wrap(buffer, record.keyOffset() + 2, keyEnd, (short)0);
            if (!tombstone)
            {
                groupValue.wrap(buffer, record.valueOffset() + 2, record.valueOffset() + record.valueLength(),
                    valueVersion(record, GroupMetadataValueDecoder.HIGHEST_VERSION));
            }
            kind = Kind.GROUP;
        }
        else
        {
            kind = Kind.UNUSED;
        }
        return kind;
    }

    /** The record type of the key read (for an {@link Kind#UNUSED} one, what to count it as). */
    short type()
    {
        return type;
    }

    /** Whether the record read has no value: it deletes its key. */
    boolean isTombstone()
    {
        return tombstone;
    }

    /** The group id of an {@link Kind#OFFSET} or {@link Kind#GROUP} record. */
    String groupId()
    {
        return kind == Kind.OFFSET ? offsetKey.group() : groupKey.group();
    }

    /** The topic and partition of an {@link Kind#OFFSET} record. */
    Group.TopicPartition topicPartition()
    {
        return new Group.TopicPartition(offsetKey.topic(), offsetKey.partition());
    }

    /** The committed offset of an {@link Kind#OFFSET} record with a value, kept at {@code recordOffset}. */
    Group.Offset offset(final long recordOffset)
    {
        return new Group.Offset(offsetValue.offset(), offsetValue.leaderEpoch(), offsetValue.metadata(), offsetValue.commitTimestamp(),
            recordOffset);
    }

    /** The protocol type of a {@link Kind#GROUP} record with a value. */
    String protocolType()
    {
        return groupValue.protocolType();
    }

    /** The generation of a {@link Kind#GROUP} record with a value. */
    int generation()
    {
        return groupValue.generation();
    }

    private short valueVersion(final Record record, final short highest)
    {
        final short version = prefix(record.buffer(), record.valueOffset(), record.valueLength(), "value version");
        if (version < 0 || version > highest)
        {
            throw new ProtocolException("value", GroupRecordTypes.name(type) + " value version " + version + ", outside the 0-"
                + highest + " Kafka 4.4 reads");
        }
        return version;
    }

    private static short prefix(final DirectBuffer buffer, final int offset, final int length, final String what)
    {
        if (length < 2)
        {
            throw new ProtocolException(what, length + " bytes, too short for the int16 " + what);
        }
        return buffer.getShort(offset, BIG_ENDIAN);
    }
}
