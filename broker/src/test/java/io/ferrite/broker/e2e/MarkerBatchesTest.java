package io.ferrite.broker.e2e;

import io.ferrite.broker.Errors;
import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.broker.txn.MarkerRouting;
import io.ferrite.broker.txn.RemoteMarkers;
import io.ferrite.broker.txn.TxnPartition;
import io.ferrite.testing.Await;
import io.ferrite.wire.message.ApiKeys;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
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
 * broker stands in for the leader behind a {@link GatedProxy}, which holds the first request so that the others are
 * certainly queued meanwhile; the requests are counted by the proxy and by the broker's request metrics. Each partition's
 * error comes back to its own marker; a request whose connection is lost fails every marker in it (REQUEST_TIMED_OUT: the
 * coordinator sends each again after its backoff).
 */
class MarkerBatchesTest
{
    private static final String TOPIC = "batched-markers";
    private static final int PARTITIONS = 4;

    /** An open transaction: its id, producer id and epoch. */
    private record Open(String id, long producerId, short epoch)
    {
    }

    @TempDir
    Path dir;

    @Test
    void theMarkersQueuedForALeaderOfSeveralTransactionsGoInOneRequestEachPartitionAnsweredOnItsOwn() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
            GatedProxy proxy = new GatedProxy(port(broker)))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short)1))).all().get(30, TimeUnit.SECONDS);
            final List<KafkaProducer<String, String>> producers = new ArrayList<>();
            final RemoteMarkers markers = new RemoteMarkers(FetcherSettings.KAFKA_DEFAULTS, 2, () -> { });
            try
            {
                final Open[] open = new Open[3];
                for (int t = 0; t < open.length; t++)
                {
                    open[t] = openTransaction(broker, admin, "batched-" + t, producers);
                }
                final MarkerRouting.Route leader = new MarkerRouting.Route(1, "127.0.0.1", proxy.port());
                final Map<String, Integer> answers = new ConcurrentHashMap<>();
                final long before = RequestCounts.of(broker.dir, ApiKeys.WRITE_TXN_MARKERS.id);

                // transaction 0's COMMIT of partition 0 goes first, held by the proxy: its lane waits for the answer
                markers.send(send(leader, open[0], 0, true, answers));
                Await.await(() -> proxy.requests() == 1, Duration.ofSeconds(30), "the first request at the proxy");
                // meanwhile the rest of transaction 0, transaction 1's COMMIT and transaction 2's ABORT of every partition
                final List<RemoteMarkers.Send> queued = new ArrayList<>();
                IntStream.range(1, PARTITIONS).forEach(p -> queued.add(send(leader, open[0], p, true, answers)));
                IntStream.range(0, PARTITIONS).forEach(p -> queued.add(send(leader, open[1], p, true, answers)));
                markers.sendAll(queued);
                IntStream.range(0, PARTITIONS).forEach(p -> markers.send(send(leader, open[2], p, false, answers)));
                proxy.pass(2);

                Await.await(() ->
                {
                    markers.drain();
                    return answers.size() == 3 * PARTITIONS;
                }, Duration.ofSeconds(60), () -> "every marker answered: " + answers);
                answers.forEach((what, error) -> assertEquals(Errors.NONE, error.shortValue(), what));
                assertEquals(2, proxy.requests(), "the held request, then one for all eleven markers queued behind it");
                assertEquals(2, RequestCounts.of(broker.dir, ApiKeys.WRITE_TXN_MARKERS.id) - before,
                    "WriteTxnMarkers requests the leader received");

                // transactions 0 and 1 committed on every partition, 2 aborted: read_committed sees 0's and 1's records only
                final Set<String> expected = new TreeSet<>();
                for (int p = 0; p < PARTITIONS; p++)
                {
                    expected.add("batched-0/" + p);
                    expected.add("batched-1/" + p);
                }
                assertEquals(expected, readCommitted(broker, expected.size()));
                final Map<TopicPartition, OffsetSpec> latest = new java.util.HashMap<>();
                IntStream.range(0, PARTITIONS).forEach(p -> latest.put(new TopicPartition(TOPIC, p), OffsetSpec.latest()));
                for (final TopicPartition tp : latest.keySet())
                {
                    assertEquals(admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).get(tp).offset(),
                        admin.listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all().get(30, TimeUnit.SECONDS)
                            .get(tp).offset(), tp + ": its last stable offset at its end (nothing left open)");
                }
            }
            finally
            {
                markers.close();
                producers.forEach(p -> p.close(Duration.ofSeconds(5)));
            }
        }
    }

    @Test
    void aRequestWhoseConnectionIsLostFailsEveryMarkerInItForTheCoordinatorToSendAgain() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
            GatedProxy proxy = new GatedProxy(port(broker)))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short)1))).all().get(30, TimeUnit.SECONDS);
            final List<KafkaProducer<String, String>> producers = new ArrayList<>();
            final RemoteMarkers markers = new RemoteMarkers(FetcherSettings.KAFKA_DEFAULTS, 2, () -> { });
            try
            {
                final Open open = openTransaction(broker, admin, "cut-0", producers);
                final MarkerRouting.Route leader = new MarkerRouting.Route(1, "127.0.0.1", proxy.port());
                final Map<String, Integer> answers = new ConcurrentHashMap<>();
                markers.send(send(leader, open, 0, true, answers));
                Await.await(() -> proxy.requests() == 1, Duration.ofSeconds(30), "the first request at the proxy");
                final List<RemoteMarkers.Send> queued = new ArrayList<>();
                IntStream.range(1, PARTITIONS).forEach(p -> queued.add(send(leader, open, p, true, answers)));
                markers.sendAll(queued);
                proxy.pass(1); // the first answered; the batch of the three others is held
                Await.await(() -> proxy.requests() == 2, Duration.ofSeconds(30), "the batch at the proxy");
                proxy.cut();
                Await.await(() ->
                {
                    markers.drain();
                    return answers.size() == PARTITIONS;
                }, Duration.ofSeconds(60), () -> "every marker answered: " + answers);
                assertEquals(Errors.NONE, answers.get("cut-0/0").shortValue(), "the first, answered before the cut");
                for (int p = 1; p < PARTITIONS; p++)
                {
                    assertEquals(Errors.REQUEST_TIMED_OUT, answers.get("cut-0/" + p).shortValue(), "partition " + p + " of the lost request");
                }
            }
            finally
            {
                markers.close();
                producers.forEach(p -> p.close(Duration.ofSeconds(5)));
            }
        }
    }

    /**
     * Review M3: each partition's error goes to its own marker in a request of mixed answers. Producer a's marker for
     * partition 0 is held; behind it: producer b's marker at a stale epoch for partition 0 (INVALID_PRODUCER_EPOCH), a's
     * for partitions 1 and 2 (2 at a higher coordinator epoch: a marker entry of its own, which the leader answers in one
     * entry with a's others), b's real marker for partition 0 (never in a request with its stale one: the next request),
     * then a's for 3 and b's for 1 to 3.
     */
    @Test
    void mixedAnswersInOneRequestGoEachToItsOwnMarker() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
            GatedProxy proxy = new GatedProxy(port(broker)))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short)1))).all().get(30, TimeUnit.SECONDS);
            final List<KafkaProducer<String, String>> producers = new ArrayList<>();
            final RemoteMarkers markers = new RemoteMarkers(FetcherSettings.KAFKA_DEFAULTS, 2, () -> { });
            try
            {
                final Open a = openTransaction(broker, admin, "mixed-a", producers);
                openTransaction(broker, admin, "mixed-b", producers);
                final Open b = openTransaction(broker, admin, "mixed-b", producers); // fences the first: b's epoch is higher
                assertTrue(b.epoch() > 0, "b's producer epoch after its second initTransactions: " + b.epoch());
                final MarkerRouting.Route leader = new MarkerRouting.Route(1, "127.0.0.1", proxy.port());
                final Map<String, Integer> answers = new ConcurrentHashMap<>();
                markers.send(send(leader, "a0", a, 0, a.epoch(), 1, answers));
                Await.await(() -> proxy.requests() == 1, Duration.ofSeconds(30), "the first request at the proxy");
                markers.send(send(leader, "b0-stale", b, 0, (short)(b.epoch() - 1), 1, answers));
                markers.send(send(leader, "a1", a, 1, a.epoch(), 1, answers));
                markers.send(send(leader, "a2-ce2", a, 2, a.epoch(), 2, answers));
                markers.send(send(leader, "b0", b, 0, b.epoch(), 1, answers));
                markers.send(send(leader, "a3", a, 3, a.epoch(), 1, answers));
                IntStream.range(1, PARTITIONS).forEach(p -> markers.send(send(leader, "b" + p, b, p, b.epoch(), 1, answers)));
                proxy.pass(3);
                Await.await(() ->
                {
                    markers.drain();
                    return answers.size() == 9;
                }, Duration.ofSeconds(60), () -> "every marker answered: " + answers);
                final Map<String, Integer> expected = new java.util.TreeMap<>();
                List.of("a0", "a1", "a2-ce2", "a3", "b0", "b1", "b2", "b3").forEach(m -> expected.put(m, (int)Errors.NONE));
                expected.put("b0-stale", (int)Errors.INVALID_PRODUCER_EPOCH);
                assertEquals(expected, new java.util.TreeMap<>(answers), "each marker's own partition's answer");
                assertEquals(3, proxy.requests(), "the held a0; b0-stale, a1, a2-ce2; b0 and those behind it");
                assertEquals(Set.of("mixed-a/0", "mixed-a/1", "mixed-a/2", "mixed-a/3", "mixed-b/0", "mixed-b/1", "mixed-b/2",
                    "mixed-b/3"), readCommitted(broker, 8), "a's and b's second transaction committed on every partition");
            }
            finally
            {
                markers.close();
                producers.forEach(p -> p.close(Duration.ofSeconds(5)));
            }
        }
    }

    private static int port(final RunningBroker broker)
    {
        return Integer.parseInt(broker.bootstrap().split(":")[1]);
    }

    /** A kafka-clients producer's transaction left open with record {@code id/p} on every partition p; its id and epoch. */
    private static Open openTransaction(final RunningBroker broker, final Admin admin, final String id,
        final List<KafkaProducer<String, String>> producers) throws Exception
    {
        final KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            broker.bootstrap(), ProducerConfig.TRANSACTIONAL_ID_CONFIG, id), new StringSerializer(), new StringSerializer());
        producers.add(producer);
        producer.initTransactions();
        producer.beginTransaction();
        for (int p = 0; p < PARTITIONS; p++)
        {
            producer.send(new ProducerRecord<>(TOPIC, p, "k", id + "/" + p)).get(30, TimeUnit.SECONDS);
        }
        final TransactionDescription d = admin.describeTransactions(List.of(id)).description(id).get(30, TimeUnit.SECONDS);
        return new Open(id, d.producerId(), (short)d.producerEpoch());
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
