package io.ferrite.broker.e2e;

import io.ferrite.broker.Errors;
import io.ferrite.broker.e2e.ProxiedBroker.Open;
import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.broker.txn.MarkerRouting;
import io.ferrite.broker.txn.RemoteMarkers;
import io.ferrite.broker.txn.TxnPartition;
import io.ferrite.testing.Await;
import io.ferrite.wire.message.ApiKeys;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The transaction coordinator's markers to a leader on another node go as Kafka 4.4's TransactionMarkerChannelManager
 * sends them (issue 14): one WriteTxnMarkers carries every marker queued for that leader when its lane takes the first —
 * all partitions of a transaction and the markers of several transactions —, one request in flight per leader. A real
 * broker stands in for the leader behind a {@link GatedProxy} ({@link ProxiedBroker}), which holds the first request so
 * that the others are certainly queued meanwhile; the requests are counted by the proxy and by the broker's request
 * metrics. Each partition's error comes back to its own marker; a request whose connection is lost fails every marker in
 * it (REQUEST_TIMED_OUT: the coordinator sends each again after its backoff).
 */
class MarkerBatchesTest
{
    private static final String TOPIC = "batched-markers";
    private static final int PARTITIONS = 4;

    @TempDir
    Path dir;

    @Test
    void theMarkersQueuedForALeaderOfSeveralTransactionsGoInOneRequestEachPartitionAnsweredOnItsOwn() throws Exception
    {
        try (ProxiedBroker node = ProxiedBroker.start(dir, TOPIC, PARTITIONS, Map.of()))
        {
            final RemoteMarkers markers = node.closing(new RemoteMarkers(FetcherSettings.KAFKA_DEFAULTS, 2, () -> { }));
            final Open[] open = new Open[3];
            for (int t = 0; t < open.length; t++)
            {
                open[t] = node.openTransaction("batched-" + t);
            }
            final MarkerRouting.Route leader = new MarkerRouting.Route(1, "127.0.0.1", node.proxy.port());
            final Map<String, Integer> answers = new ConcurrentHashMap<>();
            final long before = node.received(ApiKeys.WRITE_TXN_MARKERS);

            // transaction 0's COMMIT of partition 0 goes first, held by the proxy: its lane waits for the answer
            markers.send(send(leader, open[0], 0, true, answers));
            node.awaitAtProxy(1, "the first request");
            // meanwhile the rest of transaction 0, transaction 1's COMMIT and transaction 2's ABORT of every partition
            final List<RemoteMarkers.Send> queued = new ArrayList<>();
            IntStream.range(1, PARTITIONS).forEach(p -> queued.add(send(leader, open[0], p, true, answers)));
            IntStream.range(0, PARTITIONS).forEach(p -> queued.add(send(leader, open[1], p, true, answers)));
            markers.sendAll(queued);
            IntStream.range(0, PARTITIONS).forEach(p -> markers.send(send(leader, open[2], p, false, answers)));
            node.proxy.pass(2);

            awaitAnswers(markers, answers, 3 * PARTITIONS);
            answers.forEach((what, error) -> assertEquals(Errors.NONE, error.shortValue(), what));
            assertEquals(2, node.proxy.requests(), "the held request, then one for all eleven markers queued behind it");
            assertEquals(2, node.received(ApiKeys.WRITE_TXN_MARKERS) - before, "WriteTxnMarkers requests the leader received");

            // transactions 0 and 1 committed on every partition, 2 aborted: read_committed sees 0's and 1's records only
            final Set<String> expected = new TreeSet<>();
            for (int p = 0; p < PARTITIONS; p++)
            {
                expected.add("batched-0/" + p);
                expected.add("batched-1/" + p);
            }
            assertEquals(expected, readCommitted(node.broker, expected.size()));
            final Map<TopicPartition, OffsetSpec> latest = new java.util.HashMap<>();
            IntStream.range(0, PARTITIONS).forEach(p -> latest.put(new TopicPartition(TOPIC, p), OffsetSpec.latest()));
            for (final TopicPartition tp : latest.keySet())
            {
                assertEquals(node.admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).get(tp).offset(),
                    node.admin.listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all().get(30, TimeUnit.SECONDS)
                        .get(tp).offset(), tp + ": its last stable offset at its end (nothing left open)");
            }
        }
    }

    @Test
    void aRequestWhoseConnectionIsLostFailsEveryMarkerInItForTheCoordinatorToSendAgain() throws Exception
    {
        try (ProxiedBroker node = ProxiedBroker.start(dir, TOPIC, PARTITIONS, Map.of()))
        {
            final RemoteMarkers markers = node.closing(new RemoteMarkers(FetcherSettings.KAFKA_DEFAULTS, 2, () -> { }));
            final Open open = node.openTransaction("cut-0");
            final MarkerRouting.Route leader = new MarkerRouting.Route(1, "127.0.0.1", node.proxy.port());
            final Map<String, Integer> answers = new ConcurrentHashMap<>();
            markers.send(send(leader, open, 0, true, answers));
            node.awaitAtProxy(1, "the first request");
            final List<RemoteMarkers.Send> queued = new ArrayList<>();
            IntStream.range(1, PARTITIONS).forEach(p -> queued.add(send(leader, open, p, true, answers)));
            markers.sendAll(queued);
            node.proxy.pass(1); // the first answered; the batch of the three others is held
            node.awaitAtProxy(2, "the batch");
            node.proxy.cut();
            awaitAnswers(markers, answers, PARTITIONS);
            assertEquals(Errors.NONE, answers.get("cut-0/0").shortValue(), "the first, answered before the cut");
            for (int p = 1; p < PARTITIONS; p++)
            {
                assertEquals(Errors.REQUEST_TIMED_OUT, answers.get("cut-0/" + p).shortValue(), "partition " + p + " of the lost request");
            }
        }
    }

    /**
     * Review M3: each partition's error goes to its own marker in a request of mixed answers; review L1: a marker that
     * cannot share the request (its producer's marker to its partition is in it) waits for the next one alone, those
     * queued behind it join. Producer a's marker for partition 0 is held; behind it: producer b's marker at a stale epoch
     * for partition 0 (INVALID_PRODUCER_EPOCH), a's for partitions 1 and 2 (2 at a higher coordinator epoch: a marker entry
     * of its own, which the leader answers in one entry with a's others), b's real marker for partition 0 (never in a
     * request with its stale one), then a's for 3 and b's for 1 to 3 — in the second request with the stale one: only b's
     * real marker for partition 0 is left for the third (before the fix, it and every marker behind it were).
     */
    @Test
    void mixedAnswersInOneRequestGoEachToItsOwnMarkerAndOnlyARepeatedKeyWaits() throws Exception
    {
        try (ProxiedBroker node = ProxiedBroker.start(dir, TOPIC, PARTITIONS, Map.of()))
        {
            final RemoteMarkers markers = node.closing(new RemoteMarkers(FetcherSettings.KAFKA_DEFAULTS, 2, () -> { }));
            final Open a = node.openTransaction("mixed-a");
            node.openTransaction("mixed-b");
            final Open b = node.openTransaction("mixed-b"); // fences the first: b's epoch is higher
            assertTrue(b.epoch() > 0, "b's producer epoch after its second initTransactions: " + b.epoch());
            final MarkerRouting.Route leader = new MarkerRouting.Route(1, "127.0.0.1", node.proxy.port());
            final Map<String, Integer> answers = new ConcurrentHashMap<>();
            markers.send(send(leader, "a0", a, 0, a.epoch(), 1, answers));
            node.awaitAtProxy(1, "the first request");
            markers.send(send(leader, "b0-stale", b, 0, (short)(b.epoch() - 1), 1, answers));
            markers.send(send(leader, "a1", a, 1, a.epoch(), 1, answers));
            markers.send(send(leader, "a2-ce2", a, 2, a.epoch(), 2, answers));
            markers.send(send(leader, "b0", b, 0, b.epoch(), 1, answers));
            markers.send(send(leader, "a3", a, 3, a.epoch(), 1, answers));
            IntStream.range(1, PARTITIONS).forEach(p -> markers.send(send(leader, "b" + p, b, p, b.epoch(), 1, answers)));
            node.proxy.pass(2);
            // before the fix: a0, b0-stale, a1 and a2-ce2 only, the rest held at the proxy with b0 (until the request timed out)
            awaitAnswers(markers, answers, 8);
            node.awaitAtProxy(3, "b0's request");
            final Map<String, Integer> expected = new java.util.TreeMap<>();
            List.of("a0", "a1", "a2-ce2", "a3", "b1", "b2", "b3").forEach(m -> expected.put(m, (int)Errors.NONE));
            expected.put("b0-stale", (int)Errors.INVALID_PRODUCER_EPOCH);
            assertEquals(expected, new java.util.TreeMap<>(answers), "each marker's own partition's answer, b0's request held");
            node.proxy.pass(1);
            awaitAnswers(markers, answers, 9);
            expected.put("b0", (int)Errors.NONE);
            assertEquals(expected, new java.util.TreeMap<>(answers), "each marker's own partition's answer");
            assertEquals(3, node.proxy.requests(), "the held a0; b0-stale, a1, a2-ce2, a3, b1-b3; b0");
            assertEquals(Set.of("mixed-a/0", "mixed-a/1", "mixed-a/2", "mixed-a/3", "mixed-b/0", "mixed-b/1", "mixed-b/2",
                "mixed-b/3"), readCommitted(node.broker, 8), "a's and b's second transaction committed on every partition");
        }
    }

    /** Waits until {@code count} markers (or more) are answered (the answers applied as the coordinators' agent applies them). */
    private static void awaitAnswers(final RemoteMarkers markers, final Map<String, Integer> answers, final int count)
    {
        Await.await(() ->
        {
            markers.drain();
            return answers.size() >= count;
        }, Duration.ofSeconds(60), () -> count + " markers answered: " + answers);
    }

    /**
     * The marker of {@code txn} for partition {@code p}, as the coordinator sends it (transaction version 0: at the
     * producer's epoch); its answer is put in {@code answers} under {@code id/p}.
     */
    private static RemoteMarkers.Send send(final MarkerRouting.Route leader, final Open txn, final int p,
        final boolean commit, final Map<String, Integer> answers)
    {
        final String what = txn.id() + "/" + p;
        return new RemoteMarkers.Send(leader, new TxnPartition(TOPIC, p), txn.producerId(), txn.epoch(), 1, commit,
            (short)0, error -> answers.put(what, error));
    }

    /** The COMMIT marker of {@code txn} for partition {@code p} at the epochs given; its answer goes in {@code answers} under {@code what}. */
    private static RemoteMarkers.Send send(final MarkerRouting.Route leader, final String what, final Open txn, final int p,
        final short epoch, final int coordinatorEpoch, final Map<String, Integer> answers)
    {
        return new RemoteMarkers.Send(leader, new TxnPartition(TOPIC, p), txn.producerId(), epoch, coordinatorEpoch, true,
            (short)0, error -> answers.put(what, error));
    }

    private static Set<String> readCommitted(final RunningBroker broker, final int count)
    {
        final List<TopicPartition> all = IntStream.range(0, PARTITIONS).mapToObj(p -> new TopicPartition(TOPIC, p)).toList();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
            broker.bootstrap(), ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed", ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
            "earliest"), new StringDeserializer(), new StringDeserializer()))
        {
            consumer.assign(all);
            final Set<String> read = new TreeSet<>();
            Await.await(() ->
            {
                for (final ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200)))
                {
                    read.add(r.value());
                }
                return read.size() >= count;
            }, Duration.ofSeconds(60), () -> count + " committed records read, read " + read);
            return read;
        }
    }
}
