package io.ferrite.broker.e2e;

import io.ferrite.wire.message.FetchRequestEncoder;
import org.agrona.ExpandableArrayBuffer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A follower acting over a real socket: replica Fetch requests written with the wire module's
 * {@link FetchRequestEncoder} — the replica id in {@code replica_id} before v15, in {@code replica_state}
 * from v15 (topic ids from v13) — and the answers read with kafka-clients' {@link FetchResponseData}.
 */
final class RawFollower implements AutoCloseable
{
    /** Asks for the replica id in the header field. */
    static final short OLD_VERSION = 12;
    /** Asks with {@code replica_state} and the topic id. */
    static final short NEW_VERSION = 17;

    private final RawClient client;
    final int replicaId;
    private final short version;
    private final String topic;
    private final Uuid topicId;
    private final ExpandableArrayBuffer body = new ExpandableArrayBuffer(256);
    private final FetchRequestEncoder encoder = new FetchRequestEncoder();
    private int correlationId;

    RawFollower(final int port, final int replicaId, final short version, final String topic, final Uuid topicId) throws IOException
    {
        this.client = new RawClient(port);
        this.replicaId = replicaId;
        this.version = version;
        this.topic = topic;
        this.topicId = topicId;
    }

    /** One fetch of partition 0 from {@code fetchOffset}, answered at once (max_wait_ms 0), with no last fetched epoch. */
    FetchResponseData.PartitionData fetch(final int currentLeaderEpoch, final long fetchOffset) throws IOException
    {
        return fetch(currentLeaderEpoch, fetchOffset, -1);
    }

    /** One fetch of partition 0 from {@code fetchOffset} naming {@code lastFetchedEpoch} (v12+), answered at once. */
    FetchResponseData.PartitionData fetch(final int currentLeaderEpoch, final long fetchOffset, final int lastFetchedEpoch)
        throws IOException
    {
        encoder.wrap(body, 0, version);
        if (version < 15)
        {
            encoder.replicaId(replicaId);
        }
        encoder.maxWaitMs(0).minBytes(0).maxBytes(1 << 20).isolationLevel((byte)0).sessionId(0).sessionEpoch(-1);
        final FetchRequestEncoder.FetchTopic t = encoder.topics(1).next();
        if (version >= 13)
        {
            t.topicId(topicId.getMostSignificantBits(), topicId.getLeastSignificantBits());
        }
        else
        {
            t.topic(topic);
        }
        t.partitions(1).next().partition(0).currentLeaderEpoch(currentLeaderEpoch).fetchOffset(fetchOffset)
            .lastFetchedEpoch(lastFetchedEpoch).logStartOffset(0).partitionMaxBytes(1 << 20);
        if (version >= 15)
        {
            encoder.replicaState().replicaId(replicaId).replicaEpoch(-1);
        }
        final int length = encoder.finish();
        final int id = send(length);
        final ByteBuffer answer = client.receive(ApiKeys.FETCH, version, id);
        final FetchResponseData response = new FetchResponseData(new ByteBufferAccessor(answer), version);
        return response.responses().get(0).partitions().get(0);
    }

    private int send(final int length) throws IOException
    {
        final int id = ++correlationId;
        final RequestHeaderData header = new RequestHeaderData().setRequestApiKey(ApiKeys.FETCH.id).setRequestApiVersion(version)
            .setCorrelationId(id).setClientId("follower-" + replicaId);
        final short headerVersion = ApiKeys.FETCH.requestHeaderVersion(version);
        final ObjectSerializationCache cache = new ObjectSerializationCache();
        final int headerSize = header.size(cache, headerVersion);
        final ByteBuffer frame = ByteBuffer.allocate(4 + headerSize + length).putInt(headerSize + length);
        header.write(new ByteBufferAccessor(frame), cache, headerVersion);
        body.getBytes(0, frame, frame.position(), length);
        frame.position(frame.position() + length);
        client.sendFrame(frame.flip());
        return id;
    }

    @Override
    public void close() throws IOException
    {
        client.close();
    }
}
