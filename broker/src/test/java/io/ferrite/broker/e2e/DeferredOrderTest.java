package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.BaseRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Requests pipelined on one connection behind a waiting fetch (Kafka answers a connection's
 * requests in order, one at a time): a produce sent behind a parked fetch is not appended before
 * the fetch is answered, and every answer comes back in request order, whether the later requests
 * arrive together with the fetch or while it is parked (when the broker mutes the connection).
 */
class DeferredOrderTest
{
    @TempDir
    Path dir;

    private static ByteBuffer produce(final int correlationId)
    {
        final MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(4096), RecordBatch.CURRENT_MAGIC_VALUE,
            Compression.NONE, TimestampType.CREATE_TIME, 0L);
        builder.append(System.currentTimeMillis(), null, new byte[100]);
        final ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(new ProduceRequestData.TopicProduceData().setName("ordered").setPartitionData(List.of(
            new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(builder.build()))));
        return RawClient.frame(ApiKeys.PRODUCE, (short)9,
            new ProduceRequestData().setAcks((short)1).setTimeoutMs(30_000).setTopicData(topics), correlationId);
    }

    private static ByteBuffer fetch(final long offset, final int correlationId, final int maxWaitMs)
    {
        return RawClient.frame(ApiKeys.FETCH, (short)12, new FetchRequestData().setReplicaId(-1).setMaxWaitMs(maxWaitMs)
            .setMinBytes(1).setMaxBytes(16 * 1024).setSessionEpoch(-1).setTopics(List.of(new FetchRequestData.FetchTopic()
                .setTopic("ordered").setPartitions(List.of(new FetchRequestData.FetchPartition().setPartition(0)
                    .setFetchOffset(offset).setPartitionMaxBytes(16 * 1024))))), correlationId);
    }

    private static void send(final Socket socket, final ByteBuffer frame) throws IOException
    {
        socket.getOutputStream().write(frame.array(), 0, frame.limit());
        socket.getOutputStream().flush();
    }

    /** The next response: checks its correlation id, returns its body. */
    private static ByteBuffer receive(final Socket socket, final short headerVersion, final int correlationId) throws IOException
    {
        final DataInputStream in = new DataInputStream(socket.getInputStream());
        final byte[] bytes = new byte[in.readInt()];
        in.readFully(bytes);
        final ByteBuffer response = ByteBuffer.wrap(bytes);
        assertEquals(correlationId, ResponseHeader.parse(response, headerVersion).correlationId(), "answers in request order");
        return response;
    }

    private static int recordBytes(final ByteBuffer fetchResponse)
    {
        final FetchResponseData data = new FetchResponseData(new ByteBufferAccessor(fetchResponse), (short)12);
        return ((BaseRecords)data.responses().get(0).partitions().get(0).records()).sizeInBytes();
    }

    @Test
    void aProduceBehindAParkedFetchWaitsForItsAnswerAndAnswersKeepRequestOrder() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("num.network.threads", "1")))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("ordered", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
            }
            final short fetchHeader = ApiKeys.FETCH.responseHeaderVersion((short)12);
            final io.ferrite.broker.topic.Partition partition = broker.broker.topics().topic("ordered").partition(0);
            try (Socket socket = new Socket("127.0.0.1", broker.broker.address().getPort()))
            {
                socket.setSoTimeout(10_000);
                for (int round = 0; round < 10; round++)
                {
                    final int id = round * 10;
                    // at the log end: parks until max_wait_ms. The test sees the park only while it lasts: 1 s of it
                    // (200 ms before) for a test thread a loaded machine does not schedule at once
                    send(socket, fetch(round, id + 1, round % 2 == 1 ? 1_000 : 200));
                    if (round % 2 == 1)
                    {
                        // let the fetch park before the rest arrives (then the connection is muted);
                        // either way the answers below must be the same
                        final int r = round;
                        await(partition::hasParkedFetches, Duration.ofSeconds(10), () -> "round " + r + ": the fetch parked");
                    }
                    send(socket, produce(id + 2));
                    send(socket, RawClient.frame(ApiKeys.API_VERSIONS, (short)3, new ApiVersionsRequestData()
                        .setClientSoftwareName("ordered-test").setClientSoftwareVersion("1"), id + 3));
                    send(socket, fetch(round, id + 4, 200));
                    assertEquals(0, recordBytes(receive(socket, fetchHeader, id + 1)),
                        "round " + round + ": the produce behind the fetch was appended before the fetch was answered");
                    receive(socket, ApiKeys.PRODUCE.responseHeaderVersion((short)9), id + 2);
                    receive(socket, (short)0, id + 3);
                    assertTrue(recordBytes(receive(socket, fetchHeader, id + 4)) > 0,
                        "round " + round + ": the fetch after the produce reads its record");
                }
            }
        }
    }
}
