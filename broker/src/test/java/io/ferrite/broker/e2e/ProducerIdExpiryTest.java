package io.ferrite.broker.e2e;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code producer.id.expiration.ms} with kafka-clients, as against Kafka 4.4 (run with
 * producer.id.expiration.ms=3000 and a 500 ms check: DescribeProducers lists the idempotent producer
 * after its first send, then nothing once it expired; its next send, sequence 1, is taken, and the
 * producer is listed again with last sequence 1 and the same id and epoch). A producer with a
 * transaction open is never expired: its last write is older than the expired one's, so the check
 * that forgot the one would have forgotten it too.
 */
class ProducerIdExpiryTest
{
    private static final String TOPIC = "expiring";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    @TempDir
    Path dir;

    private static ProducerRecord<byte[], byte[]> record(final String value)
    {
        return new ProducerRecord<>(TOPIC, 0, null, value.getBytes(StandardCharsets.UTF_8));
    }

    private static List<ProducerState> producers(final Admin admin) throws Exception
    {
        return admin.describeProducers(List.of(TP)).partitionResult(TP).get().activeProducers();
    }

    private static Optional<ProducerState> producer(final List<ProducerState> states, final long producerId)
    {
        return states.stream().filter(s -> s.producerId() == producerId).findFirst();
    }

    @Test
    void anIdleProducerIsForgottenAndItsNextBatchIsTakenButOneWithATransactionOpenStays() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of(BrokerConfig.PRODUCER_ID_EXPIRATION_MS, "2000",
                BrokerConfig.PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS, "100"));
            Admin admin = broker.admin();
            KafkaProducer<byte[], byte[]> transactional = broker.producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "expiry-tx"));
            KafkaProducer<byte[], byte[]> idempotent = broker.producer(Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.ACKS_CONFIG, "all")))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1))).all().get();
            transactional.initTransactions();
            transactional.beginTransaction();
            transactional.send(record("in a transaction")).get();
            final long txnPid = producers(admin).get(0).producerId();

            assertEquals(1, idempotent.send(record("first")).get().offset());
            final ProducerState before = producers(admin).stream().filter(s -> s.producerId() != txnPid).findFirst().orElseThrow();
            final long pid = before.producerId();
            assertEquals(0, before.lastSequence(), before.toString());

            final List<ProducerState> after = Await.awaitValue(() -> producers(admin), states -> producer(states, pid).isEmpty(),
                Duration.ofSeconds(30), "the idempotent producer forgotten after producer.id.expiration.ms");
            assertTrue(producer(after, txnPid).isPresent(), "the producer with a transaction open stays: " + after);

            assertEquals(2, idempotent.send(record("second")).get().offset(), "taken: a forgotten producer's sequence 1");
            final ProducerState again = producer(producers(admin), pid).orElseThrow();
            assertEquals(List.of(pid, (long)before.producerEpoch(), 1L), List.of(again.producerId(), (long)again.producerEpoch(),
                (long)again.lastSequence()), again.toString());
            transactional.commitTransaction();
        }
    }
}
