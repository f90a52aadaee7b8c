package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.metrics.NetworkCounters;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.PendingResponse;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.quota.ClientQuotas;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.FileRegion;
import io.ferrite.log.LogClosedException;
import io.ferrite.log.PartitionLog;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.FetchRequestDecoder;
import io.ferrite.wire.message.FetchResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Fetch, as Kafka's leader answers a consumer. Large record regions go out zero-copy: the response
 * carries only their length, and the connection sends the segment's bytes with {@code transferTo};
 * small ones are copied in beside their headers so the response takes fewer system calls
 * ({@link InlineRecords}). Reads stop at
 * the high watermark, or for {@code read_committed} at the last stable offset, listing the aborted
 * transactions of what it returns from the {@code .txnindex} (Kafka's LocalLog walk). Within a
 * request the first partition with data gets at least one whole batch, then {@code max_bytes} bounds
 * the rest, as Kafka does. The broker's {@code fetch.max.bytes} caps {@code max_bytes} (and with it
 * {@code min_bytes}), as Kafka's KafkaApis does: without it a consumer asking for 500 MB would get a
 * 500 MB response, all of it held on the connection until sent.
 *
 * <p>Long poll: when fewer than {@code min_bytes} are there, the request waits (its connection reads
 * nothing more meanwhile) until the partitions it reads have enough or {@code max_wait_ms} passes; a
 * partition with a waiting fetch makes its log thread wake this network thread when its high
 * watermark moves (the last stable offset moves only with it: a marker moves the high watermark, and
 * an ended transaction stays unstable until the high watermark passes its marker).
 *
 * <p>A fetch's {@code last_fetched_epoch} (v12+) is checked against the leader-epoch cache before the read
 * ({@link FetchDivergence}): a diverging one is answered {@code diverging_epoch}, no records, at once.
 *
 * <p>A follower's fetch ({@link FetchOrigin}) reads up to the log end with no isolation, tells the
 * leader's replication state where the follower is, and is answered the leader's high watermark;
 * its long poll waits for the log end to move (a log thread wakes parked fetches after each append
 * to a partition with followers).
 *
 * <p>Fetch sessions are declined the way Kafka declines them when its cache is full: a full request
 * gets session id 0, so the client keeps sending full requests. An incremental request (non-zero
 * session id) is FETCH_SESSION_ID_NOT_FOUND; a sessionless one with an epoch other than 0 or -1 is
 * INVALID_FETCH_SESSION_EPOCH.
 */
public final class FetchHandler implements RequestHandler
{
    private static final byte READ_COMMITTED = 1;

    private final TopicRegistry topics;
    /** The network thread this handler serves (a parked fetch tells its partitions whom to wake). */
    private final int networkThread;
    /** The broker's fetch.max.bytes. */
    private final int maxBytes;
    /** The broker's ferrite.fetch.inline.record.bytes: the largest region copied into a response. */
    private final int inlineRecordBytes;

    private final NetworkCounters counters;
    /** The broker's client quotas: a consumer's {@code consumer_byte_rate} bounds and throttles its fetches. */
    private final ClientQuotas quotas;

    public FetchHandler(final TopicRegistry topics, final int networkThread, final int maxBytes, final int inlineRecordBytes,
        final NetworkCounters counters, final ClientQuotas quotas)
    {
        this.quotas = quotas;
        this.counters = counters;
        this.topics = topics;
        this.networkThread = networkThread;
        this.maxBytes = maxBytes;
        this.inlineRecordBytes = inlineRecordBytes;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        Request request = (Request)connection.state(ApiKeys.FETCH.id);
        if (request == null)
        {
            request = new Request();
            connection.state(ApiKeys.FETCH.id, request);
        }
        return request.start(connection, version, offset, limit, outOffset);
    }

    /** One connection's fetch in progress. */
    private final class Request implements PendingResponse
    {
        /** The aborted transactions a read_committed read of one partition lists. */
        private final FetchAborted aborted = new FetchAborted();
        /** The request's isolation level is read_committed: reads stop at the last stable offset. */
        private boolean committed;
        private final FetchRequestDecoder decoder = new FetchRequestDecoder();
        private final FetchResponseEncoder encoder = new FetchResponseEncoder();
        private final FileRegion region = new FileRegion();
        private final InlineRecords inline = new InlineRecords(inlineRecordBytes);
        private final FetchOrigin origin = new FetchOrigin();
        private final FetchDivergence divergence = new FetchDivergence();
        private short version;
        private int offset;
        private int limit;
        private long deadline;
        private int minBytes;
        private boolean errors;
        /** Partitions the last pass was asked for. */
        private int asked;
        /** The partitions this fetch reads (those that exist), registered while it waits. */
        private final FetchParking parked = new FetchParking(this::bound);
        /** Set during the first counting pass, which notes what the fetch will wait on. */
        private boolean recording;
        /** Set while a pass counts exactly what the response would hold (a consumer quota's measure before the answer). */
        private boolean exact;
        /** Whether a consumer quota applies to this fetch, and Kafka's bound on its response from it (else MAX_VALUE). */
        private boolean quota;
        private int quotaLimit;

        int start(final Connection connection, final short version, final int offset, final int limit, final int outOffset)
        {
            this.version = version;
            this.offset = offset;
            this.limit = limit;
            decoder.wrap(connection.in, offset, limit, version);
            origin.start(decoder, version); // whose fetch it is first: one refused below is a follower's all the same
            if (origin.follower())
            {
                connection.fetchFromFollower(); // Kafka's FetchFollower in RequestsPerSec and the request times
            }
            final int sessionId = decoder.sessionId();
            final int epoch = decoder.sessionEpoch();
            if (sessionId != 0 || (epoch != 0 && epoch != -1))
            {
                encoder.wrap(connection.out, outOffset, version).throttleTimeMs(0)
                    .errorCode(sessionId != 0 ? Errors.FETCH_SESSION_ID_NOT_FOUND : Errors.INVALID_FETCH_SESSION_EPOCH)
                    .sessionId(0).responses(0);
                return outOffset + encoder.finish();
            }
            final long window = origin.follower() ? ClientQuotas.NO_LIMIT : quotas.fetchLimit(connection); // replicas: no client quota
            quota = window != ClientQuotas.NO_LIMIT;
            quotaLimit = (int)Math.min(Integer.MAX_VALUE, window);
            // Kafka's order: max_bytes capped by the broker first, then min_bytes by that, so a
            // min_bytes no response may reach does not always wait out max_wait_ms
            minBytes = Math.min(decoder.minBytes(), maxBytes(decoder));
            committed = !origin.follower() && version >= 4 && decoder.isolationLevel() == READ_COMMITTED;
            // the pass notes each partition it counts with the high watermark it counted up to: what
            // moves after that is seen by poll, and a partition it did not count is not waited on
            parked.clear();
            recording = decoder.maxWaitMs() > 0;
            origin.recording = true;
            final int available = pass(connection, false, outOffset);
            recording = false;
            origin.recording = false;
            // Kafka answers a fetch for no partition at once: a consumer's close sends one to end its
            // fetch session, and waits for the answer
            if (errors || available >= minBytes || decoder.maxWaitMs() <= 0 || asked == 0)
            {
                parked.forget(); // noted, never registered
                return respond(connection, outOffset);
            }
            deadline = System.currentTimeMillis() + decoder.maxWaitMs();
            parked.park(networkThread);
            connection.defer(this);
            return DEFERRED;
        }

        /**
         * Reads again only when a partition it waits on moved its high watermark since the last
         * counting pass, or went (its topic deleted, its log closed): with many fetches waiting on
         * one network thread, a wake-up for one partition no longer walks every other fetch's
         * partitions (Kafka's purgatory likewise checks a delayed fetch when one of its partitions
         * changes). The check runs after the fetch registered on its partitions, and the
         * watermarks it compares with are those the pass that found too little counted up to, so an
         * append between that pass and the registration is seen here. (A log start moving above the
         * fetch offset is not a reason to read again: it is found at the next read, as Kafka's
         * DelayedFetch finds it.)
         */
        @Override
        public int poll(final Connection connection, final int outOffset, final long nowMs)
        {
            if (nowMs < deadline && !parked.moved())
            {
                return NOT_READY;
            }
            if (nowMs < deadline)
            {
                parked.snapshot();
                decoder.wrap(connection.in, offset, limit, version);
                if (pass(connection, false, outOffset) < minBytes && !errors)
                {
                    return NOT_READY;
                }
            }
            parked.unpark();
            return respond(connection, outOffset);
        }

        /**
         * Writes the response. Under a consumer quota first counts it exactly (Kafka records a fetch response's size
         * before it is sent): when the rate with it is over the quota the answer is empty, with the throttle time, and
         * the connection is muted once it is written, as Kafka answers a throttled fetch; else the response is written and
         * what it came to beyond the count (its headers, a record appended between the passes) recorded too.
         */
        private int respond(final Connection connection, final int outOffset)
        {
            decoder.wrap(connection.in, offset, limit, version);
            if (!quota)
            {
                return pass(connection, true, outOffset);
            }
            exact = true;
            final int counted = pass(connection, false, outOffset);
            exact = false;
            final long nowMs = System.currentTimeMillis();
            final int throttleMs = quotas.fetching(connection, networkThread, counted, nowMs);
            if (throttleMs > 0)
            {
                connection.throttle(throttleMs);
                encoder.wrap(connection.out, outOffset, version).throttleTimeMs(throttleMs).errorCode(Errors.NONE).sessionId(0)
                    .responses(0);
                return outOffset + encoder.finish();
            }
            decoder.wrap(connection.in, offset, limit, version);
            final int end = pass(connection, true, outOffset);
            quotas.fetchedMore(connection, networkThread, end - outOffset + connection.splicedBytes() - counted, nowMs);
            return end;
        }

        @Override
        public long deadlineMs()
        {
            return deadline;
        }

        @Override
        public void cancel()
        {
            parked.unpark(); // else the partitions would wake this network thread for a fetch that is gone
        }

        /** The request's max_bytes within the broker's fetch.max.bytes and a consumer quota's window (Kafka's KafkaApis). */
        private int maxBytes(final FetchRequestDecoder request)
        {
            return Math.min(Math.min(request.maxBytes(), maxBytes), quotaLimit);
        }

        private Topic topic(final Connection connection, final FetchRequestDecoder.FetchTopic t)
        {
            // live first: a deleted topic named by id is UNKNOWN_TOPIC_ID here (Produce answers UNKNOWN_TOPIC_OR_PARTITION)
            return PartitionLookup.live(PartitionLookup.find(topics, version >= 13, t.topicIdMostSignificantBits(),
                t.topicIdLeastSignificantBits(), connection.in, t.topicOffset(), t.topicLength()));
        }

        /**
         * How far a counting pass looks into a partition: what it holds up to its max bytes, as
         * Kafka's delayed fetch counts (not the response's whole batches within max_bytes: 900-byte
         * batches under a 4096-byte cap make 3600, and a min_bytes capped to 4096 would wait out
         * max_wait_ms). Twice what min_bytes still needs, at least one whole batch, is enough to
         * know whether it is there, without walking a large partition's batches on every poll.
         */
        private int countingLimit(final int partitionMaxBytes, final int counted)
        {
            final long needed = Math.max(1L, (long)minBytes - counted);
            return (int)Math.min(Math.max(0, partitionMaxBytes), Math.min(Integer.MAX_VALUE, 2 * needed));
        }

        /** Where this fetch's reads of {@code log} stop: the last stable offset under read_committed, else the high watermark. */
        private long bound(final PartitionLog log)
        {
            return origin.bound(log, committed);
        }

        /**
         * {@link FetchAborted#list} for the partition just read: its error — KAFKA_STORAGE_ERROR when its index
         * could not be read (as Kafka answers an index it cannot read), the read's when its log closed meanwhile.
         */
        private short listAborted(final Partition partition, final Topic topic, final long fetchOffset)
        {
            try
            {
                return aborted.list(partition.log, fetchOffset, region.nextOffset, region.length) ? Errors.NONE :
                    Errors.KAFKA_STORAGE_ERROR;
            }
            catch (final LogClosedException gone)
            {
                return PartitionLookup.closed(topic, version >= 13);
            }
        }

        /** Reads one partition into {@link #region}; the partition's error. */
        private short read(final Partition partition, final Topic topic, final FetchRequestDecoder.FetchPartition p,
            final int limit, final boolean minOneBatch, final long highWatermark)
        {
            try
            {
                return partition.log.read(p.fetchOffset(), limit, highWatermark, minOneBatch, region) ==
                    PartitionLog.OFFSET_OUT_OF_RANGE ? Errors.OFFSET_OUT_OF_RANGE : Errors.NONE;
            }
            catch (final LogClosedException gone)
            {
                return PartitionLookup.closed(topic, version >= 13); // deleted, or the broker is shutting down
            }
        }

        /**
         * Reads every partition asked for. Without {@code write} it only adds up the bytes there are
         * (and notes errors); with it, it writes the response and splices the records in, and returns
         * where the response ends.
         */
        private int pass(final Connection connection, final boolean write, final int outOffset)
        {
            errors = false;
            asked = 0;
            int remaining = Math.max(0, maxBytes(decoder));
            boolean first = true;
            int bytes = 0;
            final FetchRequestDecoder.FetchTopic t = decoder.topics();
            FetchResponseEncoder.FetchableTopicResponse rt = null;
            if (write)
            {
                inline.reset();
                rt = encoder.wrap(connection.out, outOffset, version).throttleTimeMs(0).errorCode(Errors.NONE).sessionId(0)
                    .responses(t.elementCount());
            }
            while (t.hasNext())
            {
                t.next();
                final Topic topic = topic(connection, t);
                final boolean authorized = Access.topic(connection, AclCodes.READ, topic, connection.in, t.topicOffset(),
                    version >= 13 ? -1 : t.topicLength()); // v13+: by id, no name to read
                final FetchRequestDecoder.FetchPartition p = t.partitions();
                FetchResponseEncoder.PartitionData rp = null;
                if (write)
                {
                    rt.next();
                    if (version >= 13)
                    {
                        rt.topicId(t.topicIdMostSignificantBits(), t.topicIdLeastSignificantBits());
                    }
                    else
                    {
                        rt.topic(connection.in, t.topicOffset(), t.topicLength());
                    }
                    rp = rt.partitions(p.elementCount());
                }
                while (p.hasNext())
                {
                    p.next();
                    asked++;
                    final Partition partition = topic == null || !authorized ? null : topic.partition(p.partition());
                    final short check = partition == null ? Errors.NONE : origin.check(partition, p.currentLeaderEpoch());
                    final short error;
                    boolean diverging = false;
                    if (!authorized)
                    {
                        error = Errors.TOPIC_AUTHORIZATION_FAILED;
                    }
                    else if (partition == null)
                    {
                        error = PartitionLookup.notFound(topic, version >= 13, p.partition());
                    }
                    else if (check != Errors.NONE)
                    {
                        error = check;
                    }
                    else
                    {
                        final long bound = bound(partition.log);
                        if (recording)
                        {
                            parked.record(partition, topic, bound);
                        }
                        // a diverging answer is read nothing, and does not move the follower (Kafka's fetchRecords)
                        final short epochCheck = divergence.check(partition.log, p.lastFetchedEpoch(), p.fetchOffset());
                        diverging = epochCheck == FetchDivergence.DIVERGING;
                        final short read = epochCheck != Errors.NONE ? (diverging ? Errors.NONE : epochCheck) :
                            read(partition, topic, p, write || exact ? Math.min(Math.max(0, p.partitionMaxBytes()), remaining) :
                            countingLimit(p.partitionMaxBytes(), bytes), write || exact ? first : true, bound);
                        if (read == Errors.NONE && !diverging)
                        {
                            origin.read(partition, p.fetchOffset());
                        }
                        error = read == Errors.NONE && write && committed && !diverging ? listAborted(partition, topic, p.fetchOffset()) : read;
                    }
                    final int length = error == Errors.NONE && !diverging ? region.length : 0;
                    if (error != Errors.NONE || diverging)
                    {
                        errors = true;
                    }
                    else if (length > 0)
                    {
                        first = false;
                        remaining = Math.max(0, remaining - length);
                        bytes = (int)Math.min(Integer.MAX_VALUE, (long)bytes + length);
                    }
                    if (write)
                    {
                        rp.next().partitionIndex(p.partition()).errorCode(error);
                        if (error == Errors.NONE)
                        {
                            final PartitionLog log = partition.log;
                            // the last stable offset first: it is never above the high watermark read after it
                            final long lastStable = log.transactions().lastStableOffset();
                            rp.highWatermark(log.highWatermark()).lastStableOffset(lastStable).logStartOffset(log.logStartOffset());
                        }
                        else
                        {
                            rp.highWatermark(-1).lastStableOffset(-1).logStartOffset(-1);
                        }
                        if (committed)
                        {
                            aborted.write(rp, error == Errors.NONE && !diverging);
                        }
                        else
                        {
                            rp.abortedTransactionsNull();
                        }
                        rp.preferredReadReplica(-1);
                        if (error != Errors.NONE)
                        {
                            counters.error(ApiKeys.FETCH, error); // Kafka files every fetch's errors under request=Fetch
                        }
                        else if (length > 0 && origin.follower())
                        {
                            counters.replicated(length);
                        }
                        else if (length > 0 && partition.counters() != null)
                        {
                            counters.fetched(partition.counters(), length);
                        }
                        if (inline.take(length))
                        {
                            InlineRecords.copy(rp, region, length); // copied now, while the mapping is sure
                        }
                        else
                        {
                            final int at = rp.recordsExternal(length);
                            if (length > 0)
                            {
                                connection.splice(at, region.channel, region.position, length);
                            }
                        }
                        if (diverging)
                        {
                            rp.divergingEpoch().epoch(divergence.epoch).endOffset(divergence.endOffset); // v12+: a tagged field
                        }
                    }
                }
            }
            return write ? outOffset + encoder.finish() : bytes;
        }
    }
}
