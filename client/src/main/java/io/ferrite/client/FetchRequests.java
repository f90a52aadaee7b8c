package io.ferrite.client;

import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.FetchRequestEncoder;
import io.ferrite.wire.message.ListOffsetsRequestEncoder;

import java.util.ArrayList;

/**
 * Writes the consumer's requests to one broker: a Fetch naming every partition it leads that is fetching and not in
 * a fetch already, and a ListOffsets for those waiting for a reset. The assigned partitions are kept grouped by
 * topic, so each request names a topic once. Allocates nothing.
 */
final class FetchRequests
{
    /** Versions 13 and up name topics by id only; 12 has the leader hint (KIP-951's CurrentLeader) in its answer. */
    private static final short MAX_FETCH_VERSION = 12;
    /** Version 7 is the last before the fields this consumer does not send (timeouts, tiered storage). */
    private static final short MAX_LIST_OFFSETS_VERSION = 7;

    private final ConsumerConfig config;
    private final FetchRequestEncoder fetch = new FetchRequestEncoder();
    private final ListOffsetsRequestEncoder listOffsets = new ListOffsetsRequestEncoder();

    FetchRequests(final ConsumerConfig config)
    {
        this.config = config;
    }

    /** Whether {@code p} goes in the next Fetch ({@code reset} false) or ListOffsets ({@code reset} true) to {@code node}. */
    private static boolean eligible(final FetchPosition p, final boolean reset, final int node, final long nowNs)
    {
        final PartitionState ps = p.metadata();
        if (ps == null || ps.leader != node || nowNs - p.notBeforeNs < 0)
        {
            return false;
        }
        return reset ? p.state == FetchPosition.State.AWAIT_RESET : p.state == FetchPosition.State.FETCHING && p.fetchNode < 0;
    }

    /** The topics with a partition eligible; 0 if none. */
    private static int topics(final ArrayList<FetchPosition> assigned, final boolean reset, final int node, final long nowNs)
    {
        int topics = 0;
        TopicState last = null;
        for (int i = 0; i < assigned.size(); i++)
        {
            final FetchPosition p = assigned.get(i);
            if (eligible(p, reset, node, nowNs) && p.topic != last)
            {
                topics++;
                last = p.topic;
            }
        }
        return topics;
    }

    /** Where the topic of {@code assigned[from]} ends (the partitions are grouped by topic). */
    private static int topicEnd(final ArrayList<FetchPosition> assigned, final int from)
    {
        int end = from;
        while (end < assigned.size() && assigned.get(end).topic == assigned.get(from).topic)
        {
            end++;
        }
        return end;
    }

    private static int eligibleIn(final ArrayList<FetchPosition> assigned, final int from, final int to, final boolean reset,
        final int node, final long nowNs)
    {
        int count = 0;
        for (int i = from; i < to; i++)
        {
            count += eligible(assigned.get(i), reset, node, nowNs) ? 1 : 0;
        }
        return count;
    }

    /** A Fetch to {@code c} for the partitions it leads that may be fetched: 1 if sent, else 0. */
    int sendFetch(final NodeConnection c, final NodeFetcher f, final ArrayList<FetchPosition> assigned, final long nowNs)
    {
        final short version = c.version(ApiKeys.FETCH, MAX_FETCH_VERSION);
        final int topics = topics(assigned, false, c.nodeId, nowNs);
        if (topics == 0 || version < FetchRequestEncoder.LOWEST_VERSION)
        {
            return 0;
        }
        final int body = c.begin(ApiKeys.FETCH, version);
        fetch.wrap(c.buffer(), body, version).replicaId(-1).maxWaitMs(config.fetchMaxWaitMs).minBytes(config.fetchMinBytes)
            .maxBytes(config.fetchMaxBytes).isolationLevel(config.isolationLevel.id).sessionId(0).sessionEpoch(-1);
        final FetchRequestEncoder.FetchTopic t = fetch.topics(topics);
        for (int i = 0; i < assigned.size(); )
        {
            final TopicState topic = assigned.get(i).topic;
            final int end = topicEnd(assigned, i);
            final int count = eligibleIn(assigned, i, end, false, c.nodeId, nowNs);
            if (count > 0)
            {
                final FetchRequestEncoder.FetchPartition fp =
                    t.next().topic(topic.nameBytes, 0, topic.nameBytes.capacity()).partitions(count);
                for (int j = i; j < end; j++)
                {
                    final FetchPosition p = assigned.get(j);
                    if (eligible(p, false, c.nodeId, nowNs))
                    {
                        fp.next().partition(p.partition).currentLeaderEpoch(p.metadata().leaderEpoch).fetchOffset(p.fetchOffset)
                            .lastFetchedEpoch(-1).logStartOffset(-1).partitionMaxBytes(config.maxPartitionFetchBytes);
                        p.fetchNode = c.nodeId;
                        f.sent.add(p, p.fetchOffset);
                    }
                }
            }
            i = end;
        }
        fetch.forgottenTopicsData(0);
        fetch.rackId("");
        final int length = fetch.finish();
        c.commit(ApiKeys.FETCH, version, body + length, f, true, nowNs);
        f.fetchInFlight = true;
        return 1;
    }

    /** A ListOffsets to {@code c} for the partitions it leads that wait for a reset: 1 if sent, else 0. */
    int sendListOffsets(final NodeConnection c, final NodeFetcher f, final ArrayList<FetchPosition> assigned,
        final long nowNs)
    {
        final short version = c.version(ApiKeys.LIST_OFFSETS, MAX_LIST_OFFSETS_VERSION);
        final int topics = topics(assigned, true, c.nodeId, nowNs);
        if (topics == 0 || version < ListOffsetsRequestEncoder.LOWEST_VERSION)
        {
            return 0;
        }
        final int body = c.begin(ApiKeys.LIST_OFFSETS, version);
        listOffsets.wrap(c.buffer(), body, version).replicaId(-1).isolationLevel(config.isolationLevel.id);
        final ListOffsetsRequestEncoder.ListOffsetsTopic t = listOffsets.topics(topics);
        for (int i = 0; i < assigned.size(); )
        {
            final TopicState topic = assigned.get(i).topic;
            final int end = topicEnd(assigned, i);
            final int count = eligibleIn(assigned, i, end, true, c.nodeId, nowNs);
            if (count > 0)
            {
                final ListOffsetsRequestEncoder.ListOffsetsPartition lp =
                    t.next().name(topic.nameBytes, 0, topic.nameBytes.capacity()).partitions(count);
                for (int j = i; j < end; j++)
                {
                    final FetchPosition p = assigned.get(j);
                    if (eligible(p, true, c.nodeId, nowNs))
                    {
                        lp.next().partitionIndex(p.partition).currentLeaderEpoch(p.metadata().leaderEpoch)
                            .timestamp(p.resetTimestamp);
                        p.state = FetchPosition.State.RESETTING;
                        p.resetNode = c.nodeId;
                    }
                }
            }
            i = end;
        }
        final int length = listOffsets.finish();
        c.commit(ApiKeys.LIST_OFFSETS, version, body + length, f, true, nowNs);
        f.listOffsetsInFlight = true;
        return 1;
    }
}
