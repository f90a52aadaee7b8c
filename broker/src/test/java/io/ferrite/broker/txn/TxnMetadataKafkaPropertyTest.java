package io.ferrite.broker.txn;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.coordinator.transaction.TransactionMetadata;
import org.apache.kafka.server.common.TransactionVersion;

import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Ferrite's state machine and Kafka 4.4's {@code TransactionMetadata} driven side by side with the
 * same random transitions (prepare, then complete or cancel, from random starting states, epochs at
 * the edges): each prepare either fails in both or gives the same transit, and the two stay equal.
 */
class TxnMetadataKafkaPropertyTest
{
    private static final short[] EPOCHS = {-1, 0, 1, 2, 32765, 32766, 32767};
    private static final TxnState[] WRITTEN = {TxnState.EMPTY, TxnState.ONGOING, TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT,
        TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT};

    @Property(tries = 400)
    void sameTransitionsAsKafka(@ForAll final long seed)
    {
        final Random random = new Random(seed);
        final TxnTransit start = start(random);
        final TxnMetadata ours = new TxnMetadata("t", start);
        final TransactionMetadata kafka = KafkaTxn.metadata("t", start);
        TxnTransit lastOurs = null;
        for (int step = 0; step < 40; step++)
        {
            if (ours.hasPendingTransition() && lastOurs != null && random.nextInt(3) != 0)
            {
                if (random.nextInt(4) == 0 || lastOurs.state() == TxnState.DEAD || lastOurs.state() == TxnState.PREPARE_EPOCH_FENCE)
                {
                    ours.cancel();
                    kafka.pendingState(Optional.empty());
                }
                else
                {
                    final TxnTransit transit = lastOurs;
                    same(() -> {
                        ours.complete(transit);
                        return null;
                    }, () -> {
                        kafka.completeTransitionTo(KafkaTxn.transit(transit));
                        return null;
                    }, "complete " + transit);
                }
            }
            else
            {
                lastOurs = prepare(random, ours, kafka);
            }
            assertEquals(KafkaTxn.snapshot(kafka), ours.snapshot(), "step " + step);
            assertEquals(kafka.pendingState().map(KafkaTxn::state).orElse(null), ours.pendingState(), "step " + step);
        }
    }

    private static TxnTransit prepare(final Random random, final TxnMetadata ours, final TransactionMetadata kafka)
    {
        final long now = 1000 + random.nextInt(1000);
        final int timeout = 1 + random.nextInt(3) * 1000;
        final short tv = (short)random.nextInt(3);
        switch (random.nextInt(7))
        {
            case 0:
                return same(ours::prepareFenceProducerEpoch, () -> KafkaTxn.transit(kafka.prepareFenceProducerEpoch()), "fence");
            case 1:
                final boolean expected = random.nextBoolean();
                final short epoch = EPOCHS[random.nextInt(EPOCHS.length)];
                return same(() -> ours.prepareIncrementProducerEpoch(timeout, expected, epoch, now),
                    () -> KafkaTxn.transit(kafka.prepareIncrementProducerEpoch(timeout, expected ? Optional.of(epoch) : Optional.empty(), now)),
                    "increment " + expected + " " + epoch);
            case 2:
                final long pid = random.nextInt(5);
                final boolean record = random.nextBoolean();
                return same(() -> ours.prepareProducerIdRotation(pid, timeout, now, record),
                    () -> KafkaTxn.transit(kafka.prepareProducerIdRotation(pid, timeout, now, record)), "rotation");
            case 3:
                final TxnPartition tp = new TxnPartition("t" + random.nextInt(2), random.nextInt(3));
                return same(() -> ours.prepareAddPartitions(Set.of(tp), now, tv),
                    () -> KafkaTxn.transit(kafka.prepareAddPartitions(Set.of(new TopicPartition(tp.topic(), tp.partition())), now,
                        TransactionVersion.fromFeatureLevel(tv))), "add");
            case 4:
                final TxnState to = random.nextBoolean() ? TxnState.PREPARE_COMMIT : TxnState.PREPARE_ABORT;
                final long next = random.nextBoolean() ? -1 : 7;
                final boolean none = random.nextBoolean();
                return same(() -> ours.prepareAbortOrCommit(to, tv, next, now, none),
                    () -> KafkaTxn.transit(kafka.prepareAbortOrCommit(KafkaTxn.state(to), TransactionVersion.fromFeatureLevel(tv), next, now,
                        none)), "end " + to);
            case 5:
                return same(() -> ours.prepareComplete(now), () -> KafkaTxn.transit(kafka.prepareComplete(now)), "complete");
            default:
                return same(ours::prepareDead, () -> KafkaTxn.transit(kafka.prepareDead()), "dead");
        }
    }

    /** Both fail, or both give the same; returns ours (null when both failed). */
    private static TxnTransit same(final Supplier<TxnTransit> ours, final Supplier<TxnTransit> kafka, final String what)
    {
        TxnTransit o = null;
        TxnTransit k = null;
        RuntimeException oursFailed = null;
        RuntimeException kafkaFailed = null;
        try
        {
            o = ours.get();
        }
        catch (final RuntimeException ex)
        {
            oursFailed = ex;
        }
        try
        {
            k = kafka.get();
        }
        catch (final RuntimeException ex)
        {
            kafkaFailed = ex;
        }
        assertEquals(kafkaFailed == null, oursFailed == null, what + ": Kafka " + kafkaFailed + ", ours " + oursFailed);
        assertEquals(k, o, what);
        return o;
    }

    private static TxnTransit start(final Random random)
    {
        final TxnState state = WRITTEN[random.nextInt(WRITTEN.length)];
        final Set<TxnPartition> partitions = state == TxnState.EMPTY || random.nextBoolean() ? Set.of() : Set.of(new TxnPartition("t0", 0));
        final short epoch = EPOCHS[1 + random.nextInt(EPOCHS.length - 1)];
        final short last = EPOCHS[random.nextInt(EPOCHS.length)];
        return new TxnTransit(random.nextInt(3), random.nextBoolean() ? -1 : random.nextInt(3), random.nextBoolean() ? -1 : 9,
            epoch, last, 1 + random.nextInt(3) * 1000, state, partitions, state == TxnState.EMPTY ? -1 : 500, 500,
            (short)random.nextInt(3));
    }

}
