package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import org.agrona.DirectBuffer;

/**
 * A topic or partition as a request names it, and the error Kafka answers when it is not there.
 * The handlers that answer a missing topic or partition with an error decide it here (OffsetFetch
 * does not check partitions at all: an offset never committed is -1 there). Allocates nothing:
 * Produce and Fetch call it for every partition of every request.
 *
 * <p>A deleted topic stays in the hands of the requests that looked it up before the delete; they
 * answer as for an unknown topic ({@link #live}). Which error that is, is each API's own: Fetch and
 * Metadata look the topic's liveness up first, so a deleted topic named by id is UNKNOWN_TOPIC_ID
 * there, while Produce and OffsetCommit ask {@link #notFound} with the topic they found, so it is
 * UNKNOWN_TOPIC_OR_PARTITION there (kept as they answered before this helper existed).
 */
public final class PartitionLookup
{
    private PartitionLookup()
    {
    }

    /**
     * A partition request's topic: by id when the request's version names topics by id, else by the
     * UTF-8 bytes of its name in {@code in} (the decoders give 0 for an id and -1 for a name a version
     * does not have, so both may be passed whatever the version).
     */
    public static Topic find(final TopicRegistry topics, final boolean byId, final long idMsb, final long idLsb,
        final DirectBuffer in, final int nameOffset, final int nameLength)
    {
        return byId ? topics.topic(idMsb, idLsb) : topics.topic(in, nameOffset, nameLength);
    }

    /** The topic, or null when there is none or it has been deleted. */
    public static Topic live(final Topic topic)
    {
        return topic == null || topic.isDeleted() ? null : topic;
    }

    /** The partition, or null when the topic is missing or deleted or has no partition {@code index}. */
    public static Partition partition(final Topic topic, final int index)
    {
        return topic == null || topic.isDeleted() ? null : topic.partition(index);
    }

    /**
     * Whether partition {@code index} of live {@code topic} is in what Kafka 4.4 checks some requests against, its
     * metadata: made, or still being made in slices ({@link Topic#isBeingMade}). OffsetCommit and TxnOffsetCommit
     * accept such a partition and ElectLeaders answers it from the controller's view, as Kafka's do.
     */
    public static boolean inMetadata(final Topic topic, final int index)
    {
        return partition(topic, index) != null || topic != null && !topic.isDeleted() && topic.isBeingMade(index);
    }

    /**
     * The partition count of topic {@code name} (null: none) when it is answered as created and not published yet
     * ({@link TopicRegistry#creatingPartitions}: a small topic whose files the admin agent makes after the answer), else
     * 0. Read it before the published topic: a topic leaves the ones being made only once published.
     */
    public static int answered(final TopicRegistry topics, final String name)
    {
        return name == null ? 0 : topics.creatingPartitions(name);
    }

    /**
     * {@link #inMetadata(Topic, int)}, or partition {@code index} of a topic not published that was answered as created
     * with {@code answered} partitions ({@link #answered}, read before {@code topic} was looked up): Kafka 4.4's broker has
     * a topic in its metadata once its CreateTopics is answered, and checks OffsetCommit, TxnOffsetCommit and OffsetDelete
     * against that, not its logs.
     */
    public static boolean inMetadata(final Topic topic, final int answered, final int index)
    {
        return inMetadata(topic, index) || live(topic) == null && index >= 0 && index < answered;
    }

    /**
     * The error for a topic or partition that is not there, given what the lookup found: with the
     * topic named by id and no topic found, UNKNOWN_TOPIC_ID; else UNKNOWN_TOPIC_OR_PARTITION (for a
     * known topic id without that partition too, as Kafka answers).
     */
    public static short notFound(final Topic topic, final boolean byId)
    {
        return topic == null && byId ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION;
    }

    /**
     * {@link #notFound}, but for partition {@code index} of a live topic whose files are still being made in slices
     * ({@link Topic#isBeingMade}): NOT_LEADER_OR_FOLLOWER, Kafka 4.4's answer for a partition its broker knows from the
     * metadata and does not host yet (the clients refresh their metadata and retry); for one whose files failed
     * ({@link Topic#isOffline}): KAFKA_STORAGE_ERROR, Kafka 4.4's answer for a partition whose log directory failed.
     */
    public static short notFound(final Topic topic, final boolean byId, final int index)
    {
        if (topic != null && !topic.isDeleted() && topic.isBeingMade(index))
        {
            return topic.isOffline(index) ? Errors.KAFKA_STORAGE_ERROR : Errors.NOT_LEADER_OR_FOLLOWER;
        }
        return notFound(topic, byId);
    }

    /**
     * The error for a read whose partition's log closed under the request ({@code LogClosedException}):
     * a topic deleted meanwhile is not found, as Kafka answers once the partition is gone (by id:
     * UNKNOWN_TOPIC_ID); otherwise the broker is shutting down, and Kafka's answer for a partition it
     * still knows but no longer hosts is NOT_LEADER_OR_FOLLOWER — either way a client's retriable
     * error, never a dropped connection.
     */
    public static short closed(final Topic topic, final boolean byId)
    {
        return topic.isDeleted() ? notFound(null, byId) : Errors.NOT_LEADER_OR_FOLLOWER;
    }
}
