package io.ferrite.client;

import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.OffsetFetchRequestEncoder;
import io.ferrite.wire.message.OffsetFetchResponseDecoder;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;

/**
 * Reads the group's committed offsets with OffsetFetch from the coordinator {@link GroupOffsets} keeps: the first
 * position of each partition assigned without one ({@link FetchPosition.State#AWAIT_COMMITTED}: the committed offset,
 * or {@code auto.offset.reset} when none is committed, as kafka-clients' {@code updateFetchPositions}), and the answer
 * to {@link Consumer#committed} (one partition at a time). {@code RequireStable} is set, as kafka-clients sets it: a
 * partition with a transactional offset commit pending answers UNSTABLE_OFFSET_COMMIT and is asked again. Errors as
 * kafka-clients 4.4's {@code OffsetFetchResponseHandler}: of a partition's errors only UNSTABLE_OFFSET_COMMIT is
 * retried, any other stops the partition (or fails the lookup: UNKNOWN_TOPIC_OR_PARTITION, say); of the answer's
 * errors the retriable ones are retried (COORDINATOR_LOAD_IN_PROGRESS, say), NOT_COORDINATOR and
 * COORDINATOR_NOT_AVAILABLE (and a lost connection) after the coordinator is found again, the others stop what was
 * asked (GROUP_AUTHORIZATION_FAILED, say). Each lookup is its own request
 * context, so the answer to a lookup given up (its caller timed out) is never taken for a later lookup's.
 */
final class CommittedOffsets
{
    /** Versions 8 and up batch groups (the same answer for one group); 10 names topics by id only. */
    private static final short MAX_OFFSET_FETCH_VERSION = 7;
    /** The first positions' request context; a lookup's is {@link #lookupContext}, new for each lookup. */
    static final Object POSITIONS = new Object();

    private enum Lookup
    {
        IDLE, DUE, IN_FLIGHT, DONE
    }

    private final ConsumerConfig config;
    private final GroupOffsets group;
    private final OffsetFetchRequestEncoder request = new OffsetFetchRequestEncoder();
    private final OffsetFetchResponseDecoder response = new OffsetFetchResponseDecoder();
    private boolean positionsInFlight;
    private long positionsNotBeforeNs;

    private Lookup lookup = Lookup.IDLE;
    /** The current lookup's request context (a lookup allocates: the blocking {@link Consumer#committed} only). */
    private Object lookupContext;
    private UnsafeBuffer lookupTopic;
    private int lookupPartition;
    private long lookupNotBeforeNs;
    /** The lookup's outcome once {@link Lookup#DONE}: the offset (-1 for none) or an error. */
    private long lookupOffset;
    private short lookupError;

    CommittedOffsets(final ConsumerConfig config, final GroupOffsets group)
    {
        this.config = config;
        this.group = group;
    }

    boolean positionsInFlight()
    {
        return positionsInFlight;
    }

    boolean queryPending()
    {
        return lookup == Lookup.DUE || lookup == Lookup.IN_FLIGHT;
    }

    int doWork(final ArrayList<FetchPosition> assigned, final long nowNs)
    {
        NodeConnection c = group.ready();
        int work = 0;
        if (c != null && !positionsInFlight && nowNs - positionsNotBeforeNs >= 0 && count(assigned, null) > 0)
        {
            work += sendPositions(c, assigned, nowNs);
        }
        c = group.ready();
        if (c != null && lookup == Lookup.DUE && nowNs - lookupNotBeforeNs >= 0)
        {
            final short version = c.version(ApiKeys.OFFSET_FETCH, MAX_OFFSET_FETCH_VERSION);
            final int body = begin(c, version);
            request.topics(1).next().name(lookupTopic, 0, lookupTopic.capacity()).partitionIndexes(1).addInt32(lookupPartition);
            finish(c, version, body, lookupContext, nowNs);
            lookup = Lookup.IN_FLIGHT;
            work++;
        }
        return work;
    }

    /** The assigned partitions waiting for their committed offset, of {@code topic} (any topic if null). */
    private static int count(final ArrayList<FetchPosition> assigned, final TopicState topic)
    {
        int count = 0;
        for (int i = 0; i < assigned.size(); i++)
        {
            final FetchPosition p = assigned.get(i);
            count += p.state == FetchPosition.State.AWAIT_COMMITTED && (topic == null || p.topic == topic) ? 1 : 0;
        }
        return count;
    }

    private int begin(final NodeConnection c, final short version)
    {
        final int body = c.begin(ApiKeys.OFFSET_FETCH, version);
        request.wrap(c.buffer(), body, version).groupId(group.groupIdBytes, 0, group.groupIdBytes.capacity());
        return body;
    }

    private void finish(final NodeConnection c, final short version, final int body, final Object context, final long nowNs)
    {
        if (version >= 7)
        {
            request.requireStable(true);
        }
        c.commit(ApiKeys.OFFSET_FETCH, version, body + request.finish(), context, true, nowNs);
    }

    private int sendPositions(final NodeConnection c, final ArrayList<FetchPosition> assigned, final long nowNs)
    {
        final short version = c.version(ApiKeys.OFFSET_FETCH, MAX_OFFSET_FETCH_VERSION);
        int topics = 0;
        TopicState last = null;
        for (int i = 0; i < assigned.size(); i++)
        {
            final FetchPosition p = assigned.get(i);
            if (p.state == FetchPosition.State.AWAIT_COMMITTED && p.topic != last)
            {
                topics++;
                last = p.topic;
            }
        }
        final int body = begin(c, version);
        final OffsetFetchRequestEncoder.OffsetFetchRequestTopic t = request.topics(topics);
        last = null;
        for (int i = 0; i < assigned.size(); i++)
        {
            final FetchPosition p = assigned.get(i);
            if (p.state == FetchPosition.State.AWAIT_COMMITTED && p.topic != last)
            {
                last = p.topic;
                final var indexes = t.next().name(p.topic.nameBytes, 0, p.topic.nameBytes.capacity())
                    .partitionIndexes(count(assigned, p.topic));
                for (int j = i; j < assigned.size(); j++)
                {
                    final FetchPosition q = assigned.get(j);
                    if (q.topic == p.topic && q.state == FetchPosition.State.AWAIT_COMMITTED)
                    {
                        indexes.addInt32(q.partition);
                    }
                }
            }
        }
        for (int i = 0; i < assigned.size(); i++)
        {
            final FetchPosition p = assigned.get(i);
            if (p.state == FetchPosition.State.AWAIT_COMMITTED)
            {
                p.state = FetchPosition.State.FETCHING_COMMITTED;
            }
        }
        finish(c, version, body, POSITIONS, nowNs);
        positionsInFlight = true;
        return 1;
    }

    void onResponse(final Object context, final short version, final DirectBuffer buffer, final int offset,
        final int limit, final ArrayList<FetchPosition> assigned, final long nowNs)
    {
        response.wrap(buffer, offset, limit, version);
        final short error = version >= 2 ? response.errorCode() : ClientErrors.NONE;
        if (error == ClientErrors.NOT_COORDINATOR || error == ClientErrors.COORDINATOR_NOT_AVAILABLE)
        {
            group.coordinatorUnknown();
        }
        if (context != POSITIONS)
        {
            onLookup(context, error, buffer, nowNs);
            return;
        }
        positionsInFlight = false;
        if (error != ClientErrors.NONE)
        {
            retryOrFail(assigned, error, nowNs);
            return;
        }
        for (var t = response.topics(); t.hasNext(); )
        {
            t.next();
            for (var p = t.partitions(); p.hasNext(); )
            {
                p.next();
                final FetchPosition fp = waiting(assigned, buffer, t.nameOffset(), t.nameLength(), p.partitionIndex());
                if (fp == null)
                {
                    continue; // sought since: the seek wins, as kafka-clients drops an offset for a partition with a position
                }
                final short e = p.errorCode();
                if (e == ClientErrors.NONE && p.committedOffset() >= 0)
                {
                    fp.seek(p.committedOffset());
                }
                else if (e == ClientErrors.NONE)
                {
                    fp.reset(config.autoOffsetReset, ClientErrors.NO_OFFSET_FOR_PARTITION); // none committed
                }
                else if (e == ClientErrors.UNSTABLE_OFFSET_COMMIT)
                {
                    fp.state = FetchPosition.State.AWAIT_COMMITTED; // UNSTABLE_OFFSET_COMMIT: a transaction's commit pending
                    positionsNotBeforeNs = nowNs + config.retryBackoffNs;
                }
                else
                {
                    fp.fail(e);
                }
            }
        }
        retryOrFail(assigned, ClientErrors.COORDINATOR_LOAD_IN_PROGRESS, nowNs); // those the answer left out ask again
    }

    /** The positions' OffsetFetch failed with {@code error}: those it asked for ask again if retriable, else stop. */
    void retryOrFail(final ArrayList<FetchPosition> assigned, final short error, final long nowNs)
    {
        positionsInFlight = false;
        final boolean retry = retried(error);
        for (int i = 0; i < assigned.size(); i++)
        {
            final FetchPosition p = assigned.get(i);
            if (p.state == FetchPosition.State.FETCHING_COMMITTED)
            {
                if (retry)
                {
                    p.state = FetchPosition.State.AWAIT_COMMITTED;
                    positionsNotBeforeNs = nowNs + config.retryBackoffNs;
                }
                else
                {
                    p.fail(error);
                }
            }
        }
    }

    /**
     * The answer's errors asked again: kafka-clients' handler raises a retriable one as retriable (its caller asks
     * again), any other as a KafkaException; a lost connection is retriable too.
     */
    private static boolean retried(final short error)
    {
        return ClientErrors.retriable(error) || error == ClientErrors.NETWORK_EXCEPTION;
    }

    /** An error that is not retriable (from FindCoordinator, or the consumer closes): a lookup under way fails with it. */
    void failAll(final short error)
    {
        if (queryPending())
        {
            lookup = Lookup.DONE;
            lookupError = error;
        }
    }

    /** The lookup's OffsetFetch failed without an answer (the connection closed): asked again. */
    void failed(final Object context, final ArrayList<FetchPosition> assigned, final short error, final long nowNs)
    {
        group.coordinatorUnknown();
        if (context != POSITIONS)
        {
            if (context == lookupContext && lookup == Lookup.IN_FLIGHT)
            {
                lookup = Lookup.DUE;
                lookupNotBeforeNs = nowNs + config.retryBackoffNs;
            }
        }
        else
        {
            retryOrFail(assigned, error == ClientErrors.CLIENT_CLOSED ? error : ClientErrors.NETWORK_EXCEPTION, nowNs);
        }
    }

    private void onLookup(final Object context, final short error, final DirectBuffer buffer, final long nowNs)
    {
        if (context != lookupContext || lookup != Lookup.IN_FLIGHT)
        {
            return; // an earlier lookup's, whose caller gave up (timed out)
        }
        short e = error;
        long committed = -1;
        if (e == ClientErrors.NONE)
        {
            for (var t = response.topics(); t.hasNext(); )
            {
                t.next();
                for (var p = t.partitions(); p.hasNext(); )
                {
                    p.next();
                    if (p.partitionIndex() == lookupPartition &&
                        TopicState.nameEquals(lookupTopic, buffer, t.nameOffset(), t.nameLength()))
                    {
                        e = p.errorCode();
                        committed = p.committedOffset();
                    }
                }
            }
        }
        final boolean retry = error != ClientErrors.NONE ? retried(error) : e == ClientErrors.UNSTABLE_OFFSET_COMMIT;
        if (retry)
        {
            lookup = Lookup.DUE;
            lookupNotBeforeNs = nowNs + config.retryBackoffNs;
            return;
        }
        lookup = Lookup.DONE;
        lookupError = e;
        lookupOffset = committed < 0 ? -1 : committed;
    }

    private static FetchPosition waiting(final ArrayList<FetchPosition> assigned, final DirectBuffer buffer,
        final int nameOffset, final int nameLength, final int partition)
    {
        for (int i = 0; i < assigned.size(); i++)
        {
            final FetchPosition p = assigned.get(i);
            if (p.state == FetchPosition.State.FETCHING_COMMITTED && p.partition == partition &&
                p.topic.nameEquals(buffer, nameOffset, nameLength))
            {
                return p;
            }
        }
        return null;
    }

    /** Starts a lookup of the partition's committed offset (the previous one, done or given up, is forgotten). */
    void startLookup(final String topic, final int partition, final long nowNs)
    {
        lookupTopic = new UnsafeBuffer(topic.getBytes(StandardCharsets.UTF_8));
        lookupPartition = partition;
        lookupContext = new Object();
        lookupNotBeforeNs = nowNs;
        lookup = Lookup.DUE;
    }

    boolean lookupInFlight()
    {
        return lookup == Lookup.IN_FLIGHT;
    }

    boolean lookupDone()
    {
        return lookup == Lookup.DONE;
    }

    /** Ends the lookup (done or given up): its answer, if one comes, is dropped. */
    void endLookup()
    {
        lookup = Lookup.IDLE;
    }

    long lookupOffset()
    {
        return lookupOffset;
    }

    short lookupError()
    {
        return lookupError;
    }
}
