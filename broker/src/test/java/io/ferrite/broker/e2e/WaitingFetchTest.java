package io.ferrite.broker.e2e;

import io.ferrite.broker.config.BrokerConfig;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A fetch waiting for data is read again only when a partition it waits on moved its high watermark
 * or went away, as Kafka's purgatory checks a delayed fetch (FetchHandler's poll). These show it
 * still wakes for what concerns it: an append to its partition (also one racing its parking), the
 * deletion of its topic — each answered long before its max wait, which is a minute here — and not
 * for an append elsewhere. One network thread, so every connection shares its passes.
 */
class WaitingFetchTest
{
    private static final short VERSION = 12;
    private static final int MAX_WAIT_MS = 60_000;
    private static final Duration WELL_BEFORE_MAX_WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    private static int waitFor(final RawClient raw, final String topic, final long offset) throws Exception
    {
        return raw.send(ApiKeys.FETCH, VERSION, new FetchRequestData().setReplicaId(-1).setMaxWaitMs(MAX_WAIT_MS).setMinBytes(1)
            .setMaxBytes(1 << 20).setIsolationLevel((byte)0).setSessionId(0).setSessionEpoch(-1)
            .setTopics(List.of(new FetchRequestData.FetchTopic().setTopic(topic).setPartitions(List.of(
                new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(offset).setPartitionMaxBytes(1 << 20))))));
    }

    private static FetchResponseData.PartitionData answer(final RawClient raw, final int id) throws Exception
    {
        final FetchResponseData response = new FetchResponseData(new ByteBufferAccessor(raw.receive(ApiKeys.FETCH, VERSION, id)),
            VERSION);
        assertEquals(Errors.NONE.code(), response.errorCode());
        return response.responses().get(0).partitions().get(0);
    }

    private static RunningBroker oneNetworkThread(final Path dir) throws Exception
    {
        return new RunningBroker(dir, Map.of(BrokerConfig.NUM_NETWORK_THREADS, "1"));
    }

    @Test
    void aWaitingFetchIsAnsweredByAnAppendToItsPartitionNotByOneElsewhere() throws Exception
    {
        try (RunningBroker broker = oneNetworkThread(dir); Admin admin = broker.admin();
             KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 0));
             RawClient onA = new RawClient(broker.broker.address().getPort()); RawClient onB = new RawClient(broker.broker.address().getPort()))
        {
            admin.createTopics(List.of(new NewTopic("a", 1, (short)1), new NewTopic("b", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
            final int fetchA = waitFor(onA, "a", 0);
            final int fetchB = waitFor(onB, "b", 0);
            for (int i = 0; i < 20; i++)
            {
                producer.send(new ProducerRecord<>("a", new byte[10])).get(20, TimeUnit.SECONDS);
            }
            await(onA::answered, WELL_BEFORE_MAX_WAIT, "the fetch on 'a' answered after appends to 'a'");
            final FetchResponseData.PartitionData a = answer(onA, fetchA);
            assertEquals(Errors.NONE.code(), a.errorCode());
            final int got = countRecords(a);
            assertTrue(got >= 1 && got <= 20, "records of 'a' in its answer: " + got);
            assertFalse(onB.answered(), "the fetch on 'b' was answered although nothing was appended to 'b'");

            producer.send(new ProducerRecord<>("b", new byte[10])).get(20, TimeUnit.SECONDS);
            await(onB::answered, WELL_BEFORE_MAX_WAIT, "the fetch on 'b' answered after an append to 'b'");
            assertEquals(1, countRecords(answer(onB, fetchB)));
        }
    }

    @Test
    void anAppendRacingAFetchThatParksWakesIt() throws Exception
    {
        try (RunningBroker broker = oneNetworkThread(dir); Admin admin = broker.admin();
             KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 0));
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            admin.createTopics(List.of(new NewTopic("race", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
            for (int round = 0; round < 200; round++)
            {
                // the fetch asks for the offset the next append takes; the append is sent at once, so it
                // lands before, during or after the fetch's counting pass and parking
                final int id = waitFor(raw, "race", round);
                producer.send(new ProducerRecord<>("race", new byte[10])).get(20, TimeUnit.SECONDS);
                final int r = round;
                await(raw::answered, WELL_BEFORE_MAX_WAIT, () -> "round " + r + ": the fetch answered after the append");
                final FetchResponseData.PartitionData p = answer(raw, id);
                assertEquals(Errors.NONE.code(), p.errorCode());
                assertEquals(1, countRecords(p), "round " + round);
            }
        }
    }

    @Test
    void aWaitingFetchWhoseTopicIsDeletedIsAnsweredAtOnce() throws Exception
    {
        try (RunningBroker broker = oneNetworkThread(dir); Admin admin = broker.admin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            admin.createTopics(List.of(new NewTopic("going", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
            final int id = waitFor(raw, "going", 0);
            admin.deleteTopics(List.of("going")).all().get(20, TimeUnit.SECONDS);
            await(raw::answered, WELL_BEFORE_MAX_WAIT, "the fetch on a deleted topic answered");
            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(), answer(raw, id).errorCode());
        }
    }

    private static int countRecords(final FetchResponseData.PartitionData p)
    {
        int n = 0;
        final MemoryRecords records = (MemoryRecords)p.records();
        for (final var batch : records.batches())
        {
            for (final var ignored : batch)
            {
                n++;
            }
        }
        return n;
    }
}
