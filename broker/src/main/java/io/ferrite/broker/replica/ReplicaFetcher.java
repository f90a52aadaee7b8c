package io.ferrite.broker.replica;

import io.ferrite.broker.Errors;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.log.AppendResult;
import io.ferrite.log.PartitionLog;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.FetchRequestEncoder;
import io.ferrite.wire.message.FetchResponseDecoder;
import io.ferrite.wire.message.RequestHeaderEncoder;
import io.ferrite.wire.message.ResponseHeaderDecoder;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.UnsafeBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The follower's fetcher of the partitions one leader broker leads for it (Kafka's
 * {@code ReplicaFetcherThread}, {@code num.replica.fetchers} = 1 per source broker): an Agrona agent on
 * its own thread, with its own blocking connection to the leader. A duty cycle is one Fetch round trip —
 * Fetch v17 with {@code replica_state} (this node, broker epoch -1: there is no broker registration yet),
 * a full fetch each time (session id 0, epoch -1), each partition from this node's log end — then each
 * partition's records handed to the partition's log thread (the single writer) through its
 * {@link FollowedPartition}, and the round ends once every log thread is done with them, so the next
 * request names the new log ends, which is what tells the leader where this follower is (its high
 * watermark and acks=all answers move with it). The request, the answer and the decoders are reused:
 * nothing is allocated per round ({@code LogThread.executeBounded} queues without a node per task).
 *
 * <p>Errors as Kafka's fetcher takes them: NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH,
 * UNKNOWN_LEADER_EPOCH and the rest back the partition off {@code replica.fetch.backoff.ms}; a lost
 * connection is made again after the same backoff.
 *
 * <p>Truncation on fetch, as Kafka 4.4's fetcher (KIP-595's for Fetch v12+, {@code AbstractFetcherThread}): each
 * partition's fetch names its {@code last_fetched_epoch}, the latest epoch of this log's epoch cache (the epoch of
 * its last batch: a follower assigns no epoch of its own); a leader whose epoch cache disagrees answers
 * {@code diverging_epoch} instead of records, and the partition's log thread — still the single writer — truncates
 * this log to min(the leader's end of that epoch, this log's own end of it) ({@link FollowedPartition#postDiverged});
 * the partition is not fetched until the truncation is done, then fetches from the new log end, checked again with
 * its new last epoch. An OFFSET_OUT_OF_RANGE is resolved by the leader's offsets ({@link #outOfRange}): its log end
 * below this log's is a truncation to it, its log start above this log's end a full truncation to start there. A
 * truncation that fails (a storage error) is the one thing that stops a partition's fetching: the explicit, logged
 * {@link FollowedPartition#FAILED} state. The high watermark never stays above the new log end (the log lowers it).
 */
public final class ReplicaFetcher implements Agent
{
    private static final Logger LOG = LoggerFactory.getLogger(ReplicaFetcher.class);
    private static final short FETCH_VERSION = 17;
    /** Kafka's broker epoch when the follower has none (it is not registered with a controller). */
    private static final long NO_BROKER_EPOCH = -1;

    private final int nodeId;
    private final int leaderId;
    private final LogThread[] logThreads;
    private final FetcherSettings settings;
    private final FetcherChannel channel;
    private final String roleName;
    private final UnsafeBuffer out;
    private final ByteBuffer outBytes;
    private final RequestHeaderEncoder header = new RequestHeaderEncoder();
    private final FetchRequestEncoder request = new FetchRequestEncoder();
    private final ResponseHeaderDecoder responseHeader = new ResponseHeaderDecoder();
    private final FetchResponseDecoder response = new FetchResponseDecoder();
    private final LeaderOffsets leaderOffsets;
    /** The partitions fetched from this leader. */
    private final FollowedSet partitions = new FollowedSet();
    /** This round's partitions, in the request's order. */
    private FollowedPartition[] asked = new FollowedPartition[8];
    private FollowedPartition[] posted = new FollowedPartition[8];
    private int correlationId;
    /** This answer's partitions handed to their log threads so far. */
    private int dispatched;
    private long reconnectAtMs;
    private volatile boolean closing;
    private volatile Thread thread; // written in onStart, read by add and requestClose on other threads
    /** Rounds answered (tests: a round after another is a fetch that saw what the first one appended). */
    private volatile long rounds;
    /** Connects that failed and connections lost (a timeout among them), each followed by the backoff. */
    private volatile long failures;

    ReplicaFetcher(final int nodeId, final int leaderId, final InetSocketAddress leader, final LogThread[] logThreads,
        final FetcherSettings settings)
    {
        this.nodeId = nodeId;
        this.leaderId = leaderId;
        this.logThreads = logThreads;
        this.settings = settings;
        try
        {
            this.channel = new FetcherChannel(leader, settings, 1 << 20);
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException("a selector for the fetcher from " + leaderId, ex);
        }
        this.roleName = "ferrite-replica-fetcher-" + leaderId;
        this.outBytes = ByteBuffer.allocateDirect(64 * 1024);
        this.out = new UnsafeBuffer(outBytes);
        this.leaderOffsets = new LeaderOffsets(nodeId, roleName, channel, out, outBytes);
    }

    void add(final FollowedPartition partition)
    {
        partitions.add(partition);
        LockSupport.unpark(thread);
    }

    /** The partitions it fetches now (a snapshot). */
    FollowedPartition[] partitions()
    {
        return partitions.snapshot();
    }

    /** Returns how many partitions it still fetches. */
    int remove(final FollowedPartition partition)
    {
        return partitions.remove(partition);
    }

    public long rounds()
    {
        return rounds;
    }

    /** Connections made to the leader (tests: one re-made after a timeout counts again). */
    public long connects()
    {
        return channel.connects();
    }

    /** Connects that failed and connections lost, a request's timeout among them. */
    public long failures()
    {
        return failures;
    }

    /** Whether it holds a connection to the leader now. */
    public boolean connected()
    {
        return channel.connected();
    }

    @Override
    public String roleName()
    {
        return roleName;
    }

    @Override
    public void onStart()
    {
        thread = Thread.currentThread();
    }

    /** Ends the agent: its blocked read, if any, ends with the connection. */
    void requestClose()
    {
        closing = true;
        channel.close();
        LockSupport.unpark(thread);
    }

    @Override
    public void onClose()
    {
        channel.close();
    }

    @Override
    public int doWork()
    {
        if (closing)
        {
            throw new AgentTerminationException();
        }
        final long nowMs = System.currentTimeMillis();
        final int count = fetchable(nowMs);
        if (count == 0)
        {
            if (channel.connected() && !partitions.anyLive())
            {
                channel.disconnect(); // nothing left to fetch from this leader: no connection kept to it
            }
            return 0;
        }
        if (!channel.connected())
        {
            if (nowMs < reconnectAtMs)
            {
                return 0;
            }
            try
            {
                channel.connect();
            }
            catch (final IOException | RuntimeException ex)
            {
                if (closing)
                {
                    throw new AgentTerminationException();
                }
                lost("connecting", ex);
                return 0;
            }
        }
        try
        {
            outBytes.clear().limit(encode(count));
            channel.send(outBytes);
            final int length = channel.receive();
            answered(count, length);
        }
        catch (final IOException | RuntimeException ex)
        {
            if (closing)
            {
                throw new AgentTerminationException();
            }
            lost("fetching", ex);
            return 0;
        }
        rounds++;
        return 1;
    }

    private void lost(final String what, final Exception ex)
    {
        failures++;
        channel.disconnect();
        reconnectAtMs = System.currentTimeMillis() + settings.backoffMs(); // from the failure, not the round: as Kafka
        LOG.warn("replica fetcher from {} at {}: {} failed, trying again in {} ms: {}", leaderId, channel, what,
            settings.backoffMs(), ex.toString());
    }

    /** The partitions this round asks for, into {@link #asked}. */
    private int fetchable(final long nowMs)
    {
        final FollowedPartition[] all = partitions.snapshot();
        if (asked.length < all.length)
        {
            asked = new FollowedPartition[all.length * 2];
            posted = new FollowedPartition[all.length * 2];
        }
        int n = 0;
        for (final FollowedPartition p : all)
        {
            if (p.state == FollowedPartition.OUT_OF_RANGE)
            {
                p.state = FollowedPartition.FETCHING; // its round ended before the leader's offsets were asked: asked again
            }
            if (p.state == FollowedPartition.TRUNCATING && p.done())
            {
                truncated(p);
            }
            if (p.state == FollowedPartition.BACKING_OFF && nowMs >= p.retryAtMs)
            {
                p.state = FollowedPartition.FETCHING;
            }
            if (p.state == FollowedPartition.FETCHING && !p.removed)
            {
                asked[n++] = p;
            }
        }
        return n;
    }

    /** Writes the request frame; returns its length with the size prefix. */
    private int encode(final int count)
    {
        int at = FetcherChannel.SIZE_LENGTH;
        final ApiKeys api = ApiKeys.FETCH;
        at += header.wrap(out, at, api.requestHeaderVersion(FETCH_VERSION)).requestApiKey(api.id)
            .requestApiVersion(FETCH_VERSION).correlationId(++correlationId).clientId(roleName).finish();
        final FetchRequestEncoder.FetchTopic topic = request.wrap(out, at, FETCH_VERSION).maxWaitMs(settings.maxWaitMs())
            .minBytes(settings.minBytes()).maxBytes(settings.responseMaxBytes()).isolationLevel((byte)0).sessionId(0)
            .sessionEpoch(-1).topics(count);
        // one topic entry per partition: a topic may appear more than once, as Kafka's fetch request allows
        for (int i = 0; i < count; i++)
        {
            final FollowedPartition p = asked[i];
            final PartitionLog log = p.partition.log;
            topic.next().topicId(p.topicIdMsb, p.topicIdLsb).partitions(1).next().partition(p.partition.index)
                .currentLeaderEpoch(p.leaderEpoch).fetchOffset(log.logEndOffset())
                .lastFetchedEpoch(log.leaderEpochCache().latestEpoch()).logStartOffset(log.logStartOffset())
                .partitionMaxBytes(settings.partitionMaxBytes());
        }
        request.forgottenTopicsData(0);
        request.rackId("").replicaState().replicaId(nodeId).replicaEpoch(NO_BROKER_EPOCH);
        at += request.finish();
        out.putInt(0, at - FetcherChannel.SIZE_LENGTH, java.nio.ByteOrder.BIG_ENDIAN);
        return at;
    }

    /** Takes the answer in: each partition's records to its log thread, then waits for them all. */
    private void answered(final int count, final int length) throws IOException
    {
        final UnsafeBuffer in = channel.inBuffer;
        final int body = responseHeader.wrap(in, 0, length, ApiKeys.FETCH.responseHeaderVersion(FETCH_VERSION));
        if (responseHeader.correlationId() != correlationId)
        {
            throw new IOException("an answer to request " + responseHeader.correlationId() + ", expected " + correlationId);
        }
        response.wrap(in, body, length, FETCH_VERSION);
        final long nowMs = System.currentTimeMillis();
        if (response.errorCode() != Errors.NONE)
        {
            for (int i = 0; i < count; i++)
            {
                backOff(asked[i], response.errorCode(), nowMs);
            }
            return;
        }
        dispatched = 0;
        try
        {
            dispatch(count, in, nowMs);
        }
        finally
        {
            awaitAppends(dispatched, nowMs); // an answer found broken half-way: what was posted is still the log threads'
        }
        for (int i = 0; i < count; i++)
        {
            if (asked[i].state == FollowedPartition.OUT_OF_RANGE)
            {
                outOfRange(asked[i], nowMs);
            }
        }
    }

    /**
     * Kafka's rule for an OFFSET_OUT_OF_RANGE ({@code AbstractFetcherThread.fetchOffsetAndTruncate}): the
     * leader's log end below this log's is a truncation to it; this log's end below the leader's log start
     * is a full truncation to start there ({@code truncateFullyAndStartAt}); otherwise the offset was out of
     * range for a moment and the partition is fetched again at once, as Kafka's; the same answer again at the same
     * log end backs off ({@link FollowedPartition#outOfRangeAgain}).
     */
    private void outOfRange(final FollowedPartition fp, final long nowMs) throws IOException
    {
        final long ours = fp.partition.log.logEndOffset();
        final long leaderEnd = leaderOffsets.offset(fp, LeaderOffsets.LATEST, ++correlationId);
        if (leaderEnd == LeaderOffsets.UNKNOWN)
        {
            backOff(fp, Errors.OFFSET_OUT_OF_RANGE, nowMs);
            return;
        }
        if (leaderEnd < ours)
        {
            LOG.warn("follower of {}: OFFSET_OUT_OF_RANGE at {}, the leader's log ends at {}: truncating to it", fp, ours,
                leaderEnd);
            truncate(fp, leaderEnd, false);
            return;
        }
        final long leaderStart = leaderOffsets.offset(fp, LeaderOffsets.EARLIEST, ++correlationId);
        if (leaderStart != LeaderOffsets.UNKNOWN && leaderStart > ours)
        {
            LOG.info("follower of {}: OFFSET_OUT_OF_RANGE at {}, the leader's log starts at {}: truncating fully to start there",
                fp, ours, leaderStart);
            truncate(fp, leaderStart, true);
            return;
        }
        if (fp.outOfRangeAgain(ours)) // else fetched again at once, as Kafka's, from max(leader's start, ours) = ours
        {
            backOff(fp, Errors.OFFSET_OUT_OF_RANGE, nowMs);
        }
    }

    /** Hands each partition's records to its log thread, counting them in {@link #dispatched}. */
    private void dispatch(final int count, final UnsafeBuffer in, final long nowMs) throws IOException
    {
        int postedCount = 0;
        int i = 0;
        for (var t = response.responses(); t.hasNext() && i < count; )
        {
            t.next();
            for (var p = t.partitions(); p.hasNext() && i < count; )
            {
                p.next();
                final FollowedPartition fp = asked[i++];
                if (p.partitionIndex() != fp.partition.index || t.topicIdMostSignificantBits() != fp.topicIdMsb ||
                    t.topicIdLeastSignificantBits() != fp.topicIdLsb)
                {
                    throw new IOException("an answer for partition " + p.partitionIndex() + " where " + fp + " was asked");
                }
                final short error = p.errorCode();
                if (error == Errors.OFFSET_OUT_OF_RANGE)
                {
                    fp.state = FollowedPartition.OUT_OF_RANGE; // resolved once the answer's buffer is free (outOfRange)
                }
                else if (error != Errors.NONE)
                {
                    backOff(fp, error, nowMs);
                }
                else if (p.divergingEpoch() != null && p.divergingEpoch().epoch() >= 0)
                {
                    LOG.info("follower of {}: the leader answered diverging epoch {} ending at {} at fetch offset {}: truncating",
                        fp, p.divergingEpoch().epoch(), p.divergingEpoch().endOffset(), fp.partition.log.logEndOffset());
                    fp.postDiverged(p.divergingEpoch().epoch(), p.divergingEpoch().endOffset(), thread);
                    logThreads[fp.partition.owner].executeBounded(fp);
                }
                else
                {
                    fp.post(in, p.recordsOffset(), p.recordsIsNull() ? 0 : p.recordsLength(), p.highWatermark(),
                        p.logStartOffset(), thread);
                    logThreads[fp.partition.owner].executeBounded(fp);
                    posted[postedCount++] = fp;
                    dispatched = postedCount;
                }
            }
        }
    }

    /** Waits until every log thread took its partition's records: the answer's buffer is then free again. */
    private void awaitAppends(final int count, final long nowMs)
    {
        for (int i = 0; i < count; i++)
        {
            final FollowedPartition fp = posted[i];
            while (!fp.done())
            {
                if (closing)
                {
                    throw new AgentTerminationException(); // the log threads may have stopped: nothing more is read into the buffer
                }
                LockSupport.parkNanos(fp, TimeUnit.MILLISECONDS.toNanos(1)); // woken by the log thread's unpark
            }
            posted[i] = null;
            final AppendResult r = fp.result;
            if (fp.truncationError != null)
            {
                fp.fail(fp.truncationError); // the log could not start again at the leader's first batch
            }
            else if (!r.succeeded())
            {
                LOG.warn("follower append to {} failed ({}: {}), fetching again in {} ms", fp, r.status, r.message,
                    settings.backoffMs());
                fp.state = FollowedPartition.BACKING_OFF;
                fp.retryAtMs = nowMs + settings.backoffMs();
            }
            else if (fp.appendError != null)
            {
                LOG.warn("follower of {}: {}", fp, fp.appendError);
            }
        }
    }

    private void backOff(final FollowedPartition fp, final short error, final long nowMs)
    {
        fp.state = FollowedPartition.BACKING_OFF;
        fp.retryAtMs = nowMs + settings.backoffMs();
        LOG.info("follower of {}: the leader answered error {}, fetching again in {} ms", fp, error, settings.backoffMs());
    }

    /** An OFFSET_OUT_OF_RANGE's truncation ({@link #outOfRange}), handed to the partition's log thread. */
    private void truncate(final FollowedPartition fp, final long offset, final boolean startOver)
    {
        fp.postTruncation(offset, startOver, thread);
        logThreads[fp.partition.owner].executeBounded(fp);
    }

    /** A truncation the log thread finished: the partition is fetched again from its new log end, or has failed. */
    private void truncated(final FollowedPartition fp)
    {
        if (fp.truncationError != null)
        {
            fp.fail(fp.truncationError);
        }
        else
        {
            fp.state = FollowedPartition.FETCHING;
            LOG.info("follower of {}: truncated, log end {}, fetching again", fp, fp.truncatedTo);
        }
    }

    @Override
    public String toString()
    {
        return roleName;
    }
}
