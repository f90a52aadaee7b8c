package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.PartitionLog;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.DeleteRecordsRequestDecoder;
import io.ferrite.wire.message.DeleteRecordsResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;

/**
 * DeleteRecords: moves a partition's log start offset up to the given offset (-1: the high
 * watermark) and deletes the segments wholly below it; the answer is the new low watermark. As in
 * Kafka, an offset above the high watermark (or negative other than -1) is OFFSET_OUT_OF_RANGE, and
 * one below the log start changes nothing. The log engine allows this beside its writer (the same
 * path retention takes).
 */
public final class DeleteRecordsHandler implements RequestHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(DeleteRecordsHandler.class);
    private static final long HIGH_WATERMARK = -1;

    private final TopicRegistry topics;
    private final DeleteRecordsRequestDecoder request = new DeleteRecordsRequestDecoder();
    private final DeleteRecordsResponseEncoder response = new DeleteRecordsResponseEncoder();

    public DeleteRecordsHandler(final TopicRegistry topics)
    {
        this.topics = topics;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        final DeleteRecordsRequestDecoder.DeleteRecordsTopic t = request.topics();
        final DeleteRecordsResponseEncoder.DeleteRecordsTopicResult rt = response.topics(t.elementCount());
        while (t.hasNext())
        {
            t.next();
            rt.next().name(in, t.nameOffset(), t.nameLength());
            final Topic topic = topics.topic(in, t.nameOffset(), t.nameLength());
            final DeleteRecordsRequestDecoder.DeleteRecordsPartition p = t.partitions();
            final DeleteRecordsResponseEncoder.DeleteRecordsPartitionResult rp = rt.partitions(p.elementCount());
            while (p.hasNext())
            {
                p.next();
                rp.next().partitionIndex(p.partitionIndex());
                final Partition partition = PartitionLookup.partition(topic, p.partitionIndex());
                if (partition == null)
                {
                    rp.lowWatermark(-1).errorCode(PartitionLookup.notFound(topic, false));
                    continue;
                }
                final PartitionLog log = partition.log;
                final long target = p.offset() == HIGH_WATERMARK ? log.highWatermark() : p.offset();
                if (target < 0 || target > log.highWatermark())
                {
                    rp.lowWatermark(-1).errorCode(Errors.OFFSET_OUT_OF_RANGE);
                    continue;
                }
                try
                {
                    final long low = log.deleteRecordsBefore(target);
                    rp.lowWatermark(low < 0 ? -1 : low).errorCode(low < 0 ? Errors.OFFSET_OUT_OF_RANGE : Errors.NONE);
                }
                catch (final IOException ex)
                {
                    LOG.error("deleting records of {} below {} failed", partition, target, ex);
                    rp.lowWatermark(-1).errorCode(Errors.KAFKA_STORAGE_ERROR);
                }
            }
        }
        return outOffset + response.finish();
    }
}
