package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogClosedException;
import io.ferrite.log.PartitionLog;
import io.ferrite.log.TimestampOffset;
import io.ferrite.wire.message.ListOffsetsRequestDecoder;
import io.ferrite.wire.message.ListOffsetsRequestDecoder.ListOffsetsPartition;
import io.ferrite.wire.message.ListOffsetsRequestDecoder.ListOffsetsTopic;
import io.ferrite.wire.message.ListOffsetsResponseEncoder;
import io.ferrite.wire.message.ListOffsetsResponseEncoder.ListOffsetsPartitionResponse;
import io.ferrite.wire.message.ListOffsetsResponseEncoder.ListOffsetsTopicResponse;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.collections.LongHashSet;
import org.agrona.collections.ObjectHashSet;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * ListOffsets as Kafka's leader answers a consumer: EARLIEST (and EARLIEST_LOCAL) is the log start
 * offset, LATEST the high watermark (the last stable offset equals it: there are no transactions
 * yet), MAX_TIMESTAMP the first record with the largest timestamp, a timestamp the first record at or
 * after it — both only below the high watermark, else offset -1. Tiered-storage specials
 * (LATEST_TIERED, EARLIEST_PENDING_UPLOAD) answer -1: nothing is tiered. The leader epoch answered (v4+) is
 * Kafka's: the partition's current one for LATEST ({@link Partition#leaderEpoch}), the epoch the log start lies in
 * for EARLIEST, the found record's batch's for a timestamp (-1 for a batch without one); a client's epoch other than
 * the partition's is FENCED_LEADER_EPOCH (older) or UNKNOWN_LEADER_EPOCH (newer).
 *
 * <p>A request that names a partition more than once, or a topic in more than one entry, is
 * answered as Kafka 4.4 answers it (its leader keeps the request in a map by partition): each topic
 * once, with each of its partitions once, and a partition named more than once INVALID_REQUEST
 * without a look at its log. Topics and partitions come in the order first named; Kafka's order is
 * its hash map's, which clients do not rely on (they match answers by name and index). Telling such
 * a request apart allocates nothing (sets kept between requests); only its answer does.
 */
public final class ListOffsetsHandler extends PartitionOffsetsHandler<ListOffsetsTopic, ListOffsetsPartition, ListOffsetsTopicResponse>
{
    static final long LATEST = -1;
    static final long EARLIEST = -2;
    static final long MAX_TIMESTAMP = -3;
    static final long EARLIEST_LOCAL = -4;
    private static final byte READ_COMMITTED = 1;

    /**
     * Topics that do not exist told apart by their names' bytes, pairwise: up to this many per request
     * (a client asks for one it has just seen deleted, or a few); a request naming more is read the
     * allocating way ({@link #answerRepeats}), which tells them apart by name.
     */
    private static final int UNKNOWN_NAMES = 8;
    /** The sets keep room for requests of up to about this many partitions between requests; a larger one's room goes after it. */
    private static final int KEPT_CAPACITY = 4096;

    private final TimestampOffset found = new TimestampOffset();
    /** What tells a request naming a topic or partition twice, kept between requests (this handler's network thread only). */
    private final ObjectHashSet<Topic> namedTopics = new ObjectHashSet<>();
    private final LongHashSet namedPartitions = new LongHashSet();
    private final int[] unknownNameOffsets = new int[UNKNOWN_NAMES];
    private final int[] unknownNameLengths = new int[UNKNOWN_NAMES];
    private ListOffsetsPartitionResponse answers;

    public ListOffsetsHandler(final TopicRegistry topics)
    {
        super(topics, new Request<>(new ListOffsetsRequestDecoder(), ListOffsetsRequestDecoder::topics, ListOffsetsTopic::nameOffset,
            ListOffsetsTopic::nameLength, ListOffsetsTopic::partitions, ListOffsetsPartition::partitionIndex,
            ListOffsetsPartition::currentLeaderEpoch),
            new ArrayResponse<>(new ListOffsetsResponseEncoder(), (r, out, at, version, n) -> r.wrap(out, at, version).topics(n),
                ListOffsetsResponseEncoder::finish));
    }

    @Override
    void topic(final ListOffsetsTopic t, final ListOffsetsTopicResponse answerTopics, final int partitions)
    {
        answers = answerTopics.next().name(t.buffer(), t.nameOffset(), t.nameLength()).partitions(partitions);
    }

    @Override
    void partition(final ListOffsetsPartition p, final Topic topic, final Partition partition, final short error)
    {
        answer(p.partitionIndex(), p.timestamp(), p.messageVersion(), topic, partition, error);
    }

    /** The next partition's answer: {@code error} when it is not NONE, else the offset for {@code timestamp} in its log. */
    private void answer(final int index, final long timestamp, final short version, final Topic topic, final Partition partition,
        final short error)
    {
        answers.next().partitionIndex(index);
        final short e = error == Errors.NONE ? lookUp(partition, timestamp, topic) : error;
        if (e == Errors.NONE)
        {
            answers.errorCode(Errors.NONE).timestamp(found.timestamp).offset(found.offset)
                .leaderEpoch(found.offset < 0 || version < 4 ? -1 : found.leaderEpoch); // the field exists from v4
        }
        else
        {
            answers.errorCode(e).timestamp(-1).offset(-1).leaderEpoch(-1);
        }
    }

    /** A request that names a topic or a partition more than once is answered by {@link #answerRepeats}; others by the walk. */
    @Override
    int answerApart(final ListOffsetsTopic t, final DirectBuffer in, final short version, final MutableDirectBuffer out,
        final int outOffset, final Connection connection)
    {
        return namesAnyTwice(t, in) ? answerRepeats(version, out, outOffset, connection) : WALK;
    }

    /**
     * Whether the request may name a topic in two entries or a partition twice: a topic met again (by
     * identity: the registry has one object each; one that does not exist by its name's bytes), or a
     * partition index met again in its entry — each entry is then a topic of its own, so (entry,
     * index) names a partition. True too past {@value #UNKNOWN_NAMES} unknown topics: {@link
     * #answerRepeats} answers alike when nothing is named twice. Allocates nothing once the sets have
     * grown to the requests' size.
     */
    private boolean namesAnyTwice(final ListOffsetsTopic t, final DirectBuffer in)
    {
        // a huge request grew them: shrunk when the last request used an eighth of them or less, else every
        // later request would clear the whole of them; steady large requests keep their room (no rehashing)
        final boolean shrink = namedPartitions.capacity() > KEPT_CAPACITY && namedPartitions.size() * 8 < namedPartitions.capacity()
            || namedTopics.capacity() > KEPT_CAPACITY && namedTopics.size() * 8 < namedTopics.capacity();
        namedTopics.clear();
        namedPartitions.clear();
        if (shrink)
        {
            namedPartitions.compact();
            namedTopics.compact();
        }
        int unknown = 0;
        for (long entry = 0; t.hasNext(); entry++)
        {
            t.next();
            final Topic topic = topics.topic(in, t.nameOffset(), t.nameLength());
            if (topic != null ? !namedTopics.add(topic) : unknown == UNKNOWN_NAMES || unknownNamedBefore(in, t, unknown))
            {
                return true;
            }
            if (topic == null)
            {
                unknownNameOffsets[unknown] = t.nameOffset();
                unknownNameLengths[unknown++] = t.nameLength();
            }
            for (final ListOffsetsPartition p = t.partitions(); p.hasNext(); )
            {
                p.next();
                if (!namedPartitions.add(entry << 32 | (p.partitionIndex() & 0xFFFF_FFFFL)))
                {
                    return true;
                }
            }
        }
        return false;
    }

    /** Whether topic entry {@code t}'s name is one of the {@code unknown} names recorded before it. */
    private boolean unknownNamedBefore(final DirectBuffer in, final ListOffsetsTopic t, final int unknown)
    {
        for (int i = 0; i < unknown; i++)
        {
            if (unknownNameLengths[i] == t.nameLength() && sameBytes(in, unknownNameOffsets[i], t.nameOffset(), t.nameLength()))
            {
                return true;
            }
        }
        return false;
    }

    private static boolean sameBytes(final DirectBuffer in, final int a, final int b, final int length)
    {
        for (int i = 0; i < length; i++)
        {
            if (in.getByte(a + i) != in.getByte(b + i))
            {
                return false;
            }
        }
        return true;
    }

    /** A partition as the request names it: its first entry's fields, and how many entries name it. */
    private record Named(long timestamp, int currentLeaderEpoch, int times)
    {
        Named again()
        {
            return new Named(timestamp, currentLeaderEpoch, times + 1);
        }
    }

    /**
     * Kafka's answer to a request that may name a topic or a partition twice (see the class comment):
     * the request read into each topic once and each of its partitions once, then answered from that.
     */
    private int answerRepeats(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final Map<String, Map<Integer, Named>> asked = new LinkedHashMap<>();
        for (final ListOffsetsTopic t = request.topicsAgain(); t.hasNext(); )
        {
            t.next();
            final Map<Integer, Named> partitions = asked.computeIfAbsent(t.name(), name -> new LinkedHashMap<>());
            for (final ListOffsetsPartition p = t.partitions(); p.hasNext(); )
            {
                p.next();
                partitions.merge(p.partitionIndex(), new Named(p.timestamp(), p.currentLeaderEpoch(), 1), (first, next) -> first.again());
            }
        }
        final ListOffsetsTopicResponse answerTopics = startResponse(out, outOffset, version, asked.size());
        for (final Map.Entry<String, Map<Integer, Named>> t : asked.entrySet())
        {
            final Topic topic = t.getKey() == null ? null : topics.topic(t.getKey());
            final boolean authorized = t.getKey() == null || Access.topic(connection, AclCodes.DESCRIBE, t.getKey());
            answers = answerTopics.next().name(t.getKey()).partitions(t.getValue().size());
            for (final Map.Entry<Integer, Named> p : t.getValue().entrySet())
            {
                final Named n = p.getValue();
                if (n.times() > 1)
                {
                    answers.next().partitionIndex(p.getKey()).errorCode(Errors.INVALID_REQUEST).timestamp(-1).offset(-1).leaderEpoch(-1);
                    continue;
                }
                final Partition partition = PartitionLookup.partition(topic, p.getKey());
                answer(p.getKey(), n.timestamp(), version, topic, partition, authorized
                    ? error(topic, p.getKey(), partition, n.currentLeaderEpoch()) : Errors.TOPIC_AUTHORIZATION_FAILED);
            }
        }
        return endResponse(outOffset);
    }

    /**
     * Looks the timestamp up into {@link #found}; the partition's error: a log closed before or under
     * the lookup (deleted, or the broker shutting down) answers as a partition that is gone.
     */
    private short lookUp(final Partition partition, final long timestamp, final Topic topic)
    {
        final PartitionLog log = partition.log;
        try
        {
            lookUp(partition, timestamp);
        }
        catch (final LogClosedException gone)
        {
            return PartitionLookup.closed(topic, false);
        }
        return log.isClosed() ? PartitionLookup.closed(topic, false) : Errors.NONE;
    }

    /**
     * As Kafka 4.4's Partition.fetchOffsetForTimestamp: what a consumer of the request's isolation level
     * may fetch ends at the last stable offset under read_committed, else at the high watermark; the
     * latest offset is that end, and an offset found by timestamp at or past it is no answer. Its leader epoch as
     * Kafka's: the current one for the latest, the log start's for the earliest, the batch's for a timestamp.
     */
    private void lookUp(final Partition partition, final long timestamp)
    {
        final PartitionLog log = partition.log;
        final long fetchable = ((ListOffsetsRequestDecoder)request.decoder()).isolationLevel() == READ_COMMITTED ?
            log.transactions().lastStableOffset() : log.highWatermark();
        found.timestamp = -1;
        found.offset = -1;
        found.leaderEpoch = -1;
        if (timestamp == EARLIEST || timestamp == EARLIEST_LOCAL)
        {
            found.offset = log.logStartOffset();
            found.leaderEpoch = log.epochForOffset(found.offset);
        }
        else if (timestamp == LATEST)
        {
            found.offset = fetchable;
            found.leaderEpoch = partition.leaderEpoch();
        }
        else if (timestamp == MAX_TIMESTAMP || timestamp >= 0)
        {
            if (timestamp == MAX_TIMESTAMP)
            {
                log.maxTimestampOffset(found);
            }
            else
            {
                log.offsetForTimestamp(timestamp, found);
            }
            if (!found.found() || found.offset >= fetchable)
            {
                found.timestamp = -1;
                found.offset = -1;
            }
        }
    }
}
