package io.ferrite.broker.cluster;

import io.ferrite.broker.e2e.RequestCounts;
import io.ferrite.testing.Await;
import io.ferrite.wire.message.ApiKeys;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The transaction coordinator's markers batched per leader on three Ferrite brokers in cluster mode (issue 14, child
 * JVMs, {@link ThreeNodes}): a kafka-clients transactional producer commits transactions over a topic of six partitions
 * (replication factor 3) led by the three nodes (some node other than the coordinator's leads several); each commit ends
 * with one WriteTxnMarkers request to each other node that leads some of its partitions (Kafka 4.4's
 * TransactionMarkerChannelManager: every marker queued for a broker in one request), where it was one request per
 * partition — counted by each node's request metrics, at most one more per failed try of a marker to its partitions that
 * the coordinator logged (a retriable answer: sent again after its backoff) — and read_committed sees every record of
 * every transaction. The coordinator's node receives at least one
 * AddPartitionsToTxn per commit and other leader (each leader's verification of the transaction's first produce to it);
 * the commit loop's time and how many it received are printed (figures for the README: the retries among them depend on
 * the race with the markers, {@link RemoteVerifierRetryClusterTest} makes them certain).
 */
@Tag("slow") // three broker JVMs: about a minute
final class MarkerBatchesClusterTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(120);
    private static final String TOPIC = "batched-commits";
    private static final String TXN_ID = "batched-commits-txn";
    private static final int PARTITIONS = 6;
    private static final int TRANSACTIONS = 20;

    @RegisterExtension
    final ThreeNodes cluster = new ThreeNodes();

    @Test
    void aCommitEndsWithOneMarkerRequestToEachOtherLeaderAndReadCommittedSeesEveryPartition() throws Exception
    {
        cluster.start();
        final Map<Integer, Integer> leaders = new TreeMap<>(); // partition -> leader
        try (Admin admin = cluster.admin(1))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short)3))).all().get(60, TimeUnit.SECONDS);
            final TopicDescription topic = Await.awaitValue(() -> describeTopic(admin),
                t -> t != null && t.partitions().stream().allMatch(p -> p.leader() != null), DEADLINE,
                () -> TOPIC + "'s partitions to have leaders");
            topic.partitions().forEach(p -> leaders.put(p.partition(), p.leader().id()));
        }
        final KafkaProducer<String, String> producer = ThreeNodes.transactionalProducer(cluster.bootstrap(), TXN_ID);
        try
        {
            commit(producer, 0); // the first: the coordinator loaded, the lanes made
            final int coordinator;
            try (Admin admin = cluster.admin(1))
            {
                coordinator = admin.describeTransactions(List.of(TXN_ID)).description(TXN_ID).get(30, TimeUnit.SECONDS).coordinatorId();
                awaitNothingOpen(admin);
            }
            final Map<Integer, Long> ledBy = leaders.values().stream().collect(Collectors.groupingBy(id -> id, TreeMap::new,
                Collectors.counting()));
            assertTrue(ledBy.entrySet().stream().anyMatch(e -> e.getKey() != coordinator && e.getValue() > 1),
                "another node than the coordinator " + coordinator + " leads several partitions: " + leaders);

            final Map<Integer, Long> markersBefore = requests(ApiKeys.WRITE_TXN_MARKERS.id);
            final Map<Integer, Long> verificationsBefore = requests(ApiKeys.ADD_PARTITIONS_TO_TXN.id);
            final long start = System.nanoTime();
            for (int txn = 1; txn <= TRANSACTIONS; txn++)
            {
                commit(producer, txn);
            }
            final long loopNs = System.nanoTime() - start;
            try (Admin admin = cluster.admin(1))
            {
                awaitNothingOpen(admin); // the last commit's markers written
            }
            final Map<Integer, Long> markers = delta(requests(ApiKeys.WRITE_TXN_MARKERS.id), markersBefore);
            final Map<Integer, Long> verifications = delta(requests(ApiKeys.ADD_PARTITIONS_TO_TXN.id), verificationsBefore);
            System.out.printf("markers: coordinator %d, partitions led by node %s; WriteTxnMarkers requests received per node over %d " +
                "commits %s (one per partition: %s); AddPartitionsToTxn at the coordinator's node %d; %.1f ms per transaction " +
                "(%d records, commit, the next one's first produce waits for the markers)%n", coordinator, ledBy, TRANSACTIONS, markers,
                ledBy.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> e.getKey() == coordinator ? 0 :
                    e.getValue() * TRANSACTIONS, (a, b) -> a, TreeMap::new)), verifications.get(coordinator),
                loopNs / 1e6 / TRANSACTIONS, PARTITIONS);
            // each transaction's first produce to each other leader is verified by an add at the coordinator's node: at least
            // one AddPartitionsToTxn per commit and other leader. More come from the leaders' retries while the last markers
            // are written and the client's retries, as the race with the markers goes: printed above, not asserted
            // (RemoteVerifierRetryClusterTest holds the markers to make the retries certain)
            final long otherLeaders = ledBy.keySet().stream().filter(id -> id != coordinator).count();
            assertTrue(verifications.get(coordinator) >= TRANSACTIONS * otherLeaders, "AddPartitionsToTxn at the coordinator's " +
                "node " + coordinator + ": " + verifications + ", at least one per commit and other leader (" + otherLeaders + ")");
            // a marker the leader answered retriably (NOT_ENOUGH_REPLICAS while a follower lags on a loaded machine, say)
            // is sent again after its backoff: each failed try the coordinator logged may be one request more (review L3)
            final Map<Integer, Integer> retried = retriedPerLeader(leaders);
            try (Admin admin = cluster.admin(1))
            {
                final Map<Integer, Integer> now = new TreeMap<>();
                describeTopic(admin).partitions().forEach(p -> now.put(p.partition(), p.leader() == null ? -1 : p.leader().id()));
                assertEquals(leaders, now, "the partitions' leaders did not move meanwhile (the counts below are per leader)");
            }
            for (int id = 1; id <= 3; id++)
            {
                final long least = id == coordinator || !ledBy.containsKey(id) ? 0 : TRANSACTIONS;
                final long most = least == 0 ? 0 : least + retried.getOrDefault(id, 0);
                final long received = markers.get(id);
                assertTrue(received >= least && received <= most, "WriteTxnMarkers requests node " + id + " received: " +
                    received + ", expected " + least + " (one per commit) plus at most " + (most - least) + " (the failed tries " +
                    "logged for its partitions); coordinator " + coordinator + ", leaders " + leaders + ": " + markers + "\n" +
                    cluster.tails("marker"));
            }
        }
        finally
        {
            producer.close(Duration.ofSeconds(10));
        }
        final Set<String> expected = new TreeSet<>();
        for (int txn = 0; txn <= TRANSACTIONS; txn++)
        {
            for (int p = 0; p < PARTITIONS; p++)
            {
                expected.add(txn + ":" + p);
            }
        }
        assertEquals(expected, readCommitted(expected.size()), "read_committed: every partition of every transaction");
    }

    private static void commit(final KafkaProducer<String, String> producer, final int txn) throws Exception
    {
        producer.beginTransaction();
        for (int p = 0; p < PARTITIONS; p++)
        {
            producer.send(new ProducerRecord<>(TOPIC, p, "k", txn + ":" + p));
        }
        producer.commitTransaction();
    }

    /**
     * Per leader: the failed tries of the markers to its partitions, as the coordinator logged them when each was written
     * at last ("the marker of ... written after N failed tries").
     */
    private Map<Integer, Integer> retriedPerLeader(final Map<Integer, Integer> leaders) throws IOException
    {
        final Pattern written = Pattern.compile("the marker of " + TXN_ID + " to TxnPartition\\[topic=" + TOPIC +
            ", partition=(\\d+)\\] written after (\\d+) failed tries");
        final Map<Integer, Integer> retried = new TreeMap<>();
        for (final String line : cluster.logLines("failed tries"))
        {
            final Matcher m = written.matcher(line);
            if (m.find())
            {
                retried.merge(leaders.get(Integer.parseInt(m.group(1))), Integer.parseInt(m.group(2)), Integer::sum);
            }
        }
        return retried;
    }

    /** Each node's requests of API {@code apiKey} received so far. */
    private Map<Integer, Long> requests(final int apiKey) throws IOException
    {
        final Map<Integer, Long> counts = new TreeMap<>();
        for (int id = 1; id <= 3; id++)
        {
            counts.put(id, RequestCounts.of(cluster.data(id), apiKey));
        }
        return counts;
    }

    private static Map<Integer, Long> delta(final Map<Integer, Long> after, final Map<Integer, Long> before)
    {
        final Map<Integer, Long> d = new TreeMap<>();
        after.forEach((id, n) -> d.put(id, n - before.get(id)));
        return d;
    }

    /** Waits until every partition's last stable offset is at its end (the last transaction's markers are all written). */
    private void awaitNothingOpen(final Admin admin)
    {
        final Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < PARTITIONS; p++)
        {
            latest.put(new TopicPartition(TOPIC, p), OffsetSpec.latest());
        }
        Await.await(() -> offsets(admin.listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all()
            .get(30, TimeUnit.SECONDS)).equals(offsets(admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS))), DEADLINE,
            () -> "every partition's last stable offset at its end\n" + cluster.tails("marker"));
    }

    private static Map<TopicPartition, Long> offsets(final Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> infos)
    {
        return infos.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
    }

    private static TopicDescription describeTopic(final Admin admin) throws InterruptedException
    {
        try
        {
            return admin.describeTopics(List.of(TOPIC)).allTopicNames().get(30, TimeUnit.SECONDS).get(TOPIC);
        }
        catch (final java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException ex)
        {
            return null;
        }
    }

    /** Every record read_committed reads from the beginning of every partition, up to {@code count}. */
    private Set<String> readCommitted(final int count)
    {
        final Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        final Set<String> read = new TreeSet<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer()))
        {
            final List<TopicPartition> all = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++)
            {
                all.add(new TopicPartition(TOPIC, p));
            }
            consumer.assign(all);
            Await.await(() ->
            {
                for (final ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200)))
                {
                    read.add(r.value());
                }
                return read.size() >= count;
            }, DEADLINE, () -> count + " records read_committed, read " + read.size());
        }
        return read;
    }
}
