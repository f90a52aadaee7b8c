package io.ferrite.broker.e2e;

import io.ferrite.broker.Errors;
import io.ferrite.broker.api.TxnVerifier;
import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.broker.txn.NodeRequests;
import io.ferrite.broker.txn.RemoteVerifier;
import io.ferrite.testing.Await;
import io.ferrite.wire.message.ApiKeys;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A partition leader's produce verifications go to the transactional id's coordinator node batched as Kafka 4.4's
 * AddPartitionsToTxnManager sends them (issue 14): one AddPartitionsToTxn v5 carries every question queued for that node
 * when its lane takes the first (many transactional ids, each answered on its own), one request in flight per node; two
 * questions of one id go in two requests. A real broker stands in for the coordinator's node behind a {@link GatedProxy},
 * which holds the first request so that the others are certainly queued meanwhile; the requests are counted by the proxy
 * and by the broker's request metrics.
 */
class VerifyBatchesTest
{
    private static final String TOPIC = "batched-verifications";

    /** An open transaction: its id, producer id and epoch. */
    private record Open(String id, long producerId, short epoch)
    {
    }

    @TempDir
    Path dir;

    @Test
    void theQuestionsQueuedForACoordinatorNodeGoInOneRequestEachTransactionAnsweredOnItsOwn() throws Exception
    {
        final TxnVerifier notHere = (id, pid, epoch, topics, partitions, count, add, waker) ->
        {
            throw new AssertionError("the local coordinator asked about " + id);
        };
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
            GatedProxy proxy = new GatedProxy(Integer.parseInt(broker.bootstrap().split(":")[1])))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short)1))).all().get(30, TimeUnit.SECONDS);
            final PartitionOwnership.Located coordinator = new PartitionOwnership.Located(Errors.NONE, 7, "127.0.0.1", proxy.port());
            final RemoteVerifier verifier = new RemoteVerifier(notHere, id -> coordinator, 1,
                new NodeRequests(FetcherSettings.KAFKA_DEFAULTS, "verify-batches-test", 64 * 1024));
            final List<KafkaProducer<String, String>> producers = new ArrayList<>();
            try
            {
                final Open[] open = new Open[4];
                for (int t = 0; t < open.length; t++)
                {
                    open[t] = openTransaction(broker, admin, "verified-" + t, producers); // partition 0 in each
                }
                final long before = RequestCounts.of(broker.dir, ApiKeys.ADD_PARTITIONS_TO_TXN.id);

                final TxnVerifier.Verification held = ask(verifier, open[0], false, 0);
                Await.await(() -> proxy.requests() == 1, Duration.ofSeconds(30), "the first question at the proxy");
                final TxnVerifier.Verification one = ask(verifier, open[1], false, 0);
                final TxnVerifier.Verification two = ask(verifier, open[2], false, 0, 1);
                final TxnVerifier.Verification added = ask(verifier, open[3], true, 1);
                final TxnVerifier.Verification oneAgain = ask(verifier, open[1], false, 1);
                proxy.pass(3);
                for (final TxnVerifier.Verification v : List.of(held, one, two, added, oneAgain))
                {
                    Await.await(v::done, Duration.ofSeconds(60), "the coordinator's answer");
                }
                assertEquals(Errors.NONE, held.error(0));
                assertEquals(Errors.NONE, one.error(0), "partition 0 is in verified-1's transaction");
                assertEquals(Errors.NONE, two.error(0), "partition 0 is in verified-2's transaction");
                assertEquals(Errors.TRANSACTION_ABORTABLE, two.error(1), "partition 1 is not (verify only adds nothing)");
                assertEquals(Errors.NONE, added.error(0), "partition 1 added to verified-3's transaction (transaction version 2)");
                assertEquals(Errors.TRANSACTION_ABORTABLE, oneAgain.error(0), "partition 1 is not in verified-1's transaction");
                assertEquals(3, proxy.requests(), "the held question; verified-1, 2 and 3 in one; verified-1's second in the next");
                assertEquals(3, RequestCounts.of(broker.dir, ApiKeys.ADD_PARTITIONS_TO_TXN.id) - before,
                    "AddPartitionsToTxn requests the coordinator's node received");

                proxy.pass(1);
                final TxnVerifier.Verification after = ask(verifier, open[3], false, 1);
                Await.await(after::done, Duration.ofSeconds(60), "the coordinator's answer");
                assertEquals(Errors.NONE, after.error(0), "partition 1 in verified-3's transaction after the add");
            }
            finally
            {
                verifier.close();
                producers.forEach(p -> p.close(Duration.ofSeconds(5)));
            }
        }
    }

    /**
     * Review M2: a question too large for the lane's frame (20 000 partitions, some 80 KB encoded) fails alone; the
     * connection is kept, and the question queued behind it is sent and answered (it failed NETWORK_EXCEPTION with it).
     */
    @Test
    void aQuestionTooLargeForTheFrameFailsAloneAndTheOneBehindItIsAnswered() throws Exception
    {
        final TxnVerifier notHere = (id, pid, epoch, topics, partitions, count, add, waker) ->
        {
            throw new AssertionError("the local coordinator asked about " + id);
        };
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
            GatedProxy proxy = new GatedProxy(Integer.parseInt(broker.bootstrap().split(":")[1])))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short)1))).all().get(30, TimeUnit.SECONDS);
            final PartitionOwnership.Located coordinator = new PartitionOwnership.Located(Errors.NONE, 7, "127.0.0.1", proxy.port());
            final RemoteVerifier verifier = new RemoteVerifier(notHere, id -> coordinator, 1,
                new NodeRequests(FetcherSettings.KAFKA_DEFAULTS, "verify-batches-test", 64 * 1024));
            final List<KafkaProducer<String, String>> producers = new ArrayList<>();
            try
            {
                final Open[] open = new Open[3];
                for (int t = 0; t < open.length; t++)
                {
                    open[t] = openTransaction(broker, admin, "sized-" + t, producers); // partition 0 in each
                }
                final TxnVerifier.Verification held = ask(verifier, open[0], false, 0);
                Await.await(() -> proxy.requests() == 1, Duration.ofSeconds(30), "the first question at the proxy");
                final TxnVerifier.Verification huge = ask(verifier, open[1], false, new int[20_000]);
                final TxnVerifier.Verification small = ask(verifier, open[2], false, 0);
                proxy.pass(3);
                for (final TxnVerifier.Verification v : List.of(held, huge, small))
                {
                    Await.await(v::done, Duration.ofSeconds(60), "answered or failed");
                }
                assertEquals(Errors.NONE, held.error(0));
                assertEquals(Errors.NETWORK_EXCEPTION, huge.error(0), "not sent: larger than a request frame");
                assertEquals(Errors.NONE, small.error(0), "partition 0 is in sized-2's transaction");
                assertEquals(2, proxy.requests(), "the held question, then the small one (the huge one never sent)");
            }
            finally
            {
                verifier.close();
                producers.forEach(p -> p.close(Duration.ofSeconds(5)));
            }
        }
    }

    /** A produce's question of {@code txn} about {@code partitions} of the topic: verify only, or an add. */
    private static TxnVerifier.Verification ask(final RemoteVerifier verifier, final Open txn, final boolean add,
        final int... partitions)
    {
        final String[] topics = new String[partitions.length];
        java.util.Arrays.fill(topics, TOPIC);
        return verifier.verify(txn.id(), txn.producerId(), txn.epoch(), topics, partitions,
            partitions.length, add, () -> { });
    }

    /** A kafka-clients producer's transaction left open with a record on partition 0; its id and epoch. */
    private static Open openTransaction(final RunningBroker broker, final Admin admin, final String id,
        final List<KafkaProducer<String, String>> producers) throws Exception
    {
        final KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            broker.bootstrap(), ProducerConfig.TRANSACTIONAL_ID_CONFIG, id), new StringSerializer(), new StringSerializer());
        producers.add(producer);
        producer.initTransactions();
        producer.beginTransaction();
        producer.send(new ProducerRecord<>(TOPIC, 0, "k", id)).get(30, TimeUnit.SECONDS);
        final TransactionDescription d = admin.describeTransactions(List.of(id)).description(id).get(30, TimeUnit.SECONDS);
        return new Open(id, d.producerId(), (short)d.producerEpoch());
    }
}
