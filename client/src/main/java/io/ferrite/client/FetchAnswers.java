package io.ferrite.client;

import io.ferrite.wire.message.FetchResponseDecoder;
import io.ferrite.wire.message.ListOffsetsResponseDecoder;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchDescriptor;
import org.agrona.DirectBuffer;

import java.util.ArrayList;

/**
 * What the consumer does with an answer when it arrives (before {@code poll} hands its records out): a Fetch answer
 * is copied into its broker's {@link NodeFetcher#arrived} buffer, each partition's errors are acted on (kafka-clients'
 * {@code FetchCollector}: OFFSET_OUT_OF_RANGE resets by {@code auto.offset.reset}; NOT_LEADER_OR_FOLLOWER and
 * FENCED_LEADER_EPOCH take the leader the answer names (KIP-951) and refresh the metadata, or back off without a
 * usable hint; UNKNOWN_SERVER_ERROR backs off and fetches again; other retriable errors refresh it and back off;
 * CORRUPT_MESSAGE and the rest stop the partition). An answer is used for a partition only if the Fetch asked for its
 * current fetch offset and generation and its sender still leads it (else it is stale: dropped, fetched again), and each partition's fetch offset moves past the last whole
 * batch so the next Fetch can go before these records are read. A ListOffsets answer sets the positions it was asked
 * for. Allocates nothing once the buffers have grown.
 */
final class FetchAnswers
{
    private final ConsumerConfig config;
    private final ClusterMetadata metadata;
    private final FetchResponseDecoder fetchResponse = new FetchResponseDecoder();
    private final ListOffsetsResponseDecoder listOffsetsResponse = new ListOffsetsResponseDecoder();
    private final RecordBatch batch = new RecordBatch();

    FetchAnswers(final ConsumerConfig config, final ClusterMetadata metadata)
    {
        this.config = config;
        this.metadata = metadata;
    }

    void onFetch(final NodeFetcher f, final short version, final DirectBuffer buffer, final int offset, final int limit,
        final long nowNs)
    {
        final int length = limit - offset;
        f.largestAnswer = Math.max(f.largestAnswer, length);
        f.arrived.bytes.putBytes(0, buffer, offset, length);
        fetchResponse.wrap(f.arrived.bytes, 0, length, version);
        boolean records = false;
        if (fetchResponse.errorCode() != ClientErrors.NONE)
        {
            for (int i = 0; i < f.sent.count; i++)
            {
                f.sent.parts[i].notBeforeNs = nowNs + config.retryBackoffNs;
            }
            metadata.requestUpdate();
        }
        else
        {
            for (var t = fetchResponse.responses(); t.hasNext(); )
            {
                t.next();
                for (var p = t.partitions(); p.hasNext(); )
                {
                    p.next();
                    final FetchPosition fp = find(f, f.arrived.bytes, t.topicOffset(), t.topicLength(), p.partitionIndex());
                    if (fp != null && f.sent.current(fp) && fp.state == FetchPosition.State.FETCHING && leads(fp, f.nodeId) &&
                        partition(fp, p, f.arrived.bytes, nowNs))
                    {
                        fp.bufferedNode = f.nodeId;
                        records = true;
                    }
                }
            }
        }
        for (int i = 0; i < f.sent.count; i++)
        {
            f.sent.parts[i].fetchNode = -1;
        }
        if (records)
        {
            f.sentArrived(length, version);
        }
        else
        {
            f.sentDone();
        }
    }

    /** One partition of a Fetch answer, still asked for at the offset the Fetch named: true if it holds records to hand out. */
    private boolean partition(final FetchPosition fp, final FetchResponseDecoder.PartitionData p, final DirectBuffer buffer,
        final long nowNs)
    {
        final short error = p.errorCode();
        switch (error)
        {
            case ClientErrors.NONE:
                fp.highWatermark = p.highWatermark();
                fp.logStartOffset = p.logStartOffset();
                return advance(fp, buffer, p.recordsOffset(), Math.max(p.recordsLength(), 0));
            case ClientErrors.OFFSET_OUT_OF_RANGE:
                if (fp.position == fp.fetchOffset)
                {
                    fp.reset(config.autoOffsetReset, ClientErrors.OFFSET_OUT_OF_RANGE); // as kafka-clients
                }
                return false;
            case ClientErrors.NOT_LEADER_OR_FOLLOWER:
            case ClientErrors.FENCED_LEADER_EPOCH:
                final FetchResponseDecoder.LeaderIdAndEpoch leader = p.currentLeader();
                final PartitionState ps = fp.metadata();
                if (leader != null && leader.leaderId() >= 0 && ps != null && leader.leaderEpoch() > ps.leaderEpoch &&
                    metadata.nodes.containsKey(leader.leaderId()))
                {
                    ps.leader = leader.leaderId();
                    ps.leaderEpoch = leader.leaderEpoch();
                }
                else
                {
                    fp.notBeforeNs = nowNs + config.retryBackoffNs; // no usable hint: not again at once to the old leader
                }
                metadata.requestUpdate();
                return false;
            case ClientErrors.UNKNOWN_SERVER_ERROR:
                fp.notBeforeNs = nowNs + config.retryBackoffNs; // kafka-clients' FetchCollector logs it and fetches again
                return false;
            case ClientErrors.CORRUPT_MESSAGE:
                fp.fail(error); // kafka-clients' FetchCollector throws it (a KafkaException) rather than retrying
                return false;
            default:
                if (ClientErrors.retriable(error) || ClientErrors.refreshesMetadata(error))
                {
                    fp.notBeforeNs = nowNs + config.retryBackoffNs;
                    metadata.requestUpdate();
                }
                else
                {
                    fp.fail(error);
                }
                return false;
        }
    }

    /** Whether the partition's leader is still {@code node} (else its answer is from a broker that no longer leads it). */
    private static boolean leads(final FetchPosition fp, final int node)
    {
        final PartitionState ps = fp.metadata();
        return ps != null && ps.leader == node;
    }

    /** Moves the fetch offset past the last whole batch of the records; true if there is one. */
    private boolean advance(final FetchPosition fp, final DirectBuffer buffer, final int recordsAt, final int recordsLength)
    {
        long next = -1;
        int at = recordsAt;
        final int end = recordsAt + recordsLength;
        while (end - at >= RecordBatchDescriptor.LOG_OVERHEAD)
        {
            batch.wrap(buffer, at);
            final int size = batch.sizeInBytes();
            if (size < RecordBatchDescriptor.LOG_OVERHEAD || size > end - at)
            {
                break; // the partial batch a size-bounded answer ends with
            }
            next = batch.lastOffset() + 1;
            at += size;
        }
        if (next > fp.fetchOffset)
        {
            fp.fetchOffset = next;
            return true;
        }
        return false;
    }

    /** A ListOffsets answer: each partition asked for and still waiting for it gets its position, or waits again. */
    void onListOffsets(final NodeFetcher f, final short version, final DirectBuffer buffer, final int offset,
        final int limit, final ArrayList<FetchPosition> assigned, final long nowNs)
    {
        f.listOffsetsInFlight = false;
        listOffsetsResponse.wrap(buffer, offset, limit, version);
        for (var t = listOffsetsResponse.topics(); t.hasNext(); )
        {
            t.next();
            for (var p = t.partitions(); p.hasNext(); )
            {
                p.next();
                final FetchPosition fp = resetting(f, assigned, buffer, t.nameOffset(), t.nameLength(), p.partitionIndex());
                if (fp == null || fp.state != FetchPosition.State.RESETTING)
                {
                    continue; // a seek or another reset since (which cleared resetNode): this answer is stale, as kafka-clients drops it
                }
                fp.resetNode = -1;
                final short error = p.errorCode();
                if (error == ClientErrors.NONE)
                {
                    fp.position = p.offset();
                    fp.fetchOffset = p.offset();
                    fp.state = FetchPosition.State.FETCHING;
                }
                else if (ClientErrors.retriable(error) || ClientErrors.refreshesMetadata(error))
                {
                    fp.state = FetchPosition.State.AWAIT_RESET;
                    fp.notBeforeNs = nowNs + config.retryBackoffNs;
                    metadata.requestUpdate();
                }
                else
                {
                    fp.fail(error);
                }
            }
        }
        failResets(f, assigned, nowNs); // the partitions it asked for and the answer left out wait again
    }

    /** The ListOffsets to {@code f} got no answer (or left partitions out): they wait for the next after a backoff. */
    void failResets(final NodeFetcher f, final ArrayList<FetchPosition> assigned, final long nowNs)
    {
        f.listOffsetsInFlight = false;
        for (int i = 0; i < assigned.size(); i++)
        {
            final FetchPosition fp = assigned.get(i);
            if (fp.resetNode == f.nodeId)
            {
                fp.resetNode = -1;
                if (fp.state == FetchPosition.State.RESETTING)
                {
                    fp.state = FetchPosition.State.AWAIT_RESET;
                    fp.notBeforeNs = nowNs + config.retryBackoffNs;
                }
            }
        }
    }

    /** The Fetch to {@code f} got no answer: its partitions may be fetched again after a backoff. */
    void failFetch(final NodeFetcher f, final long nowNs)
    {
        for (int i = 0; i < f.sent.count; i++)
        {
            f.sent.parts[i].fetchNode = -1;
            f.sent.parts[i].notBeforeNs = nowNs + config.retryBackoffNs;
        }
        f.sentDone();
        metadata.requestUpdate();
    }

    private static FetchPosition resetting(final NodeFetcher f, final ArrayList<FetchPosition> assigned,
        final DirectBuffer buffer, final int nameOffset, final int nameLength, final int partition)
    {
        for (int i = 0; i < assigned.size(); i++)
        {
            final FetchPosition p = assigned.get(i);
            if (p.resetNode == f.nodeId && p.partition == partition && p.topic.nameEquals(buffer, nameOffset, nameLength))
            {
                return p;
            }
        }
        return null;
    }

    /** The assigned partition an answer names, or null. */
    static FetchPosition find(final NodeFetcher f, final DirectBuffer buffer, final int nameOffset, final int nameLength,
        final int partition)
    {
        for (int i = 0; i < f.sent.count; i++)
        {
            final FetchPosition p = f.sent.parts[i];
            if (p.partition == partition && p.topic.nameEquals(buffer, nameOffset, nameLength))
            {
                return p;
            }
        }
        return null;
    }
}
