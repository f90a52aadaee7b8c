package io.ferrite.broker.txn;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.apache.kafka.coordinator.transaction.TransactionLog;
import org.apache.kafka.coordinator.transaction.TransactionMetadata;
import org.apache.kafka.coordinator.transaction.generated.TransactionLogValue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * {@code __transaction_state} records against Kafka 4.4's own classes, both ways: Kafka's generated
 * serializer writes the bytes we write, Kafka's {@code TransactionLog.read} reads ours, and we read
 * what Kafka writes (its partitions in any order, tagged fields we do not know).
 */
class TxnRecordsPropertyTest
{
    @Property(tries = 300)
    void keysAreKafkasAndReadBothWays(@ForAll("ids") final String id)
    {
        final byte[] ours = TxnRecords.key(id);
        assertArrayEquals(TransactionLog.keyToBytes(id), ours);
        assertEquals(id, TxnRecords.readKey(new UnsafeBuffer(ours), 0, ours.length));
        final TransactionLog.ReadResult tombstone = TransactionLog.read(ByteBuffer.wrap(ours), null);
        assertEquals(new TransactionLog.TxnTombstone(id), tombstone);
    }

    @Property(tries = 500)
    void valuesAreByteForByteKafkas(@ForAll("transits") final TxnTransit t, @ForAll("versions") final short version)
    {
        final TxnTransit written = version == 0 ? v0(t) : t;
        final byte[] ours = TxnRecords.value(written, version);
        assertArrayEquals(MessageUtil.toVersionPrefixedBytes(version, kafkaValue(written, null, false)), ours);
    }

    @Property(tries = 500)
    void kafkaReadsOurs(@ForAll("ids") final String id, @ForAll("transits") final TxnTransit t, @ForAll("versions") final short version)
    {
        final TxnTransit written = version == 0 ? v0(t) : t;
        final TransactionLog.ReadResult read = TransactionLog.read(ByteBuffer.wrap(TxnRecords.key(id)),
            ByteBuffer.wrap(TxnRecords.value(written, version)));
        final TransactionLog.TxnRecord record = assertInstanceOf(TransactionLog.TxnRecord.class, read);
        assertEquals(id, record.transactionId());
        final TransactionMetadata m = record.metadata();
        assertEquals(loaded(written), KafkaTxn.snapshot(m));
    }

    @Property(tries = 500)
    void weReadKafkas(@ForAll("transits") final TxnTransit t, @ForAll("versions") final short version, @ForAll final long seed,
        @ForAll final boolean unknownTags)
    {
        final TxnTransit written = version == 0 ? v0(t) : t;
        final byte[] kafka = MessageUtil.toVersionPrefixedBytes(version, kafkaValue(written, new Random(seed), unknownTags && version == 1));
        assertEquals(loaded(written), TxnRecords.readValue(new UnsafeBuffer(kafka), 0, kafka.length));
    }

    /** Kafka's TransactionLog.valueToBytes itself (its partition order is its hash set's: one partition keeps it fixed). */
    @Property(tries = 300)
    void kafkasTransactionLogWritesOurBytes(@ForAll("transits") final TxnTransit t, @ForAll("clusterVersions") final short clusterTv)
    {
        final short version = TxnRecords.valueVersion(clusterTv);
        final Set<TxnPartition> one = t.partitions().isEmpty() ? Set.of() : Set.of(t.partitions().iterator().next());
        TxnTransit written = new TxnTransit(t.producerId(), t.prevProducerId(), t.nextProducerId(), t.producerEpoch(), (short)-1,
            t.timeoutMs(), t.state(), one, t.startTimestamp(), t.lastUpdateTimestamp(), t.clientTransactionVersion());
        if (version == 0)
        {
            written = v0(written);
        }
        final byte[] kafka = TransactionLog.valueToBytes(KafkaTxn.transit(written),
            org.apache.kafka.server.common.TransactionVersion.fromFeatureLevel(clusterTv));
        // Kafka leaves the producer id links out at value version 0 even when set
        assertArrayEquals(kafka, TxnRecords.value(written, version));
    }

    /** What a version 0 value can hold: no producer id links, client transaction version 0. */
    private static TxnTransit v0(final TxnTransit t)
    {
        return new TxnTransit(t.producerId(), -1, -1, t.producerEpoch(), t.lastProducerEpoch(), t.timeoutMs(), t.state(),
            t.partitions(), t.startTimestamp(), t.lastUpdateTimestamp(), (short)0);
    }

    /** A written transit as it is read back: no last epoch, and an Empty state's partitions dropped. */
    private static TxnTransit loaded(final TxnTransit t)
    {
        return new TxnTransit(t.producerId(), t.prevProducerId(), t.nextProducerId(), t.producerEpoch(), (short)-1, t.timeoutMs(),
            t.state(), t.partitions(), t.startTimestamp(), t.lastUpdateTimestamp(), t.clientTransactionVersion());
    }

    /** Kafka's generated value; topics and partitions in order, or shuffled by {@code random} when given. */
    static TransactionLogValue kafkaValue(final TxnTransit t, final Random random, final boolean unknownTags)
    {
        List<TransactionLogValue.PartitionsSchema> partitions = null;
        if (t.state() != TxnState.EMPTY)
        {
            final Map<String, List<Integer>> byTopic = new TreeMap<>();
            t.partitions().forEach(p -> byTopic.computeIfAbsent(p.topic(), k -> new ArrayList<>()).add(p.partition()));
            partitions = new ArrayList<>();
            for (final Map.Entry<String, List<Integer>> e : byTopic.entrySet())
            {
                final List<Integer> ids = new ArrayList<>(e.getValue());
                Collections.sort(ids);
                partitions.add(new TransactionLogValue.PartitionsSchema().setTopic(e.getKey()).setPartitionIds(ids));
            }
            if (random != null)
            {
                Collections.shuffle(partitions, random);
                partitions.forEach(s -> Collections.shuffle(s.partitionIds(), random));
            }
        }
        final TransactionLogValue value = new TransactionLogValue().setProducerId(t.producerId())
            .setPreviousProducerId(t.prevProducerId()).setNextProducerId(t.nextProducerId()).setProducerEpoch(t.producerEpoch())
            .setTransactionTimeoutMs(t.timeoutMs()).setTransactionStatus(t.state().id()).setTransactionPartitions(partitions)
            .setTransactionLastUpdateTimestampMs(t.lastUpdateTimestamp()).setTransactionStartTimestampMs(t.startTimestamp())
            .setClientTransactionVersion(t.clientTransactionVersion());
        if (unknownTags)
        {
            // NextProducerEpoch (tag 3: no 4.4 coordinator sets it) and a tag of a later version
            value.setNextProducerEpoch((short)7);
            value.unknownTaggedFields().add(new RawTaggedField(9, new byte[] {1, 2, 3}));
        }
        return value;
    }

    @Provide
    Arbitrary<String> ids()
    {
        return Arbitraries.strings().ofMinLength(1).ofMaxLength(40).filter(s -> s.getBytes(java.nio.charset.StandardCharsets.UTF_8).length < 300);
    }

    @Provide
    Arbitrary<Short> versions()
    {
        return Arbitraries.of((short)0, (short)1);
    }

    @Provide
    Arbitrary<Short> clusterVersions()
    {
        return Arbitraries.of((short)0, (short)1, (short)2);
    }

    @Provide
    Arbitrary<TxnTransit> transits()
    {
        final Arbitrary<Long> ids = Arbitraries.oneOf(Arbitraries.just(-1L), Arbitraries.longs().between(0, Long.MAX_VALUE));
        final Arbitrary<TxnState> states = Arbitraries.of(TxnState.EMPTY, TxnState.ONGOING, TxnState.PREPARE_COMMIT,
            TxnState.PREPARE_ABORT, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT);
        final Arbitrary<Set<TxnPartition>> partitions = Combinators.combine(
            Arbitraries.of("orders", "payments", "__consumer_offsets", "t", "\u00e9t\u00e9"),
            Arbitraries.integers().between(0, 5000)).as(TxnPartition::new).set().ofMaxSize(12);
        final Arbitrary<long[]> times = Arbitraries.longs().between(-1, Long.MAX_VALUE).array(long[].class).ofSize(2);
        final Arbitrary<long[]> links = ids.array(long[].class).ofSize(3);
        return Combinators.combine(links, Arbitraries.shorts().between((short)0, Short.MAX_VALUE), Arbitraries.integers(), states,
            partitions, times, Arbitraries.of((short)0, (short)1, (short)2))
            .as((l, epoch, timeout, state, parts, ts, tv) -> new TxnTransit(Math.max(0, l[0]), l[1], l[2], epoch, (short)-1, timeout,
                state, state == TxnState.EMPTY ? Set.of() : parts, ts[0], ts[1], tv));
    }
}
