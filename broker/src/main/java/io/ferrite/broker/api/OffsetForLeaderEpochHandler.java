package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.OffsetForLeaderEpochRequestDecoder;
import io.ferrite.wire.message.OffsetForLeaderEpochRequestDecoder.OffsetForLeaderPartition;
import io.ferrite.wire.message.OffsetForLeaderEpochRequestDecoder.OffsetForLeaderTopic;
import io.ferrite.wire.message.OffsetForLeaderEpochResponseEncoder;
import io.ferrite.wire.message.OffsetForLeaderEpochResponseEncoder.EpochEndOffset;
import io.ferrite.wire.message.OffsetForLeaderEpochResponseEncoder.OffsetForLeaderTopicResult;

/**
 * OffsetForLeaderEpoch, which consumers send to validate their position after a metadata change.
 * One node never changes leader, so every batch carries leader epoch 0: epoch 0 ends at the log end
 * offset; a later epoch is unknown (epoch and offset -1, as Kafka answers one beyond its latest); a
 * current leader epoch above 0 in the request is UNKNOWN_LEADER_EPOCH.
 */
public final class OffsetForLeaderEpochHandler
    extends PartitionOffsetsHandler<OffsetForLeaderTopic, OffsetForLeaderPartition, OffsetForLeaderTopicResult>
{
    private EpochEndOffset answers;

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
        final boolean known = error == Errors.NONE && p.leaderEpoch() == 0; // epoch 0 ends at the log end offset
        answers.next().errorCode(error).partition(p.partition()).leaderEpoch(known ? 0 : -1)
            .endOffset(known ? partition.log.logEndOffset() : -1);
    }
}
