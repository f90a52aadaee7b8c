package io.ferrite.broker.e2e;

import io.ferrite.broker.Errors;
import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.broker.txn.MarkerRouting;
import io.ferrite.broker.txn.RemoteMarkers;
import io.ferrite.broker.txn.TxnPartition;
import io.ferrite.testing.Await;
import io.ferrite.testing.LoopbackPorts;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The transaction coordinator's markers to a partition led by another node (issue 14): {@link RemoteMarkers} sends a
 * WriteTxnMarkers over the node-to-node connection to a real broker (here a single node standing in for the leader),
 * whose answer comes back through {@link RemoteMarkers#drain}: an ABORT of a kafka-clients producer's open transaction
 * is answered NONE and ends it there (the last stable offset reaches the log end); a marker of a lower coordinator epoch
 * after it is TRANSACTION_COORDINATOR_FENCED (the partition keeps the highest per producer); a topic the leader does not have is
 * answered UNKNOWN_TOPIC_OR_PARTITION; a leader nobody listens for is REQUEST_TIMED_OUT (retried by the coordinator).
 */
class RemoteMarkersTest
{
    private static final String TOPIC = "remote-marked";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    @TempDir
    Path dir;

    @Test
    void aMarkerOverTheNetworkEndsTheTransactionAtTheLeaderAndErrorsComeBack() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1))).all().get(30, TimeUnit.SECONDS);
            final KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrap(), ProducerConfig.TRANSACTIONAL_ID_CONFIG, "remote-marked-txn"), new StringSerializer(),
                new StringSerializer());
            final LinkedBlockingQueue<Integer> answers = new LinkedBlockingQueue<>();
            final RemoteMarkers markers = new RemoteMarkers(FetcherSettings.KAFKA_DEFAULTS, 1, () -> { });
            try
            {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(TOPIC, 0, "k", "open")).get(30, TimeUnit.SECONDS); // left open
                final ProducerState open = admin.describeProducers(List.of(TP)).partitionResult(TP).get(30, TimeUnit.SECONDS)
                    .activeProducers().get(0);
                assertTrue(open.currentTransactionStartOffset().isPresent(), open.toString());
                final String[] at = broker.bootstrap().split(":");
                final MarkerRouting.Route leader = new MarkerRouting.Route(1, at[0], Integer.parseInt(at[1]));

                // an ABORT at the producer's epoch, transaction version 0 (the epoch at least the producer's), from a
                // coordinator loaded at leader epoch 5
                markers.send(new RemoteMarkers.Send(leader, new TxnPartition(TOPIC, 0), open.producerId(), (short)open.producerEpoch(),
                    5, false, (short)0, answers::add));
                assertEquals(Errors.NONE, answer(markers, answers), "the leader's answer for the partition");
                final Map<TopicPartition, OffsetSpec> latest = Map.of(TP, OffsetSpec.latest());
                Await.await(() -> admin.listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all().get(30,
                    TimeUnit.SECONDS).get(TP).offset() == admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).get(TP).offset(),
                    Duration.ofSeconds(30), "the last stable offset at the log end once the ABORT marker is written");

                // a deposed coordinator's (loaded at 4) marker arriving after it: fenced at the partition (H1 of txncoord's review)
                markers.send(new RemoteMarkers.Send(leader, new TxnPartition(TOPIC, 0), open.producerId(), (short)open.producerEpoch(),
                    4, true, (short)0, answers::add));
                assertEquals(Errors.TRANSACTION_COORDINATOR_FENCED, answer(markers, answers), "a lower coordinator epoch than 5");

                markers.send(new RemoteMarkers.Send(leader, new TxnPartition("no-such-topic", 0), open.producerId(),
                    (short)open.producerEpoch(), 0, false, (short)0, answers::add));
                assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION, answer(markers, answers));

                final MarkerRouting.Route nobody = new MarkerRouting.Route(2, "127.0.0.1", LoopbackPorts.take(1)[0]);
                markers.send(new RemoteMarkers.Send(nobody, new TxnPartition(TOPIC, 0), open.producerId(), (short)open.producerEpoch(),
                    0, false, (short)0, answers::add));
                assertEquals(Errors.REQUEST_TIMED_OUT, answer(markers, answers), "a connection refused: retried by the coordinator");
            }
            finally
            {
                markers.close();
                producer.close(Duration.ofSeconds(5));
            }
        }
    }

    /** Drains the markers' answers (as the coordinators' agent does each pass) until one is in. */
    private static short answer(final RemoteMarkers markers, final LinkedBlockingQueue<Integer> answers)
    {
        final Integer error = Await.awaitValue(() ->
        {
            markers.drain();
            return answers.poll();
        }, e -> e != null, Duration.ofSeconds(60), "the marker's answer");
        return error.shortValue();
    }
}
