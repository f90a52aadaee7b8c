package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogClosedException;
import io.ferrite.log.PartitionLog;
import io.ferrite.log.TimestampOffset;
import io.ferrite.wire.message.ListOffsetsRequestDecoder;
import io.ferrite.wire.message.ListOffsetsRequestDecoder.ListOffsetsPartition;
import io.ferrite.wire.message.ListOffsetsRequestDecoder.ListOffsetsTopic;
import io.ferrite.wire.message.ListOffsetsResponseEncoder;
import io.ferrite.wire.message.ListOffsetsResponseEncoder.ListOffsetsPartitionResponse;
import io.ferrite.wire.message.ListOffsetsResponseEncoder.ListOffsetsTopicResponse;

/**
 * ListOffsets as Kafka's leader answers a consumer: EARLIEST (and EARLIEST_LOCAL) is the log start
 * offset, LATEST the high watermark (the last stable offset equals it: there are no transactions
 * yet), MAX_TIMESTAMP the first record with the largest timestamp, a timestamp the first record at or
 * after it — both only below the high watermark, else offset -1. Tiered-storage specials
 * (LATEST_TIERED, EARLIEST_PENDING_UPLOAD) answer -1: nothing is tiered. The partition leader epoch
 * is always 0 here, so a client's newer epoch is UNKNOWN_LEADER_EPOCH (an older one cannot exist).
 */
public final class ListOffsetsHandler extends PartitionOffsetsHandler<ListOffsetsTopic, ListOffsetsPartition, ListOffsetsTopicResponse>
{
    static final long LATEST = -1;
    static final long EARLIEST = -2;
    static final long MAX_TIMESTAMP = -3;
    static final long EARLIEST_LOCAL = -4;

    private final TimestampOffset found = new TimestampOffset();
    private ListOffsetsPartitionResponse answers;

    public ListOffsetsHandler(final TopicRegistry topics)
    {
        super(topics, new Request<>(new ListOffsetsRequestDecoder(), ListOffsetsRequestDecoder::topics, ListOffsetsTopic::nameOffset,
            ListOffsetsTopic::nameLength, ListOffsetsTopic::partitions, ListOffsetsPartition::partitionIndex,
            ListOffsetsPartition::currentLeaderEpoch),
            new ArrayResponse<>(new ListOffsetsResponseEncoder(), (r, out, at, version, n) -> r.wrap(out, at, version).topics(n),
                ListOffsetsResponseEncoder::finish));
    }

    @Override
    void topic(final ListOffsetsTopic t, final ListOffsetsTopicResponse answerTopics, final int partitions)
    {
        answers = answerTopics.next().name(t.buffer(), t.nameOffset(), t.nameLength()).partitions(partitions);
    }

    @Override
    void partition(final ListOffsetsPartition p, final Topic topic, final Partition partition, final short error)
    {
        answers.next().partitionIndex(p.partitionIndex());
        final short e = error == Errors.NONE ? lookUp(partition.log, p.timestamp(), topic) : error;
        if (e == Errors.NONE)
        {
            answers.errorCode(Errors.NONE).timestamp(found.timestamp).offset(found.offset)
                .leaderEpoch(found.offset < 0 || p.messageVersion() < 4 ? -1 : 0); // the field exists from v4
        }
        else
        {
            answers.errorCode(e).timestamp(-1).offset(-1).leaderEpoch(-1);
        }
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
