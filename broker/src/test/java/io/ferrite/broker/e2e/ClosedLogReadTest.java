package io.ferrite.broker.e2e;

import io.ferrite.log.PartitionLog;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A Fetch or ListOffsets that reaches a partition whose log has closed under the broker (a shutdown
 * closing the logs while requests are still being answered) gets NOT_LEADER_OR_FOLLOWER, as Kafka
 * answers for a partition it no longer hosts, on a connection that stays open — not a dropped
 * connection from a read that threw. The log is closed directly, so the state is the race's
 * outcome without the race.
 */
class ClosedLogReadTest
{
    @TempDir
    Path dir;

    @Test
    void fetchAndListOffsetsOfAClosedLogAnswerNotLeaderOrFollowerAndKeepTheConnection() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("closing", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
            }
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
            {
                for (int i = 0; i < 10; i++)
                {
                    producer.send(new ProducerRecord<>("closing", new byte[100])).get(20, TimeUnit.SECONDS);
                }
            }
            final PartitionLog log = broker.broker.logs().log("closing", 0);
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                assertEquals(Errors.NONE.code(), fetch(raw).errorCode(), "the open log serves the fetch");
                log.close();
                assertEquals(Errors.NOT_LEADER_OR_FOLLOWER.code(), fetch(raw).errorCode(), "a fetch of the closed log");
                for (final long timestamp : new long[] {0, -3, -1}) // by time, MAX_TIMESTAMP, LATEST
                {
                    final ListOffsetsResponseData.ListOffsetsPartitionResponse answer = listOffsets(raw, timestamp);
                    assertEquals(Errors.NOT_LEADER_OR_FOLLOWER.code(), answer.errorCode(), "ListOffsets " + timestamp);
                    assertEquals(-1, answer.offset());
                }
                final ApiVersionsResponseData versions = new ApiVersionsResponseData(new ByteBufferAccessor(
                    raw.exchange(ApiKeys.API_VERSIONS, (short)3, new ApiVersionsRequestData()
                        .setClientSoftwareName("raw").setClientSoftwareVersion("1"))), (short)3);
                assertEquals(Errors.NONE.code(), versions.errorCode(), "the same connection still answers");
                assertTrue(versions.apiKeys().size() > 0);
            }
        }
    }

    private static FetchResponseData.PartitionData fetch(final RawClient raw) throws Exception
    {
        final FetchRequestData fetch = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(1)
            .setMaxBytes(1 << 20).setIsolationLevel((byte)0).setSessionId(0).setSessionEpoch(-1)
            .setTopics(List.of(new FetchRequestData.FetchTopic().setTopic("closing").setPartitions(List.of(
                new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20)))));
        final ByteBuffer body = raw.exchange(ApiKeys.FETCH, (short)12, fetch);
        return new FetchResponseData(new ByteBufferAccessor(body), (short)12).responses().get(0).partitions().get(0);
    }

    private static ListOffsetsResponseData.ListOffsetsPartitionResponse listOffsets(final RawClient raw, final long timestamp)
        throws Exception
    {
        final ListOffsetsRequestData request = new ListOffsetsRequestData().setReplicaId(-1).setTopics(List.of(
            new ListOffsetsRequestData.ListOffsetsTopic().setName("closing").setPartitions(List.of(
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(timestamp)))));
        final ByteBuffer body = raw.exchange(ApiKeys.LIST_OFFSETS, (short)7, request);
        return new ListOffsetsResponseData(new ByteBufferAccessor(body), (short)7).topics().get(0).partitions().get(0);
    }
}
