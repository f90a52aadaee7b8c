package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicIds;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.DeleteTopicsRequestDecoder;
import io.ferrite.wire.message.DeleteTopicsResponseEncoder;
import io.ferrite.wire.message.StringArrayDecoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.Set;
import java.util.function.ObjIntConsumer;

/**
 * DeleteTopics, by name (v1-5) or by name or id (v6+). A deleted topic disappears at once for new
 * requests, and its name is free for a CreateTopics as soon as the answer goes out, as in Kafka 4.4:
 * its logs are closed and their directories renamed to {@code -delete} before the answer
 * ({@code LogManager.deleteLogs}); requests that found it before meet closed logs (answered as for a
 * partition no longer here), and reads already in its files keep them for {@code file.delete.delay.ms}. Errors as Kafka's: an unknown name UNKNOWN_TOPIC_OR_PARTITION, an unknown
 * id UNKNOWN_TOPIC_ID, a topic named twice (or by name and id at once) INVALID_REQUEST,
 * {@code delete.topic.enable=false} TOPIC_DELETION_DISABLED. The checks run on the network thread; the
 * removal on the {@link AdminAgent}, answered when it is done, REQUEST_TIMED_OUT when it did not take
 * the request within its {@code timeoutMs} (nothing removed).
 */
public final class DeleteTopicsHandler implements RequestHandler
{
    private final TopicRegistry topics;
    private final AdminAgent admin;
    private final Runnable waker;
    private final boolean enabled;
    /** Told each topic deleted and its partition count, on the admin agent (the group coordinator: its committed offsets go, as in Kafka). */
    private final ObjIntConsumer<String> deleted;
    private final DeleteTopicsRequestDecoder request = new DeleteTopicsRequestDecoder();
    private final DeleteTopicsResponseEncoder response = new DeleteTopicsResponseEncoder();

    public DeleteTopicsHandler(final TopicRegistry topics, final AdminAgent admin, final Runnable waker, final boolean enabled,
        final ObjIntConsumer<String> deleted)
    {
        this.topics = topics;
        this.admin = admin;
        this.waker = waker;
        this.enabled = enabled;
        this.deleted = deleted;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final Deletion[] deletions;
        if (version >= 6)
        {
            final Set<String> repeated = AdminItem.repeated(request.topics(), this::key);
            final DeleteTopicsRequestDecoder.DeleteTopicState t = request.topics();
            deletions = new Deletion[t.elementCount()];
            for (int i = 0; t.hasNext(); i++)
            {
                t.next();
                final boolean byId = t.nameIsNull();
                final long msb = t.topicIdMostSignificantBits();
                final long lsb = t.topicIdLeastSignificantBits();
                if (!byId && (msb != 0 || lsb != 0))
                {
                    deletions[i] = new Deletion(t.name(), msb, lsb, false).answered(Errors.INVALID_REQUEST,
                        "Both topic name and topic id were provided");
                    continue;
                }
                // creating first, then the topic: a topic leaves creating only once published, so both absent means
                // no creation of it was answered
                final String creating = byId ? topics.creatingName(msb, lsb) : t.name();
                final long[] named = creating == null ? null : topics.creatingId(creating);
                // by id: the name's id now may be a newer creation of that name (the pending one deleted in between)
                final long[] id = byId && named != null && (named[0] != msb || named[1] != lsb) ? null : named;
                final Topic topic = byId ? topics.topic(msb, lsb) : topics.topic(t.name());
                if (PartitionLookup.live(topic) == null)
                {
                    deletions[i] = id != null ? whenCreated(new Deletion(creating, id[0], id[1], byId), id, repeated.contains(creating))
                        : new Deletion(byId ? null : t.name(), msb, lsb, byId).notFound();
                    continue;
                }
                deletions[i] = check(new Deletion(topic.name, topic.idMostSignificantBits, topic.idLeastSignificantBits, byId), topic,
                    repeated.contains(t.nameIsNull() ? topic.name : t.name())); // key(t), with the topic found above
            }
        }
        else
        {
            final Set<String> repeated = AdminItem.repeated(request.topicNames(), StringArrayDecoder::value);
            final StringArrayDecoder names = request.topicNames();
            deletions = new Deletion[names.elementCount()];
            for (int i = 0; names.hasNext(); i++)
            {
                final String name = names.next().value();
                final long[] id = topics.creatingId(name); // before the topic, as above
                final Topic topic = topics.topic(name);
                final long[] creating = PartitionLookup.live(topic) == null ? id : null;
                deletions[i] = creating != null ? whenCreated(new Deletion(name, 0, 0, false), creating, repeated.contains(name))
                    : PartitionLookup.live(topic) == null ? new Deletion(name, 0, 0, false).notFound()
                    : check(new Deletion(name, 0, 0, false), topic, repeated.contains(name));
            }
        }
        for (int i = 0; i < deletions.length; i++)
        {
            // Kafka's controller: a topic named (or found by id) without DELETE on it is TOPIC_AUTHORIZATION_FAILED, untouched
            final Deletion d = deletions[i];
            if (d.name != null && d.error != Errors.INVALID_REQUEST && !Access.topic(connection, AclCodes.DELETE, d.name))
            {
                deletions[i] = new Deletion(d.name, d.idMsb, d.idLsb, d.byId).answered(Errors.TOPIC_AUTHORIZATION_FAILED,
                    Access.message(Errors.TOPIC_AUTHORIZATION_FAILED));
            }
        }
        return AdminItem.answer(admin, waker, deletions, request.timeoutMs(), this::delete,
            (o, at, timedOut) -> write(o, at, version, deletions, timedOut), connection, out, outOffset);
    }

    /**
     * What makes a v6+ topic the same as another in one request: its name, given or (named by id) the
     * name of the topic with that id, else the id itself.
     */
    private String key(final DeleteTopicsRequestDecoder.DeleteTopicState t)
    {
        if (!t.nameIsNull())
        {
            return t.name();
        }
        final Topic topic = topics.topic(t.topicIdMostSignificantBits(), t.topicIdLeastSignificantBits());
        return topic != null ? topic.name : TopicIds.encode(t.topicIdMostSignificantBits(), t.topicIdLeastSignificantBits());
    }

    private Deletion check(final Deletion d, final Topic topic, final boolean repeated)
    {
        if (repeated)
        {
            return d.answered(Errors.INVALID_REQUEST, "Duplicate topic name.");
        }
        if (!enabled)
        {
            return d.answered(Errors.TOPIC_DELETION_DISABLED, "Topic deletion is disabled.");
        }
        if (topic.isInternal())
        {
            return d.answered(Errors.INVALID_TOPIC_EXCEPTION, "Cannot delete internal topic " + topic.name);
        }
        d.topic = topic; // for the agent
        d.planned = true;
        return d;
    }

    /**
     * A topic answered as created whose files the agent is making (its id {@code id}): handed to the agent — as Kafka's
     * controller deletes a topic it committed — with the checks {@link #check} makes here of a published one; the agent
     * deletes it as published by then, or drops its pending files ({@link #forgetUnmade}).
     */
    private Deletion whenCreated(final Deletion d, final long[] id, final boolean repeated)
    {
        if (repeated)
        {
            return d.answered(Errors.INVALID_REQUEST, "Duplicate topic name.");
        }
        if (!enabled)
        {
            return d.answered(Errors.TOPIC_DELETION_DISABLED, "Topic deletion is disabled.");
        }
        d.creatingId = id;
        d.planned = true;
        return d;
    }

    private int write(final MutableDirectBuffer out, final int outOffset, final short version, final Deletion[] deletions,
        final boolean timedOut)
    {
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        final DeleteTopicsResponseEncoder.DeletableTopicResult r = response.responses(deletions.length);
        for (final Deletion d : deletions)
        {
            r.next().name(d.name);
            if (version >= 6)
            {
                r.topicId(d.idMsb, d.idLsb);
            }
            r.errorCode(d.error(timedOut)).errorMessage(d.message(timedOut));
        }
        return outOffset + response.finish();
    }

    /** One topic of a request and its answer; planned with the topic the agent is to delete. */
    private static final class Deletion extends AdminItem
    {
        final String name;
        final long idMsb;
        final long idLsb;
        final boolean byId;
        /** The topic the agent is to delete (null: nothing to do, or {@link #creatingId}). */
        Topic topic;
        /** The id of the topic, answered as created, to delete once the agent made its files (null: {@link #topic}). */
        long[] creatingId;

        Deletion(final String name, final long idMsb, final long idLsb, final boolean byId)
        {
            this.name = name;
            this.idMsb = idMsb;
            this.idLsb = idLsb;
            this.byId = byId;
        }

        Deletion answered(final short error, final String message)
        {
            answer(error, message);
            return this;
        }

        Deletion notFound()
        {
            return answered(PartitionLookup.notFound(null, byId),
                byId ? "This server does not host this topic ID." : "This server does not host this topic-partition.");
        }
    }

    /** On the admin agent: a topic deleted (or recreated) meanwhile is not found. */
    private void delete(final Deletion d)
    {
        // the current version of the topic (a config change makes a new one), if it is the same topic
        final Topic current = PartitionLookup.live(topics.topic(d.topic != null ? d.topic.name : d.name));
        final long msb = d.topic != null ? d.topic.idMostSignificantBits : d.creatingId[0];
        final long lsb = d.topic != null ? d.topic.idLeastSignificantBits : d.creatingId[1];
        if (current == null && d.creatingId != null && java.util.Arrays.equals(topics.creatingId(d.name), d.creatingId))
        {
            forgetUnmade(d);
            return;
        }
        if (current == null || current.idMostSignificantBits != msb || current.idLeastSignificantBits != lsb)
        {
            d.notFound();
            return;
        }
        if (current.isInternal())
        {
            d.answer(Errors.INVALID_TOPIC_EXCEPTION, "Cannot delete internal topic " + current.name);
            return;
        }
        try
        {
            if (current.hasOfflinePartitions() && admin.creations() != null)
            {
                admin.creations().renameLeftovers(current); // its files failed: what their cleanup left goes first
            }
            if (admin.journal() != null) // before a file is renamed: a replay must not make it again
            {
                admin.journal().deleting(current.name, current.idMostSignificantBits, current.idLeastSignificantBits);
            }
            try
            {
                topics.delete(current); // its logs closed and renamed: the name is free when this answers
            }
            finally
            {
                // a large topic still being made in slices: no more of its files; after the renames, as this may empty
                // the journal (a start must not load its made partitions as a topic)
                if (admin.creations() != null)
                {
                    admin.creations().deleted(current.name, new long[] {current.idMostSignificantBits, current.idLeastSignificantBits});
                }
                // gone for requests even when a rename failed (its next start finishes it): its offsets go; before this
                // agent can create the name again, so a commit to a new topic of that name is checked after this. Every
                // partition it was answered with: OffsetCommit accepts one not made (being made, or offline), so a commit
                // on its way may name it
                deleted.accept(current.name, current.plannedPartitions());
            }
        }
        catch (final java.io.IOException ex)
        {
            org.slf4j.LoggerFactory.getLogger(DeleteTopicsHandler.class).error("deleting topic {} failed", current.name, ex);
            d.answer(Errors.KAFKA_STORAGE_ERROR, "The log directory refused the deletion: " + ex.getMessage());
        }
    }

    /**
     * A topic answered as created and not published — pending, or its files failed (its name kept taken): the deletion
     * journaled (fsynced) so that no start makes it, its pending files dropped (a failed one's leftover directories
     * renamed for deletion first), its name freed ({@link io.ferrite.broker.admin.PendingCreations#forget}).
     */
    private void forgetUnmade(final Deletion d)
    {
        try
        {
            final int partitions = topics.creatingPartitions(d.name);
            if (!admin.creations().forget(d.name, d.creatingId))
            {
                d.notFound();
            }
            else
            {
                deleted.accept(d.name, partitions); // OffsetCommit accepts its partitions: the offsets go, as a made topic's
            }
        }
        catch (final java.io.IOException ex)
        {
            org.slf4j.LoggerFactory.getLogger(DeleteTopicsHandler.class).error("deleting topic {} failed", d.name, ex);
            d.answer(Errors.KAFKA_STORAGE_ERROR, "The log directory refused the deletion: " + ex.getMessage());
        }
    }
}
