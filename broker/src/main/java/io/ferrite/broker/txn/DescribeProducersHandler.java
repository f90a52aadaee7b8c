package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.api.PartitionLookup;
import io.ferrite.broker.api.PartitionTasks;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.DescribeProducersRequestDecoder;
import io.ferrite.wire.message.DescribeProducersResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.collections.LongArrayList;

/**
 * DescribeProducers (kafka-transactions.sh describe-producers and find-hanging): each partition's
 * active producers as its producer state holds them — id, epoch, last sequence, last timestamp,
 * coordinator epoch of its last marker, and the first offset of its open transaction (-1 for none).
 *
 * <p>The producer state is its log thread's (the partition's single writer), so it is read there, as a
 * task between appends ({@link PartitionTasks}, as DeleteRecords); the answer waits,
 * its connection only, until every partition's task ran and the last one woke the network thread. An
 * unknown partition is UNKNOWN_TOPIC_OR_PARTITION, a log closed meanwhile as the other handlers answer
 * it, a partition whose log thread has stopped KAFKA_STORAGE_ERROR.
 */
final class DescribeProducersHandler implements RequestHandler
{
    /** Fields per producer in {@link Described#producers}. */
    private static final int FIELDS = 6;

    private final TopicRegistry topics;
    private final LogThread[] logThreads;
    private final Runnable waker;
    private final DescribeProducersRequestDecoder request = new DescribeProducersRequestDecoder();
    private final DescribeProducersResponseEncoder response = new DescribeProducersResponseEncoder();

    DescribeProducersHandler(final TopicRegistry topics, final LogThread[] logThreads, final Runnable waker)
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
        final DescribeProducersRequestDecoder.TopicRequest t = request.topics();
        final String[] names = new String[t.elementCount()];
        final Described[][] described = new Described[names.length][];
        final Answer answer = new Answer(version, names, described);
        for (int i = 0; t.hasNext(); i++)
        {
            t.next();
            names[i] = t.name();
            final Topic topic = topics.topic(in, t.nameOffset(), t.nameLength());
            // Kafka 4.4: READ on the topic, checked before its existence
            final boolean allowed = Access.topic(connection, AclCodes.READ, topic, in, t.nameOffset(), t.nameLength());
            described[i] = new Described[t.partitionIndexesCount()];
            for (int j = 0; j < described[i].length; j++)
            {
                final int index = t.partitionIndexes(j);
                final Partition partition = allowed ? PartitionLookup.partition(topic, index) : null;
                final Described d = new Described(index, topic, partition);
                described[i][j] = d;
                if (!allowed)
                {
                    d.error = Errors.TOPIC_AUTHORIZATION_FAILED;
                }
                else if (partition == null)
                {
                    d.error = PartitionLookup.notFound(topic, false, index); // being made: NOT_LEADER_OR_FOLLOWER, as Kafka
                }
                else
                {
                    answer.add(d);
                }
            }
        }
        return answer.start(connection, out, outOffset);
    }

    /** One partition of a request: its producers read on its log thread, then answered. */
    private static final class Described extends PartitionTasks.Task
    {
        final int index;
        final Topic topic;
        /** {@link #FIELDS} per producer: id, epoch, last sequence, last timestamp, coordinator epoch, transaction start. */
        final LongArrayList producers = new LongArrayList();
        short error;

        Described(final int index, final Topic topic, final Partition partition)
        {
            super(partition);
            this.index = index;
            this.topic = topic;
        }

        @Override
        protected void runOnOwner()
        {
            if (partition.log.isClosed())
            {
                error = PartitionLookup.closed(topic, false); // deleted meanwhile (or the broker stopping)
                return;
            }
            partition.log.transactions().forEachProducer((id, epoch, lastSequence, lastTimestamp, coordinatorEpoch, txnStart) ->
            {
                producers.addLong(id);
                producers.addLong(epoch);
                producers.addLong(lastSequence);
                producers.addLong(lastTimestamp);
                producers.addLong(coordinatorEpoch);
                producers.addLong(txnStart);
            });
            error = Errors.NONE;
        }
    }

    /** The response, written once every partition is answered or its log thread has stopped. */
    private final class Answer extends PartitionTasks
    {
        final Described[][] described;

        Answer(final short version, final String[] names, final Described[][] described)
        {
            super(logThreads, waker, version, names);
            this.described = described;
        }

        @Override
        protected int write(final MutableDirectBuffer out, final int outOffset)
        {
            response.wrap(out, outOffset, version).throttleTimeMs(0);
            final DescribeProducersResponseEncoder.TopicResponse rt = response.topics(names.length);
            for (int i = 0; i < names.length; i++)
            {
                rt.next().name(names[i]);
                final DescribeProducersResponseEncoder.PartitionResponse rp = rt.partitions(described[i].length);
                for (final Described d : described[i])
                {
                    final boolean answered = d.answered();
                    final short error = answered ? d.error : Errors.KAFKA_STORAGE_ERROR; // its log thread stopped
                    rp.next().partitionIndex(d.index).errorCode(error).errorMessage(Access.message(error)); // Kafka's, refused
                    final LongArrayList p = d.producers;
                    final int count = answered && error == Errors.NONE ? p.size() / FIELDS : 0;
                    final DescribeProducersResponseEncoder.ProducerState s = rp.activeProducers(count);
                    for (int k = 0; k < count; k++)
                    {
                        final int at = k * FIELDS;
                        s.next().producerId(p.getLong(at)).producerEpoch((int)p.getLong(at + 1)).lastSequence((int)p.getLong(at + 2))
                            .lastTimestamp(p.getLong(at + 3)).coordinatorEpoch((int)p.getLong(at + 4)).currentTxnStartOffset(p.getLong(at + 5));
                    }
                }
            }
            return outOffset + response.finish();
        }
    }
}
