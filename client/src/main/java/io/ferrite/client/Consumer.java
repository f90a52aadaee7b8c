package io.ferrite.client;

import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.record.Record;
import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.Agent;

import java.util.ArrayList;

/**
 * A Kafka consumer of assigned partitions that allocates nothing in steady state. Single-threaded: {@link #assign},
 * {@link #seek}, {@link #poll} and {@link #doWork()} are called by one thread — the application's own (no client
 * thread), or an {@code AgentRunner} running this agent composed with the application's. The duty cycle keeps the
 * metadata, finds positions with ListOffsets ({@code auto.offset.reset}, {@link #seekToBeginning},
 * {@link #seekToEnd}) and keeps one long-poll Fetch in flight per broker (kafka-clients' {@code fetch.min.bytes},
 * {@code fetch.max.wait.ms}, {@code max.partition.fetch.bytes}, {@code fetch.max.bytes}); {@code poll} hands out the
 * records of the answers as flyweights read in place ({@link RecordHandler}), and sends a broker's next Fetch as it
 * starts on that broker's answer. {@code isolation.level} read_uncommitted (the default) or read_committed (aborted
 * transactions' records left out, {@link AbortedTransactions}). With a {@code group.id}, the group's committed offsets
 * ({@link GroupOffsets}): the first position of an assigned partition, {@link #commitSync}/{@link #commitAsync},
 * auto-commit ({@link AutoCommit}), and group membership with {@link #subscribe} ({@link GroupMembership}, the classic
 * protocol). No fetch sessions (each Fetch names every partition).
 */
public final class Consumer implements Agent, ResponseListener, AutoCloseable
{
    private final ConsumerConfig config;
    private final ClusterMetadata metadata;
    private final FetchRequests requests;
    private final FetchAnswers answers;
    private final RecordCursor cursor;
    /** Grouped by topic: a request names each topic once. */
    private final ArrayList<FetchPosition> assigned = new ArrayList<>();
    private final Int2ObjectHashMap<NodeFetcher> fetchers = new Int2ObjectHashMap<>();
    /** The group's committed offsets, null without a {@code group.id}. */
    private final GroupOffsets group;
    /** The blocking calls on the group's offsets, null without a {@code group.id}. */
    private final CommitCalls calls;
    /** The group membership of {@link #subscribe}, null without a {@code group.id}. */
    private final GroupMembership membership;
    /** {@code enable.auto.commit}, null when off. */
    private final AutoCommit autoCommit;
    private int nextFetcher;
    private boolean closed;
    private long nowNs;

    public Consumer(final ConsumerConfig config)
    {
        this.config = config;
        this.metadata = new ClusterMetadata(config.transport(), this);
        this.requests = new FetchRequests(config);
        this.answers = new FetchAnswers(config, metadata);
        this.cursor = new RecordCursor(config.isolationLevel == ConsumerConfig.IsolationLevel.READ_COMMITTED);
        this.group = config.groupId == null ? null : new GroupOffsets(config, metadata, this);
        this.calls = group == null ? null : new CommitCalls(config, group, this);
        this.membership = group == null ? null : new GroupMembership(config, group, metadata,
            new MemberAssignment(config, group, this, assigned, calls));
        this.autoCommit = config.autoCommit() ? new AutoCommit(config, calls, System.nanoTime()) : null;
    }

    /**
     * Adds a partition to read; its first position is the group's committed offset when there is one (with a
     * {@code group.id}), else it comes from {@code auto.offset.reset}.
     */
    public void assign(final String topic, final int partition)
    {
        if (membership != null && membership.subscribed())
        {
            throw new IllegalStateException("Subscription to topics and manual assignment are mutually exclusive");
        }
        assignFromGroup(topic, partition);
    }

    /**
     * Joins the group (classic protocol, "range" assignor: {@link GroupMembership}); {@code listener} is told what this
     * member gains and gives up. Heartbeats go only from {@link #doWork}: call it every {@code heartbeat.interval.ms}; a
     * gap over {@code session.timeout.ms} loses the membership. Call {@code poll} within {@code max.poll.interval.ms}.
     */
    public void subscribe(final java.util.List<String> topics, final RebalanceListener listener)
    {
        requireOpenGroup();
        if (!assigned.isEmpty() && !membership.subscribed())
        {
            throw new IllegalStateException("Subscription to topics and manual assignment are mutually exclusive");
        }
        membership.subscribe(topics, listener, System.nanoTime());
    }

    /** {@link #assign}, also for a partition the group gives this member. */
    void assignFromGroup(final String topic, final int partition)
    {
        if (find(topic, partition) != null)
        {
            return;
        }
        final TopicState t = metadata.topic(topic);
        final FetchPosition p = new FetchPosition(t, partition);
        if (group != null)
        {
            p.awaitCommitted();
        }
        else
        {
            p.reset(config.autoOffsetReset, ClientErrors.NO_OFFSET_FOR_PARTITION);
        }
        int at = assigned.size();
        for (int i = assigned.size() - 1; i >= 0; i--)
        {
            if (assigned.get(i).topic == t)
            {
                at = i + 1;
                break;
            }
        }
        assigned.add(at, p);
        for (final NodeFetcher f : fetchers.values())
        {
            f.ensureCapacity(assigned.size());
        }
    }

    /** The next record handed out for the partition will be the one at {@code offset} (or the first after it). */
    public void seek(final String topic, final int partition, final long offset)
    {
        assignedPosition(topic, partition).seek(offset);
    }

    /** The partition's position moves to its log start offset (a ListOffsets with EARLIEST). */
    public void seekToBeginning(final String topic, final int partition)
    {
        assignedPosition(topic, partition).reset(FetchPosition.EARLIEST_TIMESTAMP);
    }

    /** The partition's position moves to its log end offset (a ListOffsets with LATEST). */
    public void seekToEnd(final String topic, final int partition)
    {
        assignedPosition(topic, partition).reset(FetchPosition.LATEST_TIMESTAMP);
    }

    /**
     * The offset of the next record handed out for the partition, or -1 while it is not known: a reset under way, or
     * the partition stopped with an error ({@code poll} reports it; a seek starts it again).
     */
    public long position(final String topic, final int partition)
    {
        final FetchPosition p = assignedPosition(topic, partition);
        return p.state == FetchPosition.State.FETCHING ? p.position : -1;
    }

    /**
     * Hands out up to {@code limit} records buffered from the fetch answers, in offset order per partition, to
     * {@code handler} on this thread. Does no socket I/O but one: the next Fetch to a broker goes as its answer is taken.
     *
     * @return the records handed out
     * @throws ConsumerException once for each partition that stopped (unknown topic or partition, OFFSET_OUT_OF_RANGE
     *                           with {@code auto.offset.reset} none, a corrupt batch or record — bad CRC or frame, a
     *                           batch that does not decompress, a malformed record, or CORRUPT_MESSAGE from the broker —
     *                           or another error that is not retriable); the other partitions go on
     */
    public int poll(final RecordHandler handler, final int limit)
    {
        if (closed)
        {
            throw new IllegalStateException("the consumer is closed");
        }
        if (membership != null && !membership.polled(System.nanoTime()))
        {
            return 0; // revoking: a record handed out now would not be in the revocation's commit
        }
        reportFailure();
        int n = 0;
        while (n < limit)
        {
            if (!cursor.active() && !takeAnswer())
            {
                break;
            }
            final Record r = cursor.next();
            if (r != null)
            {
                final FetchPosition p = cursor.current();
                handler.onRecord(p.topic.name, p.partition, r);
                n++;
            }
        }
        return n;
    }

    /** Starts on the next broker's answer arrived, sending that broker's next Fetch: false if none has arrived. */
    private boolean takeAnswer()
    {
        final ArrayList<NodeConnection> connections = metadata.connections;
        for (int i = 0; i < connections.size(); i++)
        {
            final NodeConnection c = connections.get((nextFetcher + i) % connections.size());
            final NodeFetcher f = c.nodeId >= 0 ? fetchers.get(c.nodeId) : null;
            if (f != null && f.arrived.length >= 0)
            {
                nextFetcher = (nextFetcher + i + 1) % connections.size();
                f.startDraining();
                cursor.start(f);
                if (c.canSend() && !f.fetchInFlight)
                {
                    requests.sendFetch(c, f, assigned, System.nanoTime());
                }
                return true;
            }
        }
        return false;
    }

    private void reportFailure()
    {
        for (int i = 0; i < assigned.size(); i++)
        {
            final FetchPosition p = assigned.get(i);
            if (p.state == FetchPosition.State.FAILED && !p.reported)
            {
                p.reported = true;
                throw new ConsumerException(p.topic.name, p.partition, p.error, ConsumerException.describe(p));
            }
        }
    }

    /**
     * The offset the next commit takes for an assigned partition (the next record the application wants, as Kafka's);
     * it stays staged until a commit carrying it succeeds, so a commit made again after a failure takes it again.
     */
    public void commitOffset(final String topic, final int partition, final long offset)
    {
        requireOpenGroup();
        if (offset < 0)
        {
            throw new IllegalArgumentException("offset " + offset + " < 0");
        }
        assignedPosition(topic, partition).commitStaged = offset;
    }

    /**
     * Commits the offsets given to {@link #commitOffset} and not yet committed, or if none are, the position of each
     * assigned partition that has one (kafka-clients' {@code commitAsync()}); {@code handler} is told the outcome
     * from a later duty cycle (or now, with nothing to commit). Not retried (as kafka-clients). One commit is
     * outstanding at a time: false (nothing started) while one is, or once the consumer is closed.
     */
    public boolean commitAsync(final OffsetCommitHandler handler, final long tag)
    {
        requireGroup();
        return !closed && calls.start(assigned, handler, tag, CommitCalls.Mode.APPLICATION);
    }

    /**
     * {@link #commitAsync}, then the duty cycle run on this thread until it completes, retriable errors retried
     * after {@code retry.backoff.ms} within {@code timeoutMs} (kafka-clients' {@code commitSync}). A commit still
     * outstanding (commitAsync's, or one of a commitSync that timed out) is waited for first, within the timeout.
     *
     * @throws OffsetCommitException with the error that is not retriable (UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION:
     *                               the group has members), or REQUEST_TIMED_OUT when the time ran out
     */
    public void commitSync(final long timeoutMs)
    {
        requireOpenGroup();
        calls.commitSync(assigned, timeoutMs, CommitCalls.Mode.APPLICATION);
    }

    /**
     * The group's committed offset of a partition (assigned or not), or -1 if none is committed: an OffsetFetch, the
     * duty cycle run on this thread until its answer, retriable errors retried within {@code timeoutMs}.
     *
     * @throws OffsetCommitException with an error that is not retriable, or REQUEST_TIMED_OUT
     */
    public long committed(final String topic, final int partition, final long timeoutMs)
    {
        requireOpenGroup();
        return calls.committed(topic, partition, timeoutMs);
    }

    /** Whether an OffsetFetch for first positions is in flight (package-private: tests stage a seek against it). */
    boolean committedPositionsInFlight()
    {
        return group != null && group.committed.positionsInFlight();
    }

    private void requireGroup()
    {
        if (group == null)
        {
            throw new IllegalStateException("no group.id: committed offsets need one");
        }
    }

    /** As kafka-clients, a closed consumer refuses the calls on committed offsets (commitAsync returns false). */
    private void requireOpenGroup()
    {
        requireGroup();
        if (closed)
        {
            throw new IllegalStateException("the consumer is closed");
        }
    }

    /** The group's offsets (package-private: tests step a lookup or a commit against it), null without a group.id. */
    GroupOffsets groupOffsets()
    {
        return group;
    }

    @Override
    public int doWork()
    {
        final long now = System.nanoTime();
        nowNs = now;
        int work = metadata.pollAll(now);
        work += checkMetadata(now);
        if (group != null)
        {
            work += group.doWork(assigned, now) + membership.doWork(assigned, now);
            work += autoCommit != null ? autoCommit.doWork(assigned, now) : 0;
        }
        for (int i = 0; i < metadata.connections.size(); i++)
        {
            final NodeConnection c = metadata.connections.get(i);
            if (c.nodeId < 0 || !c.canSend())
            {
                continue;
            }
            final NodeFetcher f = fetcher(c.nodeId);
            if (!f.listOffsetsInFlight)
            {
                work += requests.sendListOffsets(c, f, assigned, now);
            }
            if (!f.fetchInFlight && f.arrived.length < 0 && c.canSend())
            {
                work += requests.sendFetch(c, f, assigned, now);
            }
        }
        return work;
    }

    /**
     * Stops the partitions of topics the broker does not know, drops the records buffered from a broker that no longer
     * leads their partition, and asks for leaders not known or not connected.
     */
    private int checkMetadata(final long now)
    {
        int work = 0;
        for (int i = 0; i < assigned.size(); i++)
        {
            final FetchPosition p = assigned.get(i);
            if (p.state == FetchPosition.State.FAILED)
            {
                continue;
            }
            final TopicState t = p.topic;
            if (t.status == TopicState.Status.FAILED ||
                (t.status == TopicState.Status.KNOWN && p.partition >= t.partitions.length))
            {
                p.fail(t.status == TopicState.Status.FAILED ? t.error : ClientErrors.UNKNOWN_TOPIC_OR_PARTITION);
                work++;
                continue;
            }
            final PartitionState ps = p.metadata();
            if (ps != null && p.bufferedNode >= 0 && ps.leader != p.bufferedNode && p.fetchNode < 0)
            {
                if (p.position != p.fetchOffset)
                {
                    p.leaderMoved(); // records buffered from the old leader: dropped, fetched again from the new
                    work++;
                }
                p.bufferedNode = -1;
            }
            if (ps != null && (ps.leader < 0 || metadata.leaderConnection(ps.leader, now) == null))
            {
                metadata.requestUpdate();
            }
        }
        return work;
    }

    private NodeFetcher fetcher(final int nodeId)
    {
        NodeFetcher f = fetchers.get(nodeId);
        if (f == null)
        {
            f = new NodeFetcher(nodeId);
            f.ensureCapacity(assigned.size());
            fetchers.put(nodeId, f);
        }
        return f;
    }

    private FetchPosition find(final String topic, final int partition)
    {
        for (int i = 0; i < assigned.size(); i++)
        {
            final FetchPosition p = assigned.get(i);
            if (p.partition == partition && p.topic.name.equals(topic))
            {
                return p;
            }
        }
        return null;
    }

    /** The assigned partition (package-private: tests stage races on its state), or IllegalStateException. */
    FetchPosition assignedPosition(final String topic, final int partition)
    {
        final FetchPosition p = find(topic, partition);
        if (p == null)
        {
            throw new IllegalStateException("No current assignment for partition " + topic + "-" + partition);
        }
        return p;
    }

    @Override
    public void onResponse(final NodeConnection connection, final short apiKey, final short version, final Object context,
        final DirectBuffer buffer, final int offset, final int limit)
    {
        if (apiKey == ApiKeys.METADATA.id)
        {
            metadata.onResponse(version, buffer, offset, limit, nowNs);
        }
        else if (apiKey == ApiKeys.FETCH.id)
        {
            answers.onFetch((NodeFetcher)context, version, buffer, offset, limit, nowNs);
        }
        else if (apiKey == ApiKeys.LIST_OFFSETS.id)
        {
            answers.onListOffsets((NodeFetcher)context, version, buffer, offset, limit, assigned, nowNs);
        }
        else if (group != null)
        {
            group.onResponse(apiKey, context, version, buffer, offset, limit, assigned, nowNs);
        }
    }

    @Override
    public void onFailure(final NodeConnection connection, final short apiKey, final Object context, final short errorCode)
    {
        if (apiKey == ApiKeys.METADATA.id)
        {
            metadata.onFailure(nowNs);
        }
        else if (apiKey == ApiKeys.FETCH.id)
        {
            answers.failFetch((NodeFetcher)context, nowNs);
        }
        else if (apiKey == ApiKeys.LIST_OFFSETS.id)
        {
            answers.failResets((NodeFetcher)context, assigned, nowNs);
        }
        else if (group != null)
        {
            group.onFailure(apiKey, context, errorCode, assigned, nowNs);
        }
    }

    @Override
    public void onWritten(final NodeConnection connection, final Object context)
    {
        // the consumer sends nothing that waits for no answer
    }

    @Override
    public void onReady(final NodeConnection connection)
    {
        // fetches go from the duty cycle once a connection is ready
    }

    @Override
    public String roleName()
    {
        return "ferrite-consumer";
    }

    /** Closes the connections (buffered records dropped); with a group, revokes, commits and leaves first. */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        if (membership != null)
        {
            membership.close(autoCommit != null);
        }
        closed = true;
        metadata.shutdownAll(System.nanoTime(), ClientErrors.CLIENT_CLOSED);
        if (group != null)
        {
            group.close(System.nanoTime());
        }
    }

    @Override
    public void onClose()
    {
        close();
    }
}
