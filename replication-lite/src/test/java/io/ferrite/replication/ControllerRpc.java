package io.ferrite.replication;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.Collection;

import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.CreateTopicsResponse;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * A test's client of the controller listener, as Kafka's brokers forward an Admin's CreateTopics: one request over a
 * blocking socket to each controller in turn until one answers other than NOT_CONTROLLER (Kafka's Admin refuses
 * CreateTopics with {@code bootstrap.controllers}: it is a broker API that brokers forward).
 */
final class ControllerRpc
{
    private ControllerRpc()
    {
    }

    /** Creates one topic; returns the active controller's answer for it (NOT_CONTROLLER if none was active). */
    static CreateTopicsResponseData.CreatableTopicResult createTopic(final Collection<InetSocketAddress> controllers,
        final String name, final int partitions, final short replicationFactor) throws IOException
    {
        final CreateTopicsRequestData.CreatableTopicCollection topics = new CreateTopicsRequestData.CreatableTopicCollection();
        topics.add(new CreateTopicsRequestData.CreatableTopic().setName(name).setNumPartitions(partitions)
            .setReplicationFactor(replicationFactor));
        final CreateTopicsRequest request = new CreateTopicsRequest.Builder(
            new CreateTopicsRequestData().setTopics(topics).setTimeoutMs(30_000)).build();
        CreateTopicsResponseData.CreatableTopicResult last = null;
        for (final InetSocketAddress controller : controllers)
        {
            last = ((CreateTopicsResponse)send(controller, request)).data().topics().find(name);
            if (last.errorCode() != Errors.NOT_CONTROLLER.code())
            {
                return last;
            }
        }
        return last;
    }

    /** One request to one controller, its answer. */
    static AbstractResponse send(final InetSocketAddress to, final AbstractRequest request) throws IOException
    {
        final RequestHeader header = new RequestHeader(request.apiKey(), request.version(), "controller-rpc", 1);
        try (Socket socket = new Socket(to.getHostString(), to.getPort()))
        {
            final ByteBuffer frame = request.serializeWithHeader(header);
            final DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            out.writeInt(frame.remaining());
            out.write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
            out.flush();
            final DataInputStream in = new DataInputStream(socket.getInputStream());
            final byte[] answer = new byte[in.readInt()];
            in.readFully(answer);
            return AbstractResponse.parseResponse(ByteBuffer.wrap(answer), header);
        }
    }
}
