package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.admin.AdminAgent;
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
import java.util.Set;

/**
 * CreatePartitions: grows a topic to {@code count} partitions, with Kafka's checks — fewer or as
 * many as it has is INVALID_PARTITIONS, an unknown topic UNKNOWN_TOPIC_OR_PARTITION, a topic named
 * twice INVALID_REQUEST, assignments that are not one per new partition or name a broker other than
 * this one INVALID_REPLICA_ASSIGNMENT; {@code validate_only} checks without creating. The checks run
 * on the network thread; the partitions are added by the {@link AdminAgent} (which checks the topic
 * again as it then is), answered when it is done, REQUEST_TIMED_OUT when it did not take the request
 * within its {@code timeoutMs} (nothing added). A large topic still being made in slices is grown in them: journaled
 * and answered at once, the new partitions made after the others ({@code admin.LargeTopicChanges}); so is a whole topic
 * grown by more than a slice (single node, with the creation journal). A growth of a slice or less is answered once its
 * files are made.
 */
public final class CreatePartitionsHandler implements RequestHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(CreatePartitionsHandler.class);

    private final TopicRegistry topics;
    private final AdminAgent admin;
    private final Runnable waker;
    private final int nodeId;
    private final CreatePartitionsRequestDecoder request = new CreatePartitionsRequestDecoder();
    private final CreatePartitionsResponseEncoder response = new CreatePartitionsResponseEncoder();

    public CreatePartitionsHandler(final TopicRegistry topics, final AdminAgent admin, final Runnable waker, final int nodeId)
    {
        this.topics = topics;
        this.admin = admin;
        this.waker = waker;
        this.nodeId = nodeId;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final Set<String> repeated = AdminItem.repeated(request.topics(), CreatePartitionsRequestDecoder.CreatePartitionsTopic::name);
        final boolean validateOnly = request.validateOnly();
        final CreatePartitionsRequestDecoder.CreatePartitionsTopic t = request.topics();
        final Growth[] growths = new Growth[t.elementCount()];
        for (int i = 0; t.hasNext(); i++)
        {
            t.next();
            final Growth g = new Growth(t.name(), t.count());
            growths[i] = g;
            final long[] creating = topics.creatingId(g.name); // before the topic: it leaves creating once published
            final Topic topic = topics.topic(g.name);
            if (repeated.contains(g.name))
            {
                g.answer(Errors.INVALID_REQUEST, "Duplicate topic name.");
            }
            else if (!Access.topic(connection, AclCodes.ALTER, g.name)) // Kafka: ALTER on the topic, before it looks it up
            {
                g.answer(Errors.TOPIC_AUTHORIZATION_FAILED, null);
            }
            else if (PartitionLookup.live(topic) == null && creating != null)
            {
                // answered as created, its files being made: checked and grown by the agent once the topic is there,
                // as Kafka's controller grows a topic it committed
                g.assignments = t.assignments().isNullArray() ? -1 : t.assignments().elementCount();
                g.assignment = checkAssignments(t.assignments(), g.assignments);
                g.validateOnly = validateOnly;
                g.planned = true;
            }
            else if (!check(g, topic))
            {
                final String assignment = checkAssignments(t.assignments(), g.count - topic.plannedPartitions());
                if (assignment != null)
                {
                    g.answer(Errors.INVALID_REPLICA_ASSIGNMENT, assignment);
                }
                else
                {
                    g.planned = !validateOnly;
                }
            }
        }
        return AdminItem.answer(admin, waker, growths, request.timeoutMs(), this::grow,
            (o, at, timedOut) -> write(o, at, version, growths, timedOut), connection, out, outOffset);
    }

    /**
     * Kafka's checks of the topic and the count: true (with the answer set) when they fail. On the
     * network thread against the published topic, and again on the agent against the current one.
     */
    private static boolean check(final Growth g, final Topic topic)
    {
        if (PartitionLookup.live(topic) == null)
        {
            g.answer(PartitionLookup.notFound(topic, false), "This server does not host this topic-partition.");
            return true;
        }
        return check(g, topic.plannedPartitions()); // a large topic being made in slices: its whole count, as clients see it
    }

    /** Kafka's checks of the count against a topic's {@code current} partitions: true (with the answer set) when they fail. */
    private static boolean check(final Growth g, final int current)
    {
        if (g.count < current)
        {
            g.answer(Errors.INVALID_PARTITIONS, "The topic " + g.name + " currently has " + current +
                " partition(s); " + g.count + " would not be an increase.");
        }
        else if (g.count == current)
        {
            g.answer(Errors.INVALID_PARTITIONS, "Topic already has " + g.count + " partition(s).");
        }
        else
        {
            return false;
        }
        return true;
    }

    private int write(final MutableDirectBuffer out, final int outOffset, final short version, final Growth[] growths,
        final boolean timedOut)
    {
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        final CreatePartitionsResponseEncoder.CreatePartitionsTopicResult r = response.results(growths.length);
        for (final Growth g : growths)
        {
            r.next().name(g.name).errorCode(g.error(timedOut)).errorMessage(g.message(timedOut));
        }
        return outOffset + response.finish();
    }

    /** One topic of a request: its count and answer; planned once it passed the checks, to be grown by the agent. */
    private static final class Growth extends AdminItem
    {
        final String name;
        final int count;
        /** For a topic checked on the agent: its manual assignments' count (-1: none), what is wrong with them, validateOnly. */
        int assignments = -1;
        String assignment;
        boolean validateOnly;

        Growth(final String name, final int count)
        {
            this.name = name;
            this.count = count;
        }
    }

    /**
     * On the admin agent: checked again against the topic as it is now, then the partitions added. A validateOnly
     * growth of a topic being made is checked against its planned count: it makes no file.
     */
    private void grow(final Growth g)
    {
        final Topic published = PartitionLookup.live(topics.topic(g.name));
        // a large topic being made in slices: grown in them, at once (Kafka's controller does not wait for the logs)
        final boolean slices = published != null && admin.creations() != null && admin.creations().largeTopics().inSlices(published);
        final int planned = admin.creations() == null || slices ? -1 : admin.creations().partitionsOf(g.name);
        final boolean plannedOnly = planned >= 0 && g.validateOnly;
        if (planned >= 0 && !g.validateOnly)
        {
            admin.creations().makeThrough(g.name); // answered as created, not published: made first, in order
        }
        final Topic topic = plannedOnly ? null : topics.topic(g.name);
        if (!plannedOnly && (PartitionLookup.live(topic) == null && topics.creatingId(g.name) != null // its files failed
            || !slices && PartitionLookup.live(topic) != null && topic.partitions.length < topic.plannedPartitions())) // a slice's
        {
            g.answer(Errors.KAFKA_STORAGE_ERROR, ConfigChanges.filesFailed(g.name));
            return;
        }
        final int current = plannedOnly ? planned : PartitionLookup.live(topic) == null ? -1
            : slices ? topic.plannedPartitions() : topic.partitions.length;
        if (current < 0 ? check(g, topic) : check(g, current))
        {
            return;
        }
        if (g.assignments >= 0 && g.assignment == null && g.assignments != g.count - current)
        {
            g.assignment = "Increasing the number of partitions by " + (g.count - current) + " but "
                + g.assignments + " assignments provided.";
        }
        if (g.assignment != null)
        {
            g.answer(Errors.INVALID_REPLICA_ASSIGNMENT, g.assignment);
            return;
        }
        if (g.validateOnly)
        {
            return;
        }
        // a whole topic grown by more than a slice: journaled and answered at once too, its new partitions made in slices
        final boolean journaled = slices || admin.creations() != null
            && io.ferrite.broker.admin.LargeTopicChanges.growsInSlices(current, g.count);
        try
        {
            if (slices)
            {
                admin.creations().largeTopics().grow(topic, g.count); // journaled: its slices make them
            }
            else if (journaled)
            {
                admin.creations().largeTopics().growWhole(topic, g.count);
            }
            else
            {
                topics.addPartitions(topic, g.count);
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            LOG.error("adding partitions to {} failed", g.name, ex);
            g.answer(journaled && ex instanceof IOException ? Errors.KAFKA_STORAGE_ERROR : Errors.UNKNOWN_SERVER_ERROR, ex.toString());
        }
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
