package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.PartitionLog;
import io.ferrite.log.epoch.LeaderEpochCache;
import io.ferrite.wire.message.OffsetForLeaderEpochRequestDecoder;
import io.ferrite.wire.message.OffsetForLeaderEpochRequestDecoder.OffsetForLeaderPartition;
import io.ferrite.wire.message.OffsetForLeaderEpochRequestDecoder.OffsetForLeaderTopic;
import io.ferrite.wire.message.OffsetForLeaderEpochResponseEncoder;
import io.ferrite.wire.message.OffsetForLeaderEpochResponseEncoder.EpochEndOffset;
import io.ferrite.wire.message.OffsetForLeaderEpochResponseEncoder.OffsetForLeaderTopicResult;

/**
 * OffsetForLeaderEpoch, which consumers send to validate their position after a metadata change (and
 * followers, to find where to truncate): answered from the partition's leader-epoch cache
 * ({@link LeaderEpochCache#endOffsetFor}, Kafka's answers: the latest epoch ends at the log end offset,
 * an older one where the next epoch starts, one above the latest is unknown — epoch and offset -1).
 * A single node leads each partition at its log's newest epoch ({@link PartitionLog#leaderEpoch()}, 0 for a new
 * log; a log moved from Kafka keeps the epoch Kafka last led it at); while no batch carries that epoch yet (a new
 * log, or Kafka's entry at the log end after its restart) it is answered as Kafka's leader answers once it assigned
 * its epoch at the log end when it became leader: that epoch ends at the log end offset. A current leader epoch
 * other than the partition's in the request is FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH (see
 * {@link PartitionOffsetsHandler}).
 */
public final class OffsetForLeaderEpochHandler
    extends PartitionOffsetsHandler<OffsetForLeaderTopic, OffsetForLeaderPartition, OffsetForLeaderTopicResult>
{
    private EpochEndOffset answers;
    private final LeaderEpochCache.EpochOffset found = new LeaderEpochCache.EpochOffset();

    public OffsetForLeaderEpochHandler(final TopicRegistry topics)
    {
        super(topics, new Request<>(new OffsetForLeaderEpochRequestDecoder(), OffsetForLeaderEpochRequestDecoder::topics,
            OffsetForLeaderTopic::topicOffset, OffsetForLeaderTopic::topicLength, OffsetForLeaderTopic::partitions,
            OffsetForLeaderPartition::partition, OffsetForLeaderPartition::currentLeaderEpoch),
            new ArrayResponse<>(new OffsetForLeaderEpochResponseEncoder(),
                (r, out, at, version, n) -> r.wrap(out, at, version).topics(n), OffsetForLeaderEpochResponseEncoder::finish));
    }

    @Override
    void topic(final OffsetForLeaderTopic t, final OffsetForLeaderTopicResult answerTopics, final int partitions)
    {
        answers = answerTopics.next().topic(t.buffer(), t.topicOffset(), t.topicLength()).partitions(partitions);
    }

    @Override
    void partition(final OffsetForLeaderPartition p, final Topic topic, final Partition partition, final short error)
    {
        if (error != Errors.NONE)
        {
            answers.next().errorCode(error).partition(p.partition()).leaderEpoch(-1).endOffset(-1);
            return;
        }
        partition.log.endOffsetForEpoch(p.leaderEpoch(), found);
        answers.next().errorCode(error).partition(p.partition()).leaderEpoch(found.epoch).endOffset(found.endOffset);
    }
}
