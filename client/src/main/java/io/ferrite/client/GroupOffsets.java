package io.ferrite.client;

import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.FindCoordinatorRequestEncoder;
import io.ferrite.wire.message.FindCoordinatorResponseDecoder;
import io.ferrite.wire.message.OffsetCommitRequestEncoder;
import io.ferrite.wire.message.OffsetCommitResponseDecoder;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;

/**
 * The consumer's committed offsets in its {@code group.id}, as a kafka-clients consumer with {@code assign()} keeps
 * them (its {@code ConsumerCoordinator} without a membership): the group's coordinator found with FindCoordinator (key
 * type GROUP) on any ready broker, then a connection of its own to the coordinator — a broker answers a connection's
 * requests in order, so a commit sent behind a long-poll Fetch would wait up to {@code fetch.max.wait.ms} (500 ms);
 * kafka-clients keeps a separate coordinator connection for the same reason. The first position of an assigned
 * partition is read with OffsetFetch ({@link CommittedOffsets}); offsets are written with OffsetCommit in the "simple
 * consumer" form (generation -1, empty member id), one commit outstanding at a time. Coordinator errors as
 * kafka-clients: COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, REQUEST_TIMED_OUT or a lost connection forget the
 * coordinator (found again); a commit's error, COORDINATOR_LOAD_IN_PROGRESS included, goes to its handler
 * (commitSync retries the retriable ones; the OffsetFetch paths retry COORDINATOR_LOAD_IN_PROGRESS themselves). A
 * FindCoordinator error that is not retriable (GROUP_AUTHORIZATION_FAILED, say) fails what waits for the coordinator
 * then — the commit, the lookup, the first positions — and the coordinator is looked up again for the next need (as
 * kafka-clients' {@code ensureCoordinatorReady} on the next call). A successful commit clears the staged offsets it
 * carried ({@link FetchPosition#commitStaged}); a failed one leaves them staged. Single-threaded (the consumer's
 * thread); a commit allocates nothing.
 */
final class GroupOffsets
{
    /** 4 and up take a list of keys; 5 and 6 add nothing a group lookup uses. */
    private static final short MAX_FIND_COORDINATOR_VERSION = 4;
    /** Version 10 names topics by id only. */
    private static final short MAX_OFFSET_COMMIT_VERSION = 9;
    private static final byte GROUP_KEY_TYPE = 0;
    /** kafka-clients' {@code OffsetCommitRequest.DEFAULT_GENERATION_ID}: the committer is no member of the group. */
    private static final int NO_GENERATION = -1;

    final String groupId;
    final UnsafeBuffer groupIdBytes;
    final CommittedOffsets committed;
    private final ConsumerConfig config;
    private final ClusterMetadata metadata;
    private final ResponseListener listener;
    private final FindCoordinatorRequestEncoder findRequest = new FindCoordinatorRequestEncoder();
    private final FindCoordinatorResponseDecoder findResponse = new FindCoordinatorResponseDecoder();
    private final OffsetCommitRequestEncoder commitRequest = new OffsetCommitRequestEncoder();
    private final OffsetCommitResponseDecoder commitResponse = new OffsetCommitResponseDecoder();

    /** The coordinator's connection, null while it is not known. */
    private NodeConnection coordinator;
    /** A request to it failed or it answered that it is not the coordinator: dropped at the next duty cycle. */
    private boolean coordinatorLost;
    private boolean findInFlight;
    private long findNotBeforeNs;

    /** Non-null from {@link #commit} until its outcome is known. */
    private OffsetCommitHandler commitHandler;
    private long commitTag;
    private boolean commitInFlight;
    /** The outstanding commit was sent (its answer may be being handled): true until its caller is told. */
    private boolean commitSent;
    /** OffsetCommit requests sent so far (tests: the allocation test checks its measured phase had some). */
    long commitsSent;
    /** The generation the commit in flight was sent with: its group errors apply only while it is the member's. */
    private int commitGeneration;
    /** The subscribed consumer's membership (its commits carry the generation and member id), null with assign(). */
    GroupMembership membership;

    GroupOffsets(final ConsumerConfig config, final ClusterMetadata metadata, final ResponseListener listener)
    {
        this.config = config;
        this.metadata = metadata;
        this.listener = listener;
        this.groupId = config.groupId;
        this.groupIdBytes = new UnsafeBuffer(config.groupId.getBytes(StandardCharsets.UTF_8));
        this.committed = new CommittedOffsets(config, this);
    }

    /** The coordinator's connection when it can take a request, else null (finding or connecting it meanwhile). */
    NodeConnection ready()
    {
        return coordinator != null && !coordinatorLost && coordinator.canSend() ? coordinator : null;
    }

    /** One duty cycle: the coordinator found and connected, its answers read, the requests due sent. */
    int doWork(final ArrayList<FetchPosition> assigned, final long nowNs)
    {
        int work = 0;
        if (coordinatorLost)
        {
            final NodeConnection lost = coordinator;
            coordinator = null; // before the shutdown, which fails what is in flight through this class
            lost.shutdown(nowNs, ClientErrors.NOT_COORDINATOR);
            coordinatorLost = false;
            findNotBeforeNs = nowNs + config.retryBackoffNs;
        }
        if (coordinator == null)
        {
            return work + (needed(assigned) ? find(nowNs) : 0);
        }
        if (coordinator.state() == NodeConnection.State.DISCONNECTED)
        {
            coordinator.connect(nowNs);
        }
        work += coordinator.poll(nowNs);
        if (coordinator != null && coordinator.state() == NodeConnection.State.BACKOFF)
        {
            coordinatorLost = true; // it could not be reached: kafka-clients marks the coordinator unknown
            return work;
        }
        final NodeConnection c = ready();
        if (c != null && commitHandler != null && !commitInFlight)
        {
            work += sendCommit(c, assigned, nowNs);
        }
        return work + committed.doWork(assigned, nowNs);
    }

    private boolean needed(final ArrayList<FetchPosition> assigned)
    {
        if (commitHandler != null || committed.queryPending() || (membership != null && membership.needsCoordinator()))
        {
            return true;
        }
        for (int i = 0; i < assigned.size(); i++)
        {
            if (assigned.get(i).state == FetchPosition.State.AWAIT_COMMITTED)
            {
                return true;
            }
        }
        return false;
    }

    private int find(final long nowNs)
    {
        if (findInFlight || nowNs - findNotBeforeNs < 0)
        {
            return 0;
        }
        final ArrayList<NodeConnection> connections = metadata.connections;
        for (int i = 0; i < connections.size(); i++)
        {
            final NodeConnection c = connections.get(i);
            final short version = c.canSend() ? c.version(ApiKeys.FIND_COORDINATOR, MAX_FIND_COORDINATOR_VERSION) : -1;
            if (version >= 0)
            {
                final int body = c.begin(ApiKeys.FIND_COORDINATOR, version);
                findRequest.wrap(c.buffer(), body, version);
                if (version < 4)
                {
                    findRequest.key(groupIdBytes, 0, groupIdBytes.capacity()).keyType(GROUP_KEY_TYPE);
                }
                else
                {
                    findRequest.keyType(GROUP_KEY_TYPE).coordinatorKeys(1).addString(groupIdBytes, 0, groupIdBytes.capacity());
                }
                c.commit(ApiKeys.FIND_COORDINATOR, version, body + findRequest.finish(), this, true, nowNs);
                findInFlight = true;
                return 1;
            }
        }
        metadata.requestUpdate(); // no broker ready: the metadata's duty cycle connects one
        return 0;
    }

    void onFindCoordinator(final short version, final DirectBuffer buffer, final int offset, final int limit,
        final ArrayList<FetchPosition> assigned, final long nowNs)
    {
        findInFlight = false;
        findResponse.wrap(buffer, offset, limit, version);
        final short error;
        final int nodeId;
        final String host;
        final int port;
        if (version < 4)
        {
            error = findResponse.errorCode();
            nodeId = findResponse.nodeId();
            host = findResponse.host();
            port = findResponse.port();
        }
        else
        {
            final FindCoordinatorResponseDecoder.Coordinator k = findResponse.coordinators();
            if (!k.hasNext())
            {
                findFailed(nowNs);
                return;
            }
            k.next();
            error = k.errorCode();
            nodeId = k.nodeId();
            host = k.host();
            port = k.port();
        }
        if (error == ClientErrors.NONE)
        {
            // only asked while no coordinator is known (one FindCoordinator at a time): a connection of its own
            coordinator = new NodeConnection(nodeId, host, port, listener,
                config.coordinatorTransport(membership != null && membership.subscribed()));
            coordinator.connect(nowNs);
        }
        else if (ClientErrors.retriable(error))
        {
            findFailed(nowNs); // COORDINATOR_NOT_AVAILABLE while the offsets topic is made, say: asked again
        }
        else
        {
            // GROUP_AUTHORIZATION_FAILED, say: kafka-clients throws it to the call that met it and looks again next time
            findNotBeforeNs = nowNs + config.retryBackoffNs;
            committed.failAll(error);
            completeCommit(error);
            for (int i = 0; i < assigned.size(); i++)
            {
                final FetchPosition p = assigned.get(i);
                if (p.state == FetchPosition.State.AWAIT_COMMITTED || p.state == FetchPosition.State.FETCHING_COMMITTED)
                {
                    p.fail(error); // no committed offset can be read: poll throws it
                }
            }
        }
    }

    void findFailed(final long nowNs)
    {
        findInFlight = false;
        findNotBeforeNs = nowNs + config.retryBackoffNs;
    }

    /** An answer from the coordinator says it is not (or not yet) the coordinator: found again. */
    void coordinatorUnknown()
    {
        coordinatorLost = coordinator != null;
    }

    boolean commitOutstanding()
    {
        return commitHandler != null;
    }

    boolean commitInFlight()
    {
        return commitInFlight;
    }

    /**
     * Starts a commit of each partition's {@link FetchPosition#committing} offset (those at -1 take no part): sent
     * when the coordinator is ready. False if one is outstanding.
     */
    boolean commit(final OffsetCommitHandler handler, final long tag)
    {
        if (commitHandler != null)
        {
            return false;
        }
        commitHandler = handler;
        commitTag = tag;
        return true;
    }

    /**
     * The outstanding commit no longer matters to its caller (commitSync timed out): not sent yet, it is dropped; in
     * flight, its answer tells no one (and a next commit waits for it, so two commits are never in flight).
     */
    void forgetCommitCaller(final OffsetCommitHandler handler)
    {
        if (commitHandler == handler)
        {
            commitHandler = commitInFlight ? IGNORED : null;
            commitSent = commitInFlight;
        }
    }

    private static final OffsetCommitHandler IGNORED = (tag, error) -> { };

    private int sendCommit(final NodeConnection c, final ArrayList<FetchPosition> assigned, final long nowNs)
    {
        final short version = c.version(ApiKeys.OFFSET_COMMIT, MAX_OFFSET_COMMIT_VERSION);
        if (version < 0)
        {
            completeCommit(ClientErrors.UNSUPPORTED_VERSION);
            return 1;
        }
        int topics = 0;
        TopicState last = null;
        for (int i = 0; i < assigned.size(); i++)
        {
            final FetchPosition p = assigned.get(i);
            if (p.committing >= 0 && p.topic != last)
            {
                topics++;
                last = p.topic;
            }
        }
        final int body = c.begin(ApiKeys.OFFSET_COMMIT, version);
        commitRequest.wrap(c.buffer(), body, version).groupId(groupIdBytes, 0, groupIdBytes.capacity())
            .generationIdOrMemberEpoch(membership == null ? NO_GENERATION : membership.commitGeneration())
            .memberId(membership == null ? "" : membership.commitMemberId())
            .groupInstanceId(membership == null ? null : membership.commitInstanceId());
        final OffsetCommitRequestEncoder.OffsetCommitRequestTopic t = commitRequest.topics(topics);
        for (int i = 0; i < assigned.size(); )
        {
            final TopicState topic = assigned.get(i).topic;
            int end = i;
            int count = 0;
            while (end < assigned.size() && assigned.get(end).topic == topic)
            {
                count += assigned.get(end++).committing >= 0 ? 1 : 0;
            }
            if (count > 0)
            {
                final OffsetCommitRequestEncoder.OffsetCommitRequestPartition p =
                    t.next().name(topic.nameBytes, 0, topic.nameBytes.capacity()).partitions(count);
                for (int j = i; j < end; j++)
                {
                    final FetchPosition fp = assigned.get(j);
                    if (fp.committing >= 0)
                    {
                        // the leader epoch is not tracked (kafka-clients sends the last record's): -1, no fencing check
                        p.next().partitionIndex(fp.partition).committedOffset(fp.committing).committedLeaderEpoch(-1)
                            .committedMetadata("");
                    }
                }
            }
            i = end;
        }
        c.commit(ApiKeys.OFFSET_COMMIT, version, body + commitRequest.finish(), this, true, nowNs);
        commitInFlight = true;
        commitSent = true;
        commitsSent++;
        commitGeneration = membership == null ? NO_GENERATION : membership.commitGeneration();
        return 1;
    }

    /** kafka-clients' {@code OffsetCommitResponseHandler}: the first partition error fails the whole commit. */
    void onCommit(final short version, final DirectBuffer buffer, final int offset, final int limit,
        final ArrayList<FetchPosition> assigned, final long nowNs)
    {
        commitInFlight = false;
        commitResponse.wrap(buffer, offset, limit, version);
        short first = ClientErrors.NONE;
        for (var t = commitResponse.topics(); t.hasNext(); )
        {
            t.next();
            for (var p = t.partitions(); p.hasNext(); )
            {
                p.next();
                if (first == ClientErrors.NONE)
                {
                    first = p.errorCode();
                }
            }
        }
        if (first == ClientErrors.COORDINATOR_NOT_AVAILABLE || first == ClientErrors.NOT_COORDINATOR ||
            first == ClientErrors.REQUEST_TIMED_OUT)
        {
            coordinatorUnknown();
        }
        if (membership != null && first != ClientErrors.NONE && first != GroupMembership.FENCED_INSTANCE_ID &&
            commitGeneration == membership.commitGeneration())
        {
            // FENCED_INSTANCE_ID fails the commit only: the next Heartbeat's answer ends the membership (kafka-clients)
            // kafka-clients: rebalance, or the generation is reset — only if the commit's generation is still the member's
            membership.onGroupError(first, assigned, nowNs);
        }
        if (first == ClientErrors.NONE)
        {
            for (int i = 0; i < assigned.size(); i++)
            {
                final FetchPosition p = assigned.get(i);
                if (p.committing >= 0 && p.committing == p.commitStaged)
                {
                    p.commitStaged = -1; // committed; one staged since (another offset) stays for the next commit
                }
            }
        }
        completeCommit(first);
    }

    /** An answer from the coordinator (or a FindCoordinator's): false if {@code apiKey} is none of the group's. */
    boolean onResponse(final short apiKey, final Object context, final short version, final DirectBuffer buffer,
        final int offset, final int limit, final ArrayList<FetchPosition> assigned, final long nowNs)
    {
        if (apiKey == ApiKeys.FIND_COORDINATOR.id)
        {
            onFindCoordinator(version, buffer, offset, limit, assigned, nowNs);
        }
        else if (apiKey == ApiKeys.OFFSET_COMMIT.id)
        {
            onCommit(version, buffer, offset, limit, assigned, nowNs);
        }
        else if (apiKey == ApiKeys.OFFSET_FETCH.id)
        {
            committed.onResponse(context, version, buffer, offset, limit, assigned, nowNs);
        }
        else if (apiKey == ApiKeys.JOIN_GROUP.id)
        {
            membership.onJoin(version, buffer, offset, limit, nowNs);
        }
        else if (apiKey == ApiKeys.SYNC_GROUP.id)
        {
            membership.onSync(version, buffer, offset, limit, nowNs);
        }
        else if (apiKey == ApiKeys.HEARTBEAT.id)
        {
            membership.onHeartbeat(version, buffer, offset, limit, assigned, nowNs);
        }
        else if (apiKey == ApiKeys.LEAVE_GROUP.id)
        {
            membership.onLeave();
        }
        else
        {
            return false;
        }
        return true;
    }

    /** A request of the group's that got no answer: false if {@code apiKey} is none of the group's. */
    boolean onFailure(final short apiKey, final Object context, final short errorCode, final ArrayList<FetchPosition> assigned,
        final long nowNs)
    {
        if (apiKey == ApiKeys.FIND_COORDINATOR.id)
        {
            findFailed(nowNs);
        }
        else if (apiKey == ApiKeys.OFFSET_COMMIT.id)
        {
            commitFailed(errorCode);
        }
        else if (apiKey == ApiKeys.OFFSET_FETCH.id)
        {
            committed.failed(context, assigned, errorCode, nowNs);
        }
        else if (apiKey == ApiKeys.JOIN_GROUP.id || apiKey == ApiKeys.SYNC_GROUP.id || apiKey == ApiKeys.HEARTBEAT.id ||
            apiKey == ApiKeys.LEAVE_GROUP.id)
        {
            coordinatorUnknown();
            membership.onFailure(apiKey, nowNs);
        }
        else
        {
            return false;
        }
        return true;
    }

    /** The commit's request got no answer (the connection closed or timed out): the coordinator is looked up again. */
    void commitFailed(final short errorCode)
    {
        commitInFlight = false;
        coordinatorUnknown();
        completeCommit(errorCode);
    }

    /**
     * The member's partitions were dropped: a commit not sent yet would carry none of them, so its caller is told it
     * failed (REBALANCE_IN_PROGRESS; kafka-clients fails a commit that cannot be sent in the generation it was made in).
     */
    void failUnsentCommit()
    {
        if (!commitSent)
        {
            completeCommit(ClientErrors.REBALANCE_IN_PROGRESS);
        }
    }

    private void completeCommit(final short error)
    {
        final OffsetCommitHandler h = commitHandler;
        if (h != null && !commitInFlight)
        {
            commitHandler = null;
            commitSent = false;
            h.onComplete(commitTag, error);
        }
    }

    /**
     * The consumer closes: an outstanding commit completes with CLIENT_CLOSED at once, sent or not (kafka-clients'
     * close waits up to its timeout for commitAsync's commits in flight: here call commitSync before close).
     */
    void close(final long nowNs)
    {
        final NodeConnection c = coordinator;
        coordinator = null;
        if (c != null)
        {
            c.shutdown(nowNs, ClientErrors.CLIENT_CLOSED);
        }
        commitInFlight = false;
        completeCommit(ClientErrors.CLIENT_CLOSED);
        committed.failAll(ClientErrors.CLIENT_CLOSED);
    }
}
