package io.ferrite.broker.replica;

import io.ferrite.broker.Errors;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.ListOffsetsRequestEncoder;
import io.ferrite.wire.message.ListOffsetsResponseDecoder;
import io.ferrite.wire.message.RequestHeaderEncoder;
import io.ferrite.wire.message.ResponseHeaderDecoder;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A follower's ListOffsets to its leader, as Kafka's fetcher sends one to resolve an OFFSET_OUT_OF_RANGE
 * ({@code fetchLatestOffsetFromLeader} / {@code fetchEarliestOffsetFromLeader}): with this node's replica id,
 * so a Kafka leader answers its log end for LATEST (no isolation) and its log start for EARLIEST. A Ferrite
 * leader answers LATEST with its high watermark still (as to a consumer): the rule's "leader's end below
 * ours" then compares with that — it only runs after an OFFSET_OUT_OF_RANGE, which a Ferrite leader answers
 * only to a fetch above its log end or below its log start. On the
 * fetcher's connection, between rounds (the answer goes into the same buffer). Fetcher thread only.
 */
final class LeaderOffsets
{
    static final long LATEST = -1;
    static final long EARLIEST = -2;
    /** The answer could not be used (an error, or not the partition asked for). */
    static final long UNKNOWN = Long.MIN_VALUE;
    private static final short VERSION = 9;

    private final int nodeId;
    private final String clientId;
    private final FetcherChannel channel;
    private final UnsafeBuffer out;
    private final ByteBuffer outBytes;
    private final RequestHeaderEncoder header = new RequestHeaderEncoder();
    private final ListOffsetsRequestEncoder request = new ListOffsetsRequestEncoder();
    private final ResponseHeaderDecoder responseHeader = new ResponseHeaderDecoder();
    private final ListOffsetsResponseDecoder response = new ListOffsetsResponseDecoder();

    LeaderOffsets(final int nodeId, final String clientId, final FetcherChannel channel, final UnsafeBuffer out,
        final ByteBuffer outBytes)
    {
        this.nodeId = nodeId;
        this.clientId = clientId;
        this.channel = channel;
        this.out = out;
        this.outBytes = outBytes;
    }

    /** The leader's offset for {@code timestamp} ({@link #LATEST} or {@link #EARLIEST}), or {@link #UNKNOWN}. */
    long offset(final FollowedPartition fp, final long timestamp, final int correlationId) throws IOException
    {
        int at = FetcherChannel.SIZE_LENGTH;
        final ApiKeys api = ApiKeys.LIST_OFFSETS;
        at += header.wrap(out, at, api.requestHeaderVersion(VERSION)).requestApiKey(api.id).requestApiVersion(VERSION)
            .correlationId(correlationId).clientId(clientId).finish();
        request.wrap(out, at, VERSION).replicaId(nodeId).isolationLevel((byte)0).topics(1).next().name(fp.partition.topic)
            .partitions(1).next().partitionIndex(fp.partition.index).currentLeaderEpoch(fp.leaderEpoch).timestamp(timestamp);
        at += request.finish();
        out.putInt(0, at - FetcherChannel.SIZE_LENGTH, ByteOrder.BIG_ENDIAN);
        outBytes.clear().limit(at);
        channel.send(outBytes);
        final int length = channel.receive();
        final UnsafeBuffer in = channel.inBuffer;
        final int body = responseHeader.wrap(in, 0, length, api.responseHeaderVersion(VERSION));
        if (responseHeader.correlationId() != correlationId)
        {
            throw new IOException("an answer to request " + responseHeader.correlationId() + ", expected " + correlationId);
        }
        response.wrap(in, body, length, VERSION);
        for (var t = response.topics(); t.hasNext(); )
        {
            t.next();
            for (var p = t.partitions(); p.hasNext(); )
            {
                p.next();
                if (p.partitionIndex() == fp.partition.index && p.errorCode() == Errors.NONE)
                {
                    return p.offset();
                }
            }
        }
        return UNKNOWN;
    }
}
