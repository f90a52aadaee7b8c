package io.ferrite.broker.cluster;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.e2e.RequestCounts;
import io.ferrite.testing.Await;
import io.ferrite.wire.message.ApiKeys;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ConcurrentTransactionsException;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The leader's retry of a produce's add (issue 14, review M1 of markers14) through the production wiring, on three
 * Ferrite brokers in cluster mode (child JVMs, {@link ThreeNodes}): the broker's settings
 * ({@code add.partitions.to.txn.retry.backoff.ms}, {@code add.partitions.to.txn.retry.backoff.max.ms}) read by
 * {@link ClusterMode} into its {@code RemoteVerifier}, a kafka-clients 4.4 transactional producer (transaction version
 * 2: Produce v12+, here v13, whose leader adds the partition) whose partition is led by another node than its transactional id's
 * coordinator, the leader's AddPartitionsToTxn v5 to the coordinator's node, and the produce's deferred answer.
 *
 * <p>The producer commits a transaction and at once sends into the next one, to partition {@value #SENT}-0 led by node
 * L; the coordinator is node C. The race with the commit's markers is made certain: the transaction also holds a record
 * of {@value #HELD}-0, led by C, whose {@code min.insync.replicas} is raised to 3 before the commit while its ISR is 2
 * (the third node, M, SIGKILLed at the start), so its commit marker (acks=all) is refused NOT_ENOUGH_REPLICAS and sent
 * again after its backoff until the setting is lowered back to 2: the transaction stays PrepareCommit, and every add of
 * the next one is answered CONCURRENT_TRANSACTIONS, for as long as the test holds it. The producer retries a produce
 * once at most ({@code retries=1}, the least an idempotent producer takes), so that what it is answered shows:
 * <ul>
 * <li>a bound of 30 s: L asks C again while the marker is held (at least three AddPartitionsToTxn at C for one produce,
 * which the client sent once — it sends no AddPartitionsToTxn at transaction version 2), the send is not answered
 * meanwhile, and succeeds once the marker is written: no CONCURRENT_TRANSACTIONS reached the producer, which sent it once
 * (one Produce at L). Three rounds, each round's record read back once.</li>
 * <li>a bound of 0: the same send fails with ConcurrentTransactionsException while the transaction is still
 * PrepareCommit, and C received exactly one AddPartitionsToTxn per Produce L received (the client's try and its one
 * retry): asked once each time, never again.</li>
 * </ul>
 * The first fails when the wiring is broken (the verifier given a fixed {@code Retries(20, 0)} in {@code ClusterMode}, or
 * the add asked from Produce v14 only; from v13 only changes nothing here, as kafka-clients 4.4 sends v13).
 */
@Tag("slow") // three broker JVMs, a kill and the controller's fencing (broker.session.timeout.ms, 9 s): about a minute each
final class RemoteVerifierRetryClusterTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(90);
    /** The topic the next transaction's first send goes to, led by L. */
    private static final String SENT = "retried-adds";
    /** The topic whose commit marker is held, led by C. */
    private static final String HELD = "held-markers";
    private static final String TXN_ID = "retried-adds-txn";
    private static final int ROUNDS = 3;

    @RegisterExtension
    final ThreeNodes cluster = new ThreeNodes();

    @Test
    void theLeaderAsksAgainWhileTheMarkersAreHeldAndTheSendSucceedsSentOnce() throws Exception
    {
        try (HeldCommits held = HeldCommits.start(cluster, "30000"))
        {
            final List<String> sent = new ArrayList<>();
            held.producer.beginTransaction();
            for (int round = 1; round <= ROUNDS; round++)
            {
                held.producer.send(new ProducerRecord<>(HELD, 0, "k", "held-" + round)).get(60, TimeUnit.SECONDS);
                held.hold();
                final long asked = held.adds();
                final long produced = held.produces();
                held.producer.commitTransaction(); // EndTxn v5: answered once PrepareCommit is written, the epoch bumped
                held.producer.beginTransaction();
                final Future<RecordMetadata> send = held.producer.send(new ProducerRecord<>(SENT, 0, "k", "sent-" + round));
                final int r = round;
                Await.await(() -> held.adds() - asked >= 3 || send.isDone(), DEADLINE,
                    () -> "round " + r + ": the leader " + held.leader + " to ask the coordinator " + held.coordinator +
                        " again (AddPartitionsToTxn received: " + (held.adds() - asked) + ")\n" + cluster.tails("marker"));
                assertFalse(send.isDone(), () -> "round " + r + ": the send not answered while the marker is held: " + outcome(send));
                assertEquals(TransactionState.PREPARE_COMMIT, held.state(), "round " + r + ": the transaction still ending meanwhile");
                held.release();
                final RecordMetadata md = send.get(60, TimeUnit.SECONDS); // no ConcurrentTransactionsException
                assertEquals(SENT + "-0", md.topic() + "-" + md.partition());
                sent.add("sent-" + round);
                assertEquals(1, held.produces() - produced, "round " + r + ": the producer sent the record once (the leader " +
                    "held the produce until the add was answered NONE; a CONCURRENT_TRANSACTIONS would have been retried)");
                System.out.printf("round %d: %d AddPartitionsToTxn at the coordinator's node %d for one Produce at %d%n", round,
                    held.adds() - asked, held.coordinator, held.leader);
            }
            held.producer.commitTransaction();
            assertEquals(sent, cluster.readAll(SENT, sent.size()), "each round's record once, in order");
        }
    }

    @Test
    void withABoundOfZeroTheLeaderAsksOncePerProduceAndTheProducerGetsConcurrentTransactions() throws Exception
    {
        try (HeldCommits held = HeldCommits.start(cluster, "0"))
        {
            held.producer.beginTransaction();
            held.producer.send(new ProducerRecord<>(HELD, 0, "k", "held")).get(60, TimeUnit.SECONDS);
            held.hold();
            final long asked = held.adds();
            final long produced = held.produces();
            held.producer.commitTransaction();
            held.producer.beginTransaction();
            final Future<RecordMetadata> send = held.producer.send(new ProducerRecord<>(SENT, 0, "k", "sent"));
            final ExecutionException failed = assertThrows(ExecutionException.class, () -> send.get(60, TimeUnit.SECONDS));
            assertInstanceOf(ConcurrentTransactionsException.class, failed.getCause(), failed.toString());
            assertEquals(TransactionState.PREPARE_COMMIT, held.state(), "the transaction still ending: the marker held");
            final long produces = held.produces() - produced;
            assertEquals(2, produces, "the producer's try and its one retry (retries=1)");
            assertEquals(produces, held.adds() - asked, "one AddPartitionsToTxn at the coordinator's node per Produce: " +
                "never asked again with a bound of 0");
            held.release();
        }
    }

    private static String outcome(final Future<RecordMetadata> send)
    {
        try
        {
            return String.valueOf(send.get(0, TimeUnit.SECONDS));
        }
        catch (final Exception ex)
        {
            return ex.toString();
        }
    }

    /**
     * Three nodes started with the retries' settings, the producer initialised (its coordinator C known), the topics
     * placed (SENT led by L, HELD by C, both on all three nodes), M killed and out of both ISRs.
     */
    private static final class HeldCommits implements AutoCloseable
    {
        final ThreeNodes cluster;
        final int coordinator;
        final int leader;
        final KafkaProducer<String, String> producer;
        private final Admin admin;
        private final KafkaProducer<String, String> probe;

        private HeldCommits(final ThreeNodes cluster, final int coordinator, final int leader,
            final KafkaProducer<String, String> producer, final Admin admin, final KafkaProducer<String, String> probe)
        {
            this.cluster = cluster;
            this.coordinator = coordinator;
            this.leader = leader;
            this.producer = producer;
            this.admin = admin;
            this.probe = probe;
        }

        static HeldCommits start(final ThreeNodes cluster, final String boundMs) throws Exception
        {
            cluster.start(Map.of(BrokerConfig.ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MS, "20",
                BrokerConfig.ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MAX_MS, boundMs));
            final KafkaProducer<String, String> producer = ThreeNodes.transactionalProducer(cluster.bootstrap(), TXN_ID,
                Map.of(ProducerConfig.RETRIES_CONFIG, "1", ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000",
                    ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "120000"));
            Admin admin = null;
            try
            {
                final int coordinator;
                try (Admin any = cluster.admin(1))
                {
                    coordinator = any.describeTransactions(List.of(TXN_ID)).description(TXN_ID).get(30, TimeUnit.SECONDS)
                        .coordinatorId();
                }
                final int leader = coordinator % 3 + 1;
                final int killed = leader % 3 + 1;
                admin = cluster.admin(coordinator);
                admin.createTopics(List.of(new NewTopic(SENT, Map.of(0, List.of(leader, coordinator, killed))),
                    new NewTopic(HELD, Map.of(0, List.of(coordinator, leader, killed))))).all().get(60, TimeUnit.SECONDS);
                awaitPartition(admin, SENT, p -> leads(p, leader) && p.isr().size() == 3, "led by " + leader + ", 3 in sync");
                awaitPartition(admin, HELD, p -> leads(p, coordinator) && p.isr().size() == 3, "led by " + coordinator + ", 3 in sync");
                cluster.kill(killed); // fenced by the controller after broker.session.timeout.ms: out of every ISR
                final Set<Integer> survivors = Set.of(coordinator, leader);
                awaitPartition(admin, SENT, p -> leads(p, leader) && ids(p.isr()).equals(survivors), "ISR " + survivors);
                awaitPartition(admin, HELD, p -> leads(p, coordinator) && ids(p.isr()).equals(survivors), "ISR " + survivors);
                final Properties props = new Properties();
                props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + cluster.brokerPort(coordinator));
                props.put(ProducerConfig.ACKS_CONFIG, "all");
                props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
                props.put(ProducerConfig.RETRIES_CONFIG, "0");
                props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "3000"); // see refused()
                props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "4000");
                return new HeldCommits(cluster, coordinator, leader, producer, admin,
                    new KafkaProducer<>(props, new StringSerializer(), new StringSerializer()));
            }
            catch (final Exception | Error ex)
            {
                producer.close(Duration.ofSeconds(5));
                if (admin != null)
                {
                    admin.close();
                }
                throw ex;
            }
        }

        /**
         * HELD's min.insync.replicas raised above its ISR (2), until C refuses an acks=all append to it: a commit marker
         * to it is refused from now on.
         */
        void hold() throws Exception
        {
            minInsyncReplicas("3");
            Await.await(() -> refused(), DEADLINE, () -> "the leader " + coordinator + " of " + HELD + "-0 to refuse acks=all");
        }

        /** HELD's min.insync.replicas back at 2: the held marker's next try is written. */
        void release() throws Exception
        {
            minInsyncReplicas("2");
        }

        /** The AddPartitionsToTxn requests the coordinator's node received so far. */
        long adds()
        {
            return received(coordinator, ApiKeys.ADD_PARTITIONS_TO_TXN.id);
        }

        /** The Produce requests the leader of SENT-0 received so far. */
        long produces()
        {
            return received(leader, ApiKeys.PRODUCE.id);
        }

        private long received(final int id, final int apiKey)
        {
            try
            {
                return RequestCounts.of(cluster.data(id), apiKey);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
        }

        TransactionState state() throws Exception
        {
            return admin.describeTransactions(List.of(TXN_ID)).description(TXN_ID).get(30, TimeUnit.SECONDS).state();
        }

        private void minInsyncReplicas(final String value) throws Exception
        {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, HELD), List.of(new AlterConfigOp(
                new ConfigEntry("min.insync.replicas", value), AlterConfigOp.OpType.SET)))).all().get(30, TimeUnit.SECONDS);
        }

        /**
         * Whether an acks=all record to HELD-0 is refused NOT_ENOUGH_REPLICAS. One accepted before is harmless; one
         * appended just before the change waits for a high watermark that no longer moves (Kafka 4.4 holds it while the
         * ISR is below min.insync.replicas) and times out: not yet either.
         */
        private boolean refused() throws Exception
        {
            try
            {
                probe.send(new ProducerRecord<>(HELD, 0, "probe", "probe")).get(30, TimeUnit.SECONDS);
                return false;
            }
            catch (final ExecutionException ex)
            {
                if (ex.getCause() instanceof NotEnoughReplicasException)
                {
                    return true;
                }
                if (ex.getCause() instanceof org.apache.kafka.common.errors.TimeoutException)
                {
                    return false;
                }
                throw ex;
            }
        }

        private static void awaitPartition(final Admin admin, final String topic, final Predicate<TopicPartitionInfo> wanted,
            final String what)
        {
            Await.await(() ->
            {
                final TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
                return wanted.test(d.partitions().get(0));
            }, DEADLINE, () -> topic + "-0 " + what);
        }

        private static boolean leads(final TopicPartitionInfo p, final int id)
        {
            return p.leader() != null && p.leader().id() == id;
        }

        private static Set<Integer> ids(final List<org.apache.kafka.common.Node> nodes)
        {
            return nodes.stream().map(org.apache.kafka.common.Node::id).collect(Collectors.toSet());
        }

        @Override
        public void close()
        {
            producer.close(Duration.ofSeconds(10));
            probe.close(Duration.ofSeconds(5));
            admin.close();
        }
    }
}
