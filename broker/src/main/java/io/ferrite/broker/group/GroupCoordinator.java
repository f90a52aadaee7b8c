package io.ferrite.broker.group;

import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.coordinator.CoordinatorAgent;
import io.ferrite.broker.coordinator.CoordinatorCall;
import io.ferrite.broker.coordinator.CoordinatorClock;
import io.ferrite.broker.coordinator.CoordinatorLog;
import io.ferrite.broker.coordinator.CoordinatorRuntime;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.topic.TopicRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The coordinator of every group on this node: Kafka's classic group protocol (JoinGroup,
 * SyncGroup, Heartbeat, LeaveGroup and the Empty / PreparingRebalance / CompletingRebalance / Stable
 * / Dead state machine), committed offsets and their persistence in {@code __consumer_offsets}.
 *
 * <p>Group work is off the produce path and off the network threads: it runs on the coordinator's
 * agent ({@link CoordinatorAgent}), the one thread that touches the groups. A network thread decodes a
 * group request, hands it to the agent as a {@link CoordinatorCall} and defers its answer; the agent runs
 * it (the methods below, agent only), publishes the answer when it is final and wakes that network
 * thread. The agent writes {@code __consumer_offsets} through the log thread that owns each
 * partition, like a produce ({@link CoordinatorLog}; the topic refuses client produce), and what a write
 * changes in memory is applied once its log thread answered, by the agent ({@link
 * CoordinatorRuntime#applyAnsweredWrites}). Requests that wait (a JoinGroup until the rebalance completes, a SyncGroup
 * until the leader's assignment is written, a commit or deletion until its write is answered) stay
 * on the agent until their answer is final; no thread polls for them.
 *
 * <p>After a restart groups come back from the log with their offsets, generation and protocol
 * type, but empty: their members find themselves unknown at their next heartbeat and rejoin, and
 * resume from the committed offsets. (Kafka also restores the members; here that costs one
 * rebalance per group after a restart.) {@link CoordinatorLog} writes the topic, {@link GroupReplay} replays it at start,
 * and {@link StrayMigration} moves the groups found outside their partition home as the agent starts.
 *
 * <p>This class is the public face; the work is in its parts, each called on the agent: {@link
 * JoinPhase} (JoinGroup, rebalances and their completion), {@link SyncPhase} (SyncGroup, the
 * leader's assignment), {@link Membership} (Heartbeat, LeaveGroup, a member's removal), {@link
 * GroupTimers} (expiries, deadlines, retention, every tick of the agent), {@link OffsetCommits},
 * {@link GroupDeletions}, and {@link GroupQueries} (what OffsetFetch, ListGroups and DescribeGroups read).
 */
public final class GroupCoordinator implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(GroupCoordinator.class);
    public static final String OFFSETS_TOPIC = "__consumer_offsets";
    private static final int NO_GENERATION = -1;

    /** How a group behaves: Kafka's broker settings for groups and offsets. */
    public record Settings(int minSessionTimeoutMs, int maxSessionTimeoutMs, int initialRebalanceDelayMs, int maxSize,
        long offsetsRetentionMs, long retentionCheckIntervalMs, int offsetsTopicPartitions, int offsetsTopicSegmentBytes,
        int offsetMetadataMaxBytes)
    {
    }

    /** A member as the leader's JoinGroup response lists it. */
    public record JoinedMember(String memberId, String groupInstanceId, byte[] metadata)
    {
    }

    /**
     * An answer the coordinator fills in on its agent; final once {@code done}, and then read by the
     * request's network thread (published by its {@link CoordinatorCall}).
     */
    public abstract static class Waiter implements CoordinatorCall.Outcome
    {
        public boolean done;
        public short error;

        @Override
        public boolean complete(final long nowMs)
        {
            return done;
        }
    }

    /** The answer to a JoinGroup, filled in when the rebalance completes. */
    public static final class JoinWaiter extends Waiter
    {
        public int generationId = NO_GENERATION;
        public String protocolType;
        public String protocolName;
        public String leaderId = "";
        public String memberId = "";
        public boolean skipAssignment;
        public List<JoinedMember> members = List.of();
        final boolean skipAssignmentSupported;

        JoinWaiter(final boolean skipAssignmentSupported)
        {
            this.skipAssignmentSupported = skipAssignmentSupported;
        }

        JoinWaiter fail(final short code, final String member)
        {
            error = code;
            memberId = member == null ? "" : member;
            done = true;
            return this;
        }
    }

    /** The answer to a SyncGroup, filled in when the leader's assignment arrives. */
    public static final class SyncWaiter extends Waiter
    {
        public byte[] assignment = new byte[0];
        public String protocolType;
        public String protocolName;

        SyncWaiter fail(final short code)
        {
            error = code;
            done = true;
            return this;
        }
    }

    /** A member named in LeaveGroup. */
    public record MemberIdentity(String memberId, String groupInstanceId)
    {
    }

    /** A group as ListGroups and DescribeGroups report it. */
    public record Description(String groupId, String state, String protocolType, String protocolData, List<MemberDescription> members)
    {
    }

    public record MemberDescription(String memberId, String groupInstanceId, String clientId, String clientHost, byte[] metadata,
        byte[] assignment)
    {
    }

    /** A committed offset as OffsetFetch answers it. */
    public record Committed(long offset, int leaderEpoch, String metadata)
    {
    }

    /**
     * What a RequireStable OffsetFetch gets for a partition with an offset pending in a transaction:
     * UNSTABLE_OFFSET_COMMIT with offset -1, leader epoch -1 and no metadata (compared by identity).
     */
    public static final Committed UNSTABLE = new Committed(-1, -1, "");

    private final Settings settings;
    private final TopicRegistry topics;
    private final Map<String, Group> groups = new HashMap<>();
    /** Offsets committed inside transactions not ended yet. */
    private final TxnOffsets txnOffsets = new TxnOffsets();
    private final CommitsInFlight commitsInFlight = new CommitsInFlight();
    private final CoordinatorRuntime runtime;
    private final CoordinatorTopic store;
    private final JoinPhase joins;
    private final SyncPhase syncs;
    private final Membership members;
    private final GroupTimers timers;
    /** What the agent writes into the broker's counters about the groups (agent only). */
    private final GroupMetrics metrics;
    private final TopicDeletions topicDeletions; // a deleted topic's offsets tombstoned (its names from the admin agent)
    private final CoordinatorAgent agent;
    private final CoordinatorClock clock;
    /** Which groups this node coordinates: all alone, the partitions it leads in a cluster. */
    private final GroupOwnership ownership;
    /** What the load found, until the agent starts and moves its strays home ({@link StrayMigration}). */
    private GroupReplay.Loaded loaded;
    /** The strays' migration while under way (agent only). */
    private StrayMigration migration;
    /** Tests only: run inside an OffsetCommit's step on the agent (null in production). */
    volatile OffsetCommits.Hooks commitHooks;

    /** For tests: a coordinator on a runtime of its own ({@link #start} starts it, {@link #close} stops it). */
    public GroupCoordinator(final TopicRegistry topics, final AdminAgent admin, final Settings settings,
        final LogThread[] logThreads, final int sender)
    {
        this(topics, admin, settings, logThreads, sender, CoordinatorClock.system());
    }

    /** For tests: {@code clock} moved by hand (see {@link CoordinatorClock}). */
    GroupCoordinator(final TopicRegistry topics, final AdminAgent admin, final Settings settings,
        final LogThread[] logThreads, final int sender, final CoordinatorClock clock)
    {
        this(topics, settings, new CoordinatorRuntime(topics, admin, logThreads, sender, clock));
    }

    /**
     * The group coordinator on the coordinators' {@code runtime} (its agent, its writes through the log
     * threads, its clock), whose owner {@linkplain CoordinatorRuntime#start starts} it after {@link #load}.
     */
    public GroupCoordinator(final TopicRegistry topics, final Settings settings, final CoordinatorRuntime runtime)
    {
        this.settings = settings;
        this.topics = topics;
        this.runtime = runtime;
        this.clock = runtime.clock();
        this.store = runtime.log().topic(OFFSETS_TOPIC, "group", "offsets.topic.num.partitions", settings.offsetsTopicPartitions(),
            Map.of("cleanup.policy", "compact", "segment.bytes", Integer.toString(settings.offsetsTopicSegmentBytes())),
            CoordinatorLog::ofFailedWrite);
        this.metrics = new GroupMetrics(groups, topics);
        this.joins = new JoinPhase(groups, settings, store, clock);
        this.syncs = new SyncPhase(groups, store, joins, clock, metrics);
        this.members = new Membership(groups, joins, clock);
        this.timers = new GroupTimers(groups, txnOffsets, settings, store, joins, syncs, members, clock, metrics);
        this.agent = runtime.agent();
        this.ownership = new GroupOwnership(this, topics, groups, txnOffsets);
        runtime.onBeforeCalls(ownership::reconcile);
        this.topicDeletions = new TopicDeletions(groups, txnOffsets, store, runtime, settings.retentionCheckIntervalMs());
        runtime.onStart(() ->
        {
            final GroupReplay.Loaded found = loaded;
            loaded = null;
            if (found != null)
            {
                migration = StrayMigration.start(groups, txnOffsets, store, found);
            }
        });
        // a marker on __consumer_offsets, from the transaction coordinator or a client's WriteTxnMarkers: on this agent
        runtime.log().markersAppended((partition, producerId, commit) ->
        {
            if (partition.topic.equals(OFFSETS_TOPIC))
            {
                assert agent.isOwner() : Thread.currentThread() + " is not the group coordinator's agent";
                txnOffsets.markerAppended(partition.index, producerId, commit, groups, clock.wallMs());
            }
        });
        runtime.onTick(nowMs ->
        {
            if (migration != null && !migration.step())
            {
                migration = null;
            }
            timers.check(nowMs);
            metrics.tick(nowMs);
        });
    }

    /**
     * From FindCoordinator, on a network thread: has the admin agent create {@code __consumer_offsets}
     * when it does not exist yet, and returns that creation (null when it exists).
     */
    java.util.concurrent.CompletableFuture<?> offsetsTopicWanted()
    {
        return ownership.followingLeaders() || topics.topic(OFFSETS_TOPIC) != null ? null : store.create();
    }

    /** Which groups this node coordinates ({@link GroupOwnership}). */
    public GroupOwnership ownership()
    {
        return ownership;
    }

    /**
     * In a cluster, before {@link #load}: groups are coordinated by the leaders of {@code __consumer_offsets}'s
     * partitions, which {@code locator} finds for FindCoordinator; the topic is the controller's to create, never
     * created here, and nothing is loaded at start (a partition's groups are, when this node becomes its leader).
     */
    public void followLeaders(final PartitionOwnership.Locator locator)
    {
        ownership.followsLeaders(locator);
        store.createdElsewhere();
    }

    /**
     * Where the groups' figures and lags go: the broker's counters file (before the agent starts; without it, nowhere).
     */
    public void counters(final io.ferrite.broker.metrics.BrokerCounters counters)
    {
        metrics.counters(counters.lag(), counters.groups());
    }

    /** Any thread (the admin agent's): DeleteTopics deleted {@code topic} of {@code partitions}; its offsets go ({@link TopicDeletions}). */
    public void topicDeleted(final String topic, final int partitions)
    {
        topicDeletions.deleted(topic, partitions);
    }

    /** The agent's clock. */
    CoordinatorClock clock()
    {
        return clock;
    }

    /** The partition count groups are placed by in {@code __consumer_offsets}: FindCoordinator's, in a cluster, too. */
    public io.ferrite.broker.coordinator.PartitionCount offsetsCount()
    {
        return store.count();
    }

    /**
     * Loads the groups from {@code __consumer_offsets} (when it exists), before the agent runs; the
     * agent, as it starts, moves the groups found with strays to their partition ({@link StrayMigration}).
     */
    public void load()
    {
        clock.update();
        if (ownership.followingLeaders())
        {
            timers.start(clock.nowMs());
            return; // a cluster's node loads a partition's groups as it becomes its leader (GroupOwnership)
        }
        loaded = GroupReplay.load(topics, store, groups, txnOffsets, clock.wallMs());
        if (loaded.records() > 0)
        {
            LOG.info("loaded {} groups from {} records of {}", groups.size(), loaded.records(), OFFSETS_TOPIC);
        }
        timers.start(clock.nowMs());
    }

    /** For tests, on a runtime of its own: loads the groups ({@link #load}) and starts the agent on a thread of its own. */
    public void start()
    {
        load();
        runtime.start();
    }

    /** The coordinator's agent: started by {@link #start}, or stepped by a test after {@link #load}. */
    public CoordinatorAgent agent()
    {
        return agent;
    }

    /** For tests, on a runtime of its own: stops its agent. */
    @Override
    public void close()
    {
        runtime.close();
    }

    // ------------------------------------------------------------------------------------------
    // membership (each method below on the agent only: a CoordinatorCall's work)
    // ------------------------------------------------------------------------------------------

    /** JoinGroup; the waiter may be done at once (an error, MEMBER_ID_REQUIRED, a static rejoin). */
    public JoinWaiter join(final String groupId, final String memberId, final String groupInstanceId,
        final String clientId, final String clientHost, final int sessionTimeoutMs, final int rebalanceTimeoutMs,
        final String protocolType, final List<Member.Protocol> protocols, final boolean requireKnownMemberId,
        final boolean skipAssignmentSupported)
    {
        assert agent.isOwner() : Thread.currentThread() + " is not the group coordinator's agent";
        return joins.join(groupId, memberId, groupInstanceId, clientId, clientHost, sessionTimeoutMs, rebalanceTimeoutMs,
            protocolType, protocols, requireKnownMemberId, skipAssignmentSupported);
    }

    /** SyncGroup; done at once unless the group waits for its leader's assignment. */
    public SyncWaiter sync(final String groupId, final int generationId, final String memberId,
        final String groupInstanceId, final String protocolType, final String protocolName, final Map<String, byte[]> assignments)
    {
        assert agent.isOwner() : Thread.currentThread() + " is not the group coordinator's agent";
        return syncs.sync(groupId, generationId, memberId, groupInstanceId, protocolType, protocolName, assignments);
    }

    public short heartbeat(final String groupId, final String memberId, final String groupInstanceId,
        final int generationId)
    {
        assert agent.isOwner() : Thread.currentThread() + " is not the group coordinator's agent";
        return members.heartbeat(groupId, memberId, groupInstanceId, generationId);
    }

    /** LeaveGroup: one error per member named (the request's top-level error is NONE unless the group is unknown). */
    public List<Short> leave(final String groupId, final List<MemberIdentity> leaving)
    {
        assert agent.isOwner() : Thread.currentThread() + " is not the group coordinator's agent";
        return members.leave(groupId, leaving);
    }

    // ------------------------------------------------------------------------------------------
    // offsets
    // ------------------------------------------------------------------------------------------

    /**
     * OffsetCommit: in one step on the agent the member and generation checked and {@code offsets} (the
     * partitions that passed their own checks) sent to their log thread as one batch; stored when the
     * log thread answers it OK, before any later write of the group is applied (see {@link CoordinatorLog}).
     */
    OffsetCommits.Result commitOffsets(final String groupId, final int generationId, final String memberId,
        final String groupInstanceId, final short version, final Map<Group.TopicPartition, OffsetCommits.Asked> offsets)
    {
        assert agent.isOwner() : Thread.currentThread() + " is not the group coordinator's agent";
        topicDeletions.drain(); // a deleted topic's tombstones before any commit checked after its deletion
        return OffsetCommits.commit(groups, store, commitsInFlight, groupId, generationId, memberId, groupInstanceId, version, offsets,
            commitHooks, metrics);
    }

    /** TxnOffsetCommit's group checks ({@link TxnOffsetCommits#validate}). */
    short validateTxnCommit(final TxnOffsetCommits.Asked asked)
    {
        assert agent.isOwner() : Thread.currentThread() + " is not the group coordinator's agent";
        return TxnOffsetCommits.validate(groups, asked);
    }

    /** The {@code __consumer_offsets} partition a group's records are written to (agent only: the store's fixed count). */
    public int offsetsPartitionOf(final String groupId)
    {
        return store.partitionOf(groupId);
    }

    /** TxnOffsetCommit's batch, its offsets pending once written ({@link TxnOffsetCommits#write}). */
    CoordinatorLog.Write writeTxnOffsets(final TxnOffsetCommits.Asked asked)
    {
        assert agent.isOwner() : Thread.currentThread() + " is not the group coordinator's agent";
        metrics.txnCommitted(asked.offsets().size()); // as Kafka 4.4: at the request, whatever the transaction's end
        topicDeletions.drain(); // as in commitOffsets
        return TxnOffsetCommits.write(groups, store, txnOffsets, asked);
    }

    /** offset.metadata.max.bytes (any thread: a setting). */
    public int offsetMetadataMaxBytes()
    {
        return settings.offsetMetadataMaxBytes();
    }

    /** The committed offset of a partition, or null. */
    public Committed committed(final String groupId, final String topic, final int partition)
    {
        return committed(groupId, topic, partition, false);
    }

    /**
     * The committed offset of a partition, or null; with {@code requireStable} (OffsetFetch v7+'s
     * RequireStable) {@link #UNSTABLE} when a transaction has an offset pending for it, or in a batch
     * still on its way to the log ({@link TxnOffsets#isUnstable}).
     */
    public Committed committed(final String groupId, final String topic, final int partition, final boolean requireStable)
    {
        assert agent.isOwner() : Thread.currentThread() + " is not the group coordinator's agent";
        return GroupQueries.committed(groups, requireStable ? txnOffsets : null, groupId, topic, partition);
    }

    /** Every committed offset of a group, by topic then partition (sorted). */
    public Map<String, Map<Integer, Committed>> committed(final String groupId)
    {
        return committed(groupId, false);
    }

    /** As {@link #committed(String)}; with {@code requireStable} a partition with an offset pending in a transaction is {@link #UNSTABLE}. */
    public Map<String, Map<Integer, Committed>> committed(final String groupId, final boolean requireStable)
    {
        assert agent.isOwner() : Thread.currentThread() + " is not the group coordinator's agent";
        return GroupQueries.committed(groups, requireStable ? txnOffsets : null, groupId);
    }

    // ------------------------------------------------------------------------------------------
    // administration
    // ------------------------------------------------------------------------------------------

    public List<Description> list()
    {
        assert agent.isOwner() : Thread.currentThread() + " is not the group coordinator's agent";
        return GroupQueries.list(groups);
    }

    /** A group's description, or null when there is no such group. */
    public Description describe(final String groupId)
    {
        assert agent.isOwner() : Thread.currentThread() + " is not the group coordinator's agent";
        return GroupQueries.describe(groups, groupId);
    }

    /** DeleteGroups: the Empty groups among {@code groupIds} deleted, their tombstones written first (see {@link GroupDeletions}). */
    GroupDeletions.Deleted deleteGroups(final List<String> groupIds)
    {
        assert agent.isOwner() : Thread.currentThread() + " is not the group coordinator's agent";
        return GroupDeletions.deleteGroups(groups, txnOffsets, commitsInFlight, store, groupIds, ownership::error);
    }

    /** OffsetDelete: the request's error, else an error per partition in {@code results}. */
    GroupDeletions.OffsetsDeleted deleteOffsets(final String groupId, final Collection<Group.TopicPartition> partitions,
        final Map<Group.TopicPartition, Short> results)
    {
        assert agent.isOwner() : Thread.currentThread() + " is not the group coordinator's agent";
        return GroupDeletions.deleteOffsets(groups, txnOffsets, store, groupId, partitions, results, metrics);
    }
}
