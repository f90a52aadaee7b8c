package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogClosedException;
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
 * one below the log start changes nothing.
 *
 * <p>The change runs on the log thread that owns the partition (its single writer), as a task between
 * its appends, so the target is checked against the high watermark as it is there and the segment
 * files are deleted off the network thread. The answer waits (its connection only) until every
 * partition's task ran and the last one woke the network thread. The request's {@code timeoutMs} is
 * not a deadline here: Kafka on one node deletes locally before it answers and its purgatory, waiting
 * only for the replicas in sync, has none to wait for, so it never answers REQUEST_TIMED_OUT (even at
 * timeoutMs 0, checked against Kafka 4.4). A partition whose log thread has stopped — it will never
 * run the task — is KAFKA_STORAGE_ERROR, as Kafka answers for a log directory gone offline.
 */
public final class DeleteRecordsHandler implements RequestHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(DeleteRecordsHandler.class);
    private static final long HIGH_WATERMARK = -1;

    private final TopicRegistry topics;
    private final LogThread[] logThreads;
    private final Runnable waker;
    private final DeleteRecordsRequestDecoder request = new DeleteRecordsRequestDecoder();
    private final DeleteRecordsResponseEncoder response = new DeleteRecordsResponseEncoder();

    /** {@code waker}: this network thread's wake-up, run by the log thread that ran a request's last task. */
    public DeleteRecordsHandler(final TopicRegistry topics, final LogThread[] logThreads, final Runnable waker)
    {
        this.topics = topics;
        this.logThreads = logThreads;
        this.waker = waker;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final DeleteRecordsRequestDecoder.DeleteRecordsTopic t = request.topics();
        final String[] names = new String[t.elementCount()];
        final Deletion[][] deletions = new Deletion[names.length][];
        final Answer answer = new Answer(version, names, deletions);
        for (int i = 0; t.hasNext(); i++)
        {
            t.next();
            names[i] = t.name();
            final Topic topic = topics.topic(in, t.nameOffset(), t.nameLength());
            final boolean authorized = Access.topic(connection, AclCodes.DELETE, topic, in, t.nameOffset(), t.nameLength());
            final DeleteRecordsRequestDecoder.DeleteRecordsPartition p = t.partitions();
            deletions[i] = new Deletion[p.elementCount()];
            for (int j = 0; p.hasNext(); j++)
            {
                p.next();
                // a refused one is never sent: built without its partition, so it counts as answered by this thread
                final Partition partition = authorized ? PartitionLookup.partition(topic, p.partitionIndex()) : null;
                final Deletion d = new Deletion(p.partitionIndex(), topic, partition, p.offset());
                deletions[i][j] = d;
                if (!authorized) // Kafka checks DELETE on the topic before it looks for the partition
                {
                    d.answer(-1, Errors.TOPIC_AUTHORIZATION_FAILED);
                }
                else if (partition == null)
                {
                    d.answer(-1, PartitionLookup.notFound(topic, false, p.partitionIndex()));
                }
                else
                {
                    answer.add(d);
                }
            }
        }
        return answer.start(connection, out, outOffset);
    }

    /** One partition of a request: run on its log thread, then answered. */
    private static final class Deletion extends PartitionTasks.Task
    {
        final int index;
        final Topic topic;
        final long requested;
        long lowWatermark;
        short error;

        Deletion(final int index, final Topic topic, final Partition partition, final long requested)
        {
            super(partition);
            this.index = index;
            this.topic = topic;
            this.requested = requested;
        }

        void answer(final long lowWatermark, final short error)
        {
            this.lowWatermark = lowWatermark;
            this.error = error;
        }

        @Override
        protected void runOnOwner()
        {
            try
            {
                final PartitionLog log = partition.log;
                final long target = requested == HIGH_WATERMARK ? log.highWatermark() : requested;
                if (partition.followed() != null)
                {
                    answer(-1, Errors.NOT_LEADER_OR_FOLLOWER); // Kafka's deleteRecordsOnLeader; a follower's log start is its fetcher's
                }
                else if (target < 0 || target > log.highWatermark())
                {
                    answer(-1, Errors.OFFSET_OUT_OF_RANGE);
                }
                else
                {
                    final long low = log.deleteRecordsBefore(target);
                    answer(low < 0 ? -1 : low, low < 0 ? Errors.OFFSET_OUT_OF_RANGE : Errors.NONE);
                }
            }
            catch (final LogClosedException gone)
            {
                answer(-1, PartitionLookup.closed(topic, false)); // deleted meanwhile (or the broker stopping)
            }
            catch (final IOException | RuntimeException ex)
            {
                LOG.error("deleting records of {} below {} failed", partition, requested, ex);
                answer(-1, Errors.KAFKA_STORAGE_ERROR);
            }
        }
    }

    /** The response, written once every partition is answered or its log thread has stopped. */
    private final class Answer extends PartitionTasks
    {
        final Deletion[][] deletions;

        Answer(final short version, final String[] names, final Deletion[][] deletions)
        {
            super(logThreads, waker, version, names);
            this.deletions = deletions;
        }

        @Override
        protected int write(final MutableDirectBuffer out, final int outOffset)
        {
            response.wrap(out, outOffset, version).throttleTimeMs(0);
            final DeleteRecordsResponseEncoder.DeleteRecordsTopicResult rt = response.topics(names.length);
            for (int i = 0; i < names.length; i++)
            {
                rt.next().name(names[i]);
                final DeleteRecordsResponseEncoder.DeleteRecordsPartitionResult rp = rt.partitions(deletions[i].length);
                for (final Deletion d : deletions[i])
                {
                    rp.next().partitionIndex(d.index);
                    if (d.answered())
                    {
                        rp.lowWatermark(d.lowWatermark).errorCode(d.error);
                    }
                    else
                    {
                        rp.lowWatermark(-1).errorCode(Errors.KAFKA_STORAGE_ERROR); // its log thread stopped
                    }
                }
            }
            return outOffset + response.finish();
        }
    }
}
