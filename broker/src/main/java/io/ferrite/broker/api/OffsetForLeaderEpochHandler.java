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
 * One node stamps leader epoch 0 on every batch and never changes leader, so its cache holds epoch 0
 * from the first batch; a log with no batch yet has an empty cache, and is answered as Kafka's leader
 * answers once it assigned its epoch at the log end when it became leader: epoch 0 ends at the log end
 * offset. A current leader epoch above 0 in the request is UNKNOWN_LEADER_EPOCH (see
 * {@link PartitionOffsetsHandler}).
 */
public final class OffsetForLeaderEpochHandler
    extends PartitionOffsetsHandler<OffsetForLeaderTopic, OffsetForLeaderPartition, OffsetForLeaderTopicResult>
{
    /** The epoch of a single node: the one its batches carry and its Metadata answers. */
    private static final int NODE_LEADER_EPOCH = 0;

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
        endOffsetFor(partition.log, p.leaderEpoch(), found);
        answers.next().errorCode(error).partition(p.partition()).leaderEpoch(found.epoch).endOffset(found.endOffset);
    }

    /** The answer for {@code requested} from {@code log}'s cache (allocates nothing). */
    static LeaderEpochCache.EpochOffset endOffsetFor(final PartitionLog log, final int requested, final LeaderEpochCache.EpochOffset out)
    {
        final long logEnd = log.logEndOffset(); // read before the cache: an epoch assigned after it ends no later than this
        final LeaderEpochCache cache = log.leaderEpochCache();
        if (cache.latestEpoch() == LeaderEpochCache.UNDEFINED_EPOCH && requested == NODE_LEADER_EPOCH)
        {
            out.epoch = NODE_LEADER_EPOCH; // no batch yet: the node's epoch starts at the log end, as a new Kafka leader's
            out.endOffset = logEnd;
            return out;
        }
        return cache.endOffsetFor(requested, logEnd, out);
    }
}
