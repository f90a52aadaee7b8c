package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.OffsetForLeaderEpochRequestDecoder;
import io.ferrite.wire.message.OffsetForLeaderEpochResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * OffsetForLeaderEpoch, which consumers send to validate their position after a metadata change.
 * One node never changes leader, so every batch carries leader epoch 0: epoch 0 ends at the log end
 * offset; a later epoch is unknown (epoch and offset -1, as Kafka answers one beyond its latest); a
 * current leader epoch above 0 in the request is UNKNOWN_LEADER_EPOCH.
 */
public final class OffsetForLeaderEpochHandler implements RequestHandler
{
    private final TopicRegistry topics;
    private final OffsetForLeaderEpochRequestDecoder request = new OffsetForLeaderEpochRequestDecoder();
    private final OffsetForLeaderEpochResponseEncoder response = new OffsetForLeaderEpochResponseEncoder();

    public OffsetForLeaderEpochHandler(final TopicRegistry topics)
    {
        this.topics = topics;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        final OffsetForLeaderEpochRequestDecoder.OffsetForLeaderTopic t = request.topics();
        final OffsetForLeaderEpochResponseEncoder.OffsetForLeaderTopicResult rt = response.topics(t.elementCount());
        while (t.hasNext())
        {
            t.next();
            rt.next().topic(in, t.topicOffset(), t.topicLength());
            final Topic topic = topics.topic(in, t.topicOffset(), t.topicLength());
            final OffsetForLeaderEpochRequestDecoder.OffsetForLeaderPartition p = t.partitions();
            final OffsetForLeaderEpochResponseEncoder.EpochEndOffset rp = rt.partitions(p.elementCount());
            while (p.hasNext())
            {
                p.next();
                final Partition partition = PartitionLookup.partition(topic, p.partition());
                rp.next();
                if (partition == null)
                {
                    rp.errorCode(PartitionLookup.notFound(topic, false)).partition(p.partition()).leaderEpoch(-1).endOffset(-1);
                }
                else if (p.currentLeaderEpoch() > 0)
                {
                    rp.errorCode(Errors.UNKNOWN_LEADER_EPOCH).partition(p.partition()).leaderEpoch(-1).endOffset(-1);
                }
                else if (p.leaderEpoch() == 0)
                {
                    rp.errorCode(Errors.NONE).partition(p.partition()).leaderEpoch(0).endOffset(partition.log.logEndOffset());
                }
                else
                {
                    rp.errorCode(Errors.NONE).partition(p.partition()).leaderEpoch(-1).endOffset(-1);
                }
            }
        }
        return outOffset + response.finish();
    }
}
