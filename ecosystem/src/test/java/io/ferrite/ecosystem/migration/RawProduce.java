package io.ferrite.ecosystem.migration;

import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * One Produce of a batch's exact bytes over a socket of its own: a retry of a batch an idempotent producer sent to
 * Kafka, with its producer id, epoch and sequence, which kafka-clients' producer cannot be made to send again.
 */
final class RawProduce
{
    private static final short VERSION = 11; // topics by name (v13 names them by id)

    private RawProduce()
    {
    }

    /** Sends {@code batch} to {@code topic}-{@code partition} at acks=all; the partition's answer. */
    static ProduceResponseData.PartitionProduceResponse send(final String host, final int port, final String topic,
        final int partition, final ByteBuffer batch) throws IOException
    {
        final ProduceRequestData data = new ProduceRequestData().setAcks((short)-1).setTimeoutMs(30_000);
        data.topicData().add(new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(List.of(
            new ProduceRequestData.PartitionProduceData().setIndex(partition).setRecords(MemoryRecords.readableRecords(batch.duplicate())))));
        final RequestHeader header = new RequestHeader(ApiKeys.PRODUCE, VERSION, "migration-retry", 7);
        final ByteBuffer request = new ProduceRequest.Builder(VERSION, VERSION, data).build(VERSION).serializeWithHeader(header);
        try (Socket socket = new Socket(host, port))
        {
            socket.setSoTimeout(30_000);
            final OutputStream out = socket.getOutputStream();
            out.write(ByteBuffer.allocate(4).putInt(request.remaining()).array());
            out.write(request.array(), request.arrayOffset() + request.position(), request.remaining());
            out.flush();
            final DataInputStream in = new DataInputStream(socket.getInputStream());
            final byte[] answer = new byte[in.readInt()];
            in.readFully(answer);
            final ProduceResponse response = (ProduceResponse)AbstractResponse.parseResponse(ByteBuffer.wrap(answer), header);
            return response.data().responses().iterator().next().partitionResponses().get(0);
        }
    }
}
