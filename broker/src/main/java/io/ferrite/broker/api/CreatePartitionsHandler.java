package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.CreatePartitionsRequestDecoder;
import io.ferrite.wire.message.CreatePartitionsResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.HashSet;
import java.util.Set;

/**
 * CreatePartitions: grows a topic to {@code count} partitions, with Kafka's checks — fewer or as
 * many as it has is INVALID_PARTITIONS, an unknown topic UNKNOWN_TOPIC_OR_PARTITION, a topic named
 * twice INVALID_REQUEST, assignments that are not one per new partition or name a broker other than
 * this one INVALID_REPLICA_ASSIGNMENT; {@code validate_only} checks without creating.
 */
public final class CreatePartitionsHandler implements RequestHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(CreatePartitionsHandler.class);

    private final TopicRegistry topics;
    private final int nodeId;
    private final CreatePartitionsRequestDecoder request = new CreatePartitionsRequestDecoder();
    private final CreatePartitionsResponseEncoder response = new CreatePartitionsResponseEncoder();

    public CreatePartitionsHandler(final TopicRegistry topics, final int nodeId)
    {
        this.topics = topics;
        this.nodeId = nodeId;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final Set<String> seen = new HashSet<>();
        final Set<String> repeated = new HashSet<>();
        final CreatePartitionsRequestDecoder.CreatePartitionsTopic first = request.topics();
        while (first.hasNext())
        {
            final String name = first.next().name();
            if (!seen.add(name))
            {
                repeated.add(name);
            }
        }
        final boolean validateOnly = request.validateOnly();
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        final CreatePartitionsRequestDecoder.CreatePartitionsTopic t = request.topics();
        final CreatePartitionsResponseEncoder.CreatePartitionsTopicResult r = response.results(t.elementCount());
        while (t.hasNext())
        {
            t.next();
            final String name = t.name();
            r.next().name(name);
            final Topic topic = topics.topic(name);
            final int count = t.count();
            final String problem;
            final short error;
            if (repeated.contains(name))
            {
                error = Errors.INVALID_REQUEST;
                problem = "Duplicate topic name.";
            }
            else if (PartitionLookup.live(topic) == null)
            {
                error = PartitionLookup.notFound(topic, false);
                problem = "This server does not host this topic-partition.";
            }
            else if (count < topic.partitions.length)
            {
                error = Errors.INVALID_PARTITIONS;
                problem = "The topic " + name + " currently has " + topic.partitions.length +
                    " partition(s); " + count + " would not be an increase.";
            }
            else if (count == topic.partitions.length)
            {
                error = Errors.INVALID_PARTITIONS;
                problem = "Topic already has " + count + " partition(s).";
            }
            else
            {
                final String assignment = checkAssignments(t.assignments(), count - topic.partitions.length);
                error = assignment == null ? Errors.NONE : Errors.INVALID_REPLICA_ASSIGNMENT;
                problem = assignment;
            }
            if (error != Errors.NONE)
            {
                r.errorCode(error).errorMessage(problem);
                continue;
            }
            if (!validateOnly)
            {
                try
                {
                    topics.addPartitions(topic, count);
                }
                catch (final IOException | RuntimeException ex)
                {
                    LOG.error("adding partitions to {} failed", name, ex);
                    r.errorCode(Errors.UNKNOWN_SERVER_ERROR).errorMessage(ex.toString());
                    continue;
                }
            }
            r.errorCode(Errors.NONE).errorMessage(null);
        }
        return outOffset + response.finish();
    }

    /** Null when the manual assignment (if any) fits one node, else why not. */
    private String checkAssignments(final CreatePartitionsRequestDecoder.CreatePartitionsAssignment a, final int added)
    {
        if (a.isNullArray())
        {
            return null;
        }
        if (a.elementCount() != added)
        {
            return "Increasing the number of partitions by " + added + " but " + a.elementCount() + " assignments provided.";
        }
        while (a.hasNext())
        {
            a.next();
            if (a.brokerIdsCount() != 1)
            {
                return "The replication factor must be 1 on this single node, got " + a.brokerIdsCount() + " replicas.";
            }
            if (a.brokerIds(0) != nodeId)
            {
                return "The manual partition assignment includes broker " + a.brokerIds(0) + ", but no such broker is registered.";
            }
        }
        return null;
    }
}
