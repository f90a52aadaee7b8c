package io.ferrite.broker.e2e;

import io.ferrite.broker.Errors;
import io.ferrite.broker.api.TxnVerifier;
import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.broker.txn.NodeRequests;
import io.ferrite.broker.txn.RemoteVerifier;
import io.ferrite.testing.Await;
import io.ferrite.testing.LoopbackPorts;
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
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A produce's verification by the transactional id's coordinator on another node (issue 14/12): {@link RemoteVerifier}
 * sends AddPartitionsToTxn v5 (the broker's form) over {@link NodeRequests} to a real broker standing in for the
 * coordinator's node, whose answer wakes the asker: a partition in the kafka-clients producer's open transaction is
 * NONE, one not in it TRANSACTION_ABORTABLE (verify only); an add (transaction version 2, produce v12) is NONE and the
 * partition is in the transaction afterwards; a coordinator nobody listens for is NETWORK_EXCEPTION; no coordinator
 * located is its error at once, nothing sent. The local coordinator is never asked for an id whose coordinator is elsewhere.
 */
class RemoteVerifierTest
{
    private static final String TOPIC = "remote-verified";
    private static final String TXN_ID = "remote-verified-txn";

    @TempDir
    Path dir;

    @Test
    void theCoordinatorOnAnotherNodeAnswersTheVerificationOverTheNetwork() throws Exception
    {
        final TxnVerifier notHere = (id, pid, epoch, topics, partitions, count, add, waker) ->
        {
            throw new AssertionError("the local coordinator asked about " + id);
        };
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short)1))).all().get(30, TimeUnit.SECONDS);
            final KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrap(), ProducerConfig.TRANSACTIONAL_ID_CONFIG, TXN_ID), new StringSerializer(), new StringSerializer());
            final String[] at = broker.bootstrap().split(":");
            final PartitionOwnership.Located coordinator = new PartitionOwnership.Located(Errors.NONE, 7, at[0], Integer.parseInt(at[1]));
            final RemoteVerifier verifier = new RemoteVerifier(notHere, id -> coordinator, 1,
                new NodeRequests(FetcherSettings.KAFKA_DEFAULTS, "remote-verifier-test", 64 * 1024));
            try
            {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(TOPIC, 0, "k", "open")).get(30, TimeUnit.SECONDS); // partition 0 in it
                final TransactionDescription open = admin.describeTransactions(List.of(TXN_ID)).description(TXN_ID)
                    .get(30, TimeUnit.SECONDS);
                final long producerId = open.producerId();
                final short epoch = (short)open.producerEpoch();

                final AtomicInteger wakes = new AtomicInteger();
                final TxnVerifier.Verification both = verifier.verify(TXN_ID, producerId, epoch, new String[] {TOPIC, TOPIC},
                    new int[] {0, 1}, 2, false, wakes::incrementAndGet);
                awaitDone(both);
                assertEquals(Errors.NONE, both.error(0), "partition 0 is in the transaction");
                assertEquals(Errors.TRANSACTION_ABORTABLE, both.error(1), "partition 1 is not (verify only adds nothing)");
                assertTrue(wakes.get() >= 1, "the asker woken by the answer");

                final TxnVerifier.Verification add = verifier.verify(TXN_ID, producerId, epoch, new String[] {TOPIC},
                    new int[] {1}, 1, true, () -> { });
                awaitDone(add);
                assertEquals(Errors.NONE, add.error(0), "partition 1 added (transaction version 2)");
                final TxnVerifier.Verification added = verifier.verify(TXN_ID, producerId, epoch, new String[] {TOPIC},
                    new int[] {1}, 1, false, () -> { });
                awaitDone(added);
                assertEquals(Errors.NONE, added.error(0), "partition 1 in the transaction after the add");

                final PartitionOwnership.Located nobody = new PartitionOwnership.Located(Errors.NONE, 8, "127.0.0.1",
                    LoopbackPorts.take(1)[0]);
                final RemoteVerifier unreachable = new RemoteVerifier(notHere, id -> nobody, 1,
                    new NodeRequests(FetcherSettings.KAFKA_DEFAULTS, "remote-verifier-test-2", 64 * 1024));
                try
                {
                    final TxnVerifier.Verification refused = unreachable.verify(TXN_ID, producerId, epoch, new String[] {TOPIC},
                        new int[] {0}, 1, false, () -> { });
                    awaitDone(refused);
                    assertEquals(Errors.NETWORK_EXCEPTION, refused.error(0), "a connection refused (the produce: NOT_ENOUGH_REPLICAS)");
                }
                finally
                {
                    unreachable.close();
                }

                final RemoteVerifier unplaced = new RemoteVerifier(notHere,
                    id -> new PartitionOwnership.Located(Errors.COORDINATOR_NOT_AVAILABLE, -1, "", -1), 1,
                    new NodeRequests(FetcherSettings.KAFKA_DEFAULTS, "remote-verifier-test-3", 64 * 1024));
                try
                {
                    final TxnVerifier.Verification none = unplaced.verify(TXN_ID, producerId, epoch, new String[] {TOPIC},
                        new int[] {0}, 1, false, () -> { });
                    assertTrue(none.done(), "no coordinator located: answered at once");
                    assertEquals(Errors.COORDINATOR_NOT_AVAILABLE, none.error(0));
                }
                finally
                {
                    unplaced.close();
                }
                producer.abortTransaction();
            }
            finally
            {
                verifier.close();
                producer.close(Duration.ofSeconds(5));
            }
        }
    }

    private static void awaitDone(final TxnVerifier.Verification v)
    {
        Await.await(v::done, Duration.ofSeconds(60), "the coordinator's answer");
    }
}
