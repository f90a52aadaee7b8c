package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogClosedException;
import io.ferrite.log.PartitionLog;
import io.ferrite.log.TimestampOffset;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.ListOffsetsRequestDecoder;
import io.ferrite.wire.message.ListOffsetsResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * ListOffsets as Kafka's leader answers a consumer: EARLIEST (and EARLIEST_LOCAL) is the log start
 * offset, LATEST the high watermark (the last stable offset equals it: there are no transactions
 * yet), MAX_TIMESTAMP the first record with the largest timestamp, a timestamp the first record at or
 * after it — both only below the high watermark, else offset -1. Tiered-storage specials
 * (LATEST_TIERED, EARLIEST_PENDING_UPLOAD) answer -1: nothing is tiered. The partition leader epoch
 * is always 0 here, so a client's newer epoch is UNKNOWN_LEADER_EPOCH (an older one cannot exist).
 */
public final class ListOffsetsHandler implements RequestHandler
{
    static final long LATEST = -1;
    static final long EARLIEST = -2;
    static final long MAX_TIMESTAMP = -3;
    static final long EARLIEST_LOCAL = -4;

    private final TopicRegistry topics;
    private final ListOffsetsRequestDecoder request = new ListOffsetsRequestDecoder();
    private final ListOffsetsResponseEncoder response = new ListOffsetsResponseEncoder();
    private final TimestampOffset found = new TimestampOffset();

    public ListOffsetsHandler(final TopicRegistry topics)
    {
        this.topics = topics;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        final ListOffsetsRequestDecoder.ListOffsetsTopic requested = request.topics();
        final ListOffsetsResponseEncoder.ListOffsetsTopicResponse t = response.topics(requested.elementCount());
        while (requested.hasNext())
        {
            requested.next();
            final Topic topic = topics.topic(in, requested.nameOffset(), requested.nameLength());
            t.next().name(in, requested.nameOffset(), requested.nameLength());
            final ListOffsetsRequestDecoder.ListOffsetsPartition partitions = requested.partitions();
            final ListOffsetsResponseEncoder.ListOffsetsPartitionResponse p = t.partitions(partitions.elementCount());
            while (partitions.hasNext())
            {
                partitions.next();
                p.next().partitionIndex(partitions.partitionIndex());
                final Partition partition = PartitionLookup.partition(topic, partitions.partitionIndex());
                if (partition == null)
                {
                    p.errorCode(PartitionLookup.notFound(topic, false)).timestamp(-1).offset(-1).leaderEpoch(-1);
                }
                else if (partitions.currentLeaderEpoch() > 0)
                {
                    p.errorCode(Errors.UNKNOWN_LEADER_EPOCH).timestamp(-1).offset(-1).leaderEpoch(-1);
                }
                else
                {
                    final short error = lookUp(partition.log, partitions.timestamp(), topic);
                    if (error == Errors.NONE)
                    {
                        p.errorCode(Errors.NONE).timestamp(found.timestamp).offset(found.offset)
                            .leaderEpoch(found.offset < 0 || version < 4 ? -1 : 0); // the field exists from v4
                    }
                    else
                    {
                        p.errorCode(error).timestamp(-1).offset(-1).leaderEpoch(-1);
                    }
                }
            }
        }
        return outOffset + response.finish();
    }

    /**
     * Looks the timestamp up into {@link #found}; the partition's error: a log closed before or under
     * the lookup (deleted, or the broker shutting down) answers as a partition that is gone.
     */
    private short lookUp(final PartitionLog log, final long timestamp, final Topic topic)
    {
        try
        {
            lookUp(log, timestamp);
        }
        catch (final LogClosedException gone)
        {
            return PartitionLookup.closed(topic, false);
        }
        return log.isClosed() ? PartitionLookup.closed(topic, false) : Errors.NONE;
    }

    private void lookUp(final PartitionLog log, final long timestamp)
    {
        final long highWatermark = log.highWatermark();
        found.timestamp = -1;
        found.offset = -1;
        if (timestamp == EARLIEST || timestamp == EARLIEST_LOCAL)
        {
            found.offset = log.logStartOffset();
        }
        else if (timestamp == LATEST)
        {
            found.offset = highWatermark;
        }
        else if (timestamp == MAX_TIMESTAMP || timestamp >= 0)
        {
            if (timestamp == MAX_TIMESTAMP)
            {
                log.maxTimestampOffset(found);
            }
            else
            {
                log.offsetForTimestamp(timestamp, found);
            }
            if (!found.found() || found.offset >= highWatermark)
            {
                found.timestamp = -1;
                found.offset = -1;
            }
        }
    }
}
