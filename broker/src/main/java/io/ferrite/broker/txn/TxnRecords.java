package io.ferrite.broker.txn;

import io.ferrite.wire.ProtocolException;
import io.ferrite.wire.Varints;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;

import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The keys and values of {@code __transaction_state}, byte for byte as Kafka 4.4's generated
 * {@code TransactionLogKey} / {@code TransactionLogValue} write them (so Kafka's
 * {@code TransactionLog.read} and {@code DumpLogSegments --transaction-log-decoder} read ours).
 * Big-endian throughout.
 * <pre>
 * key:      int16 record type = 0 | int16 length | UTF-8 transactional id
 * value v0: int16 0 | int64 producerId | int16 producerEpoch | int32 timeoutMs | int8 state
 *           | int32 topic count (-1 = null) { int16 length | topic | int32 count { int32 partition } }
 *           | int64 lastUpdateTimestamp | int64 startTimestamp
 * value v1: int16 1 | the same fields, arrays and strings compact (uvarint length + 1, 0 = null),
 *           each topic ending with an empty tagged-field section (uvarint 0)
 *           | uvarint tag count { uvarint tag | uvarint size | value }, in tag order, each only when
 *           not its default: 0 prevProducerId int64 (-1), 1 nextProducerId int64 (-1),
 *           2 clientTransactionVersion int16 (0), 3 nextProducerEpoch int16 (-1; never set by 4.4)
 * </pre>
 * The partitions are null in an Empty state's value (an empty array otherwise, Complete*'s); topics
 * are written in name order and partitions in number order (Kafka's order is its hash sets'; a
 * reader sees the same set either way). A tombstone (null value) removes the id.
 */
public final class TxnRecords
{
    public static final short KEY_TYPE = 0;
    private static final int PREV_PRODUCER_ID_TAG = 0;
    private static final int NEXT_PRODUCER_ID_TAG = 1;
    private static final int CLIENT_TV_TAG = 2;

    private TxnRecords()
    {
    }

    /** The {@code __transaction_state} value version a cluster at this {@code transaction.version} level writes (Kafka's {@code transactionLogValueVersion}). */
    public static short valueVersion(final short transactionVersion)
    {
        return (short)(transactionVersion >= 1 ? 1 : 0);
    }

    public static byte[] key(final String transactionalId)
    {
        final byte[] id = transactionalId.getBytes(StandardCharsets.UTF_8);
        final ExpandableArrayBuffer b = new ExpandableArrayBuffer(4 + id.length);
        b.putShort(0, KEY_TYPE, ByteOrder.BIG_ENDIAN);
        b.putShort(2, (short)id.length, ByteOrder.BIG_ENDIAN);
        b.putBytes(4, id);
        return copy(b, 4 + id.length);
    }

    /**
     * The value of a transition at {@code version} 0 or 1. Version 0 has no tagged fields: the
     * producer id links are left out and a client transaction version other than 0 is refused, as
     * Kafka's serializer refuses it.
     */
    public static byte[] value(final TxnTransit t, final short version)
    {
        if (version != 0 && version != 1)
        {
            throw new IllegalArgumentException("value version " + version);
        }
        if (t.state() == TxnState.EMPTY && !t.partitions().isEmpty())
        {
            throw new IllegalStateException("an Empty transaction has no partitions: " + t);
        }
        if (version == 0 && t.clientTransactionVersion() != 0)
        {
            throw new IllegalStateException("value version 0 cannot hold client transaction version " + t.clientTransactionVersion());
        }
        final boolean flexible = version == 1;
        final Writer w = new Writer();
        w.int16(version).int64(t.producerId()).int16(t.producerEpoch()).int32(t.timeoutMs()).int8(t.state().id());
        if (t.state() == TxnState.EMPTY)
        {
            w.count(flexible, -1);
        }
        else
        {
            final Map<String, List<Integer>> byTopic = byTopic(t.partitions());
            w.count(flexible, byTopic.size());
            for (final Map.Entry<String, List<Integer>> e : byTopic.entrySet())
            {
                w.string(flexible, e.getKey()).count(flexible, e.getValue().size());
                for (final int p : e.getValue())
                {
                    w.int32(p);
                }
                if (flexible)
                {
                    w.uvarint(0);
                }
            }
        }
        w.int64(t.lastUpdateTimestamp()).int64(t.startTimestamp());
        if (flexible)
        {
            final boolean prev = t.prevProducerId() != -1;
            final boolean next = t.nextProducerId() != -1;
            final boolean tv = t.clientTransactionVersion() != 0;
            w.uvarint((prev ? 1 : 0) + (next ? 1 : 0) + (tv ? 1 : 0));
            if (prev)
            {
                w.uvarint(PREV_PRODUCER_ID_TAG).uvarint(8).int64(t.prevProducerId());
            }
            if (next)
            {
                w.uvarint(NEXT_PRODUCER_ID_TAG).uvarint(8).int64(t.nextProducerId());
            }
            if (tv)
            {
                w.uvarint(CLIENT_TV_TAG).uvarint(2).int16(t.clientTransactionVersion());
            }
        }
        return copy(w.b, w.p);
    }

    private static Map<String, List<Integer>> byTopic(final Set<TxnPartition> partitions)
    {
        final Map<String, List<Integer>> byTopic = new TreeMap<>();
        for (final TxnPartition tp : partitions)
        {
            byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition());
        }
        byTopic.values().forEach(l -> l.sort(null));
        return byTopic;
    }

    /** The transactional id of a key, or null when the key is not a transaction record's (another record type). */
    public static String readKey(final DirectBuffer buffer, final int offset, final int length)
    {
        final Reader r = new Reader(buffer, offset, offset + length);
        if (r.int16() != KEY_TYPE)
        {
            return null;
        }
        return r.string(false, "TransactionalId");
    }

    /** The version of a value (its first two bytes). */
    public static short readValueVersion(final DirectBuffer buffer, final int offset, final int length)
    {
        return new Reader(buffer, offset, offset + length).int16();
    }

    /**
     * A value (version 0 or 1) as the transit it holds; {@code lastProducerEpoch} is -1, as
     * Kafka loads it. Unknown tagged fields are skipped; an unknown version or state is refused.
     */
    public static TxnTransit readValue(final DirectBuffer buffer, final int offset, final int length)
    {
        final Reader r = new Reader(buffer, offset, offset + length);
        final short version = r.int16();
        if (version != 0 && version != 1)
        {
            throw new ProtocolException("TransactionLogValue", "unknown version " + version);
        }
        final boolean flexible = version == 1;
        final long producerId = r.int64();
        final short epoch = r.int16();
        final int timeoutMs = r.int32();
        final byte stateId = r.int8();
        final TxnState state = TxnState.ofId(stateId);
        if (state == null)
        {
            throw new ProtocolException("TransactionStatus", "unknown state " + stateId);
        }
        final Set<TxnPartition> partitions = new HashSet<>();
        final int topics = r.count(flexible, "TransactionPartitions");
        for (int i = 0; i < topics; i++)
        {
            final String topic = r.string(flexible, "Topic");
            final int n = r.count(flexible, "PartitionIds");
            for (int j = 0; j < n; j++)
            {
                partitions.add(new TxnPartition(topic, r.int32()));
            }
            if (flexible)
            {
                r.skipTaggedFields(null);
            }
        }
        final long lastUpdate = r.int64();
        final long start = r.int64();
        final long[] tagged = {-1, -1, 0};
        if (flexible)
        {
            r.skipTaggedFields(tagged);
        }
        return new TxnTransit(producerId, tagged[0], tagged[1], epoch, TxnMetadata.NO_EPOCH, timeoutMs, state,
            state == TxnState.EMPTY ? Set.of() : partitions, start, lastUpdate, (short)tagged[2]);
    }

    private static byte[] copy(final DirectBuffer b, final int length)
    {
        final byte[] bytes = new byte[length];
        b.getBytes(0, bytes);
        return bytes;
    }

    private static final class Writer
    {
        final ExpandableArrayBuffer b = new ExpandableArrayBuffer(128);
        int p;

        Writer int8(final byte v)
        {
            b.putByte(p, v);
            p += 1;
            return this;
        }

        Writer int16(final short v)
        {
            b.putShort(p, v, ByteOrder.BIG_ENDIAN);
            p += 2;
            return this;
        }

        Writer int32(final int v)
        {
            b.putInt(p, v, ByteOrder.BIG_ENDIAN);
            p += 4;
            return this;
        }

        Writer int64(final long v)
        {
            b.putLong(p, v, ByteOrder.BIG_ENDIAN);
            p += 8;
            return this;
        }

        Writer uvarint(final int v)
        {
            b.checkLimit(p + 5);
            p += Varints.putUnsignedVarint(b, p, v);
            return this;
        }

        /** An array's count: -1 is null. */
        Writer count(final boolean flexible, final int n)
        {
            return flexible ? uvarint(n + 1) : int32(n);
        }

        Writer string(final boolean flexible, final String s)
        {
            final byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
            if (flexible)
            {
                uvarint(bytes.length + 1);
            }
            else
            {
                int16((short)bytes.length);
            }
            b.putBytes(p, bytes);
            p += bytes.length;
            return this;
        }
    }

    private static final class Reader
    {
        private final DirectBuffer b;
        private final int limit;
        private int p;

        Reader(final DirectBuffer b, final int offset, final int limit)
        {
            this.b = b;
            this.p = offset;
            this.limit = limit;
        }

        private int take(final int n, final String field)
        {
            if (n < 0 || p + n > limit)
            {
                throw new ProtocolException(field, "truncated");
            }
            final int at = p;
            p += n;
            return at;
        }

        byte int8()
        {
            return b.getByte(take(1, "int8"));
        }

        short int16()
        {
            return b.getShort(take(2, "int16"), ByteOrder.BIG_ENDIAN);
        }

        int int32()
        {
            return b.getInt(take(4, "int32"), ByteOrder.BIG_ENDIAN);
        }

        long int64()
        {
            return b.getLong(take(8, "int64"), ByteOrder.BIG_ENDIAN);
        }

        int uvarint(final String field)
        {
            final long packed = Varints.readUnsignedVarint(b, p, limit, field);
            p += Varints.size(packed);
            return Varints.value(packed);
        }

        /** An array's count; a null array counts 0. */
        int count(final boolean flexible, final String field)
        {
            final int n = flexible ? uvarint(field) - 1 : int32();
            if (n < -1 || n > limit - p)
            {
                throw new ProtocolException(field, "bad count " + n);
            }
            return Math.max(n, 0);
        }

        String string(final boolean flexible, final String field)
        {
            final int n = flexible ? uvarint(field) - 1 : int16();
            if (n < 0)
            {
                throw new ProtocolException(field, "null or negative length");
            }
            final int at = take(n, field);
            return b.getStringWithoutLengthUtf8(at, n);
        }

        /** Skips a tagged-field section, keeping in {@code known} (prev id, next id, client TV) the ones it knows. */
        void skipTaggedFields(final long[] known)
        {
            final int n = uvarint("tagged fields");
            for (int i = 0; i < n; i++)
            {
                final int tag = uvarint("tag");
                final int size = uvarint("tag size");
                if (known != null && tag == PREV_PRODUCER_ID_TAG && size == 8)
                {
                    known[0] = int64();
                }
                else if (known != null && tag == NEXT_PRODUCER_ID_TAG && size == 8)
                {
                    known[1] = int64();
                }
                else if (known != null && tag == CLIENT_TV_TAG && size == 2)
                {
                    known[2] = int16();
                }
                else
                {
                    take(size, "tag " + tag);
                }
            }
        }
    }
}
