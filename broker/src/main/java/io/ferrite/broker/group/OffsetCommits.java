package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.CoordinatorCall;
import io.ferrite.broker.coordinator.CoordinatorClock;
import io.ferrite.broker.coordinator.CoordinatorLog;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.wire.record.RecordBatchDescriptor;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * OffsetCommit's check and write, one step on the coordinator's agent (one CoordinatorCall's work): the
 * member and generation are checked and the offsets sent to {@code __consumer_offsets}' log thread as
 * one batch; only once the log thread answered it OK (in fsync durability: once fsynced) do they
 * become the group's committed offsets. With the check and the send in separate steps a
 * rebalance could come between them and let a stale generation's commit through; with memory
 * changed first, a failed append would be answered as a commit and lost at the next restart (and in
 * fsync durability OffsetFetch would return an offset not yet durable, which Kafka never does). A
 * rebalance after the check cannot overtake the commit: the group's writes go through one queue,
 * answered and applied in order, and the rebalance's own write (its SyncGroup's) comes after.
 *
 * <p>The commit timestamp (in the record, and what offset retention counts from) is the
 * coordinator's wall clock ({@link CoordinatorClock#wallMs}) in the pass that runs the commit, as Kafka's
 * coordinator stamps a commit when it handles it; the network thread that decoded the request takes none.
 */
final class OffsetCommits
{
    /** The outcome: a group error for every partition, or the write that stores the offsets (null if nothing was to be written). */
    record Result(short groupError, CoordinatorLog.Write write)
    {
    }

    /**
     * Tests only: {@code afterValidated} runs right after the member and generation are checked,
     * {@code beforeStored} right before the batch goes to its log thread; both inside the commit's one step on the agent.
     */
    record Hooks(Runnable afterValidated, Runnable beforeStored)
    {
    }

    /** A partition's offset as the request asks to commit it: stamped on the agent ({@link #commit}). */
    record Asked(long offset, int leaderEpoch, String metadata)
    {
    }

    private static final Result NOTHING_TO_WRITE = new Result(Errors.NONE, null);

    private OffsetCommits()
    {
    }

    /**
     * Checks, then writes the {@code asked} offsets (the partitions that passed their own checks; may be empty), stored
     * once written, and then counted in {@code metrics} (the group's lag refreshed).
     */
    static Result commit(final Map<String, Group> groups, final CoordinatorTopic store, final CommitsInFlight inFlight, final String groupId,
        final int generationId, final String memberId, final String groupInstanceId, final short version,
        final Map<Group.TopicPartition, Asked> asked, final Hooks hooks, final GroupMetrics metrics)
    {
        final short groupError = validate(groups, groupId, generationId, memberId, groupInstanceId, version);
        if (hooks != null && hooks.afterValidated() != null)
        {
            hooks.afterValidated().run();
        }
        if (groupError != Errors.NONE)
        {
            return new Result(groupError, null);
        }
        if (asked.isEmpty())
        {
            return NOTHING_TO_WRITE;
        }
        final long committedAtMs = store.clock().wallMs();
        final Map<Group.TopicPartition, Group.Offset> offsets = new LinkedHashMap<>(asked.size() * 2);
        for (final Map.Entry<Group.TopicPartition, Asked> e : asked.entrySet())
        {
            final Asked a = e.getValue();
            offsets.put(e.getKey(), new Group.Offset(a.offset(), a.leaderEpoch(), a.metadata(), committedAtMs));
        }
        final List<byte[]> keys = new ArrayList<>(offsets.size());
        final List<byte[]> values = new ArrayList<>(offsets.size());
        for (final Map.Entry<Group.TopicPartition, Group.Offset> e : offsets.entrySet())
        {
            keys.add(GroupRecords.offsetKey(groupId, e.getKey().topic(), e.getKey().partition()));
            values.add(GroupRecords.offsetValue(e.getValue()));
        }
        if (hooks != null && hooks.beforeStored() != null)
        {
            hooks.beforeStored().run();
        }
        inFlight.sent(groupId, offsets.keySet()); // before the write: a batch that cannot be sent is answered at once
        return new Result(Errors.NONE, store.write(groupId, keys, values, RecordBatchDescriptor.NO_PRODUCER_ID,
            RecordBatchDescriptor.NO_PRODUCER_EPOCH, (error, baseOffset) ->
            {
                inFlight.answered(groupId, offsets.keySet());
                if (error == Errors.NONE)
                {
                    store(groups, groupId, offsets, baseOffset, store.clock().wallMs());
                    metrics.committed(groupId, offsets.size());
                }
            }));
    }

    /**
     * The offsets, once their write is answered OK (their records from {@code baseOffset} on, in order): the
     * group is looked up again, as what came between may have changed it.
     */
    private static void store(final Map<String, Group> groups, final String groupId, final Map<Group.TopicPartition, Group.Offset> offsets,
        final long baseOffset, final long now)
    {
        Group group = groups.get(groupId);
        if (group == null)
        {
            group = new Group(groupId); // a commit from outside to a group that does not exist, or deleted meanwhile (as the log has it)
            group.stateTimestamp = now;
            groups.put(groupId, group);
        }
        if (group.is(Group.State.EMPTY))
        {
            group.stateTimestamp = now; // retention counts from the last activity
        }
        long recordOffset = baseOffset;
        for (final Map.Entry<Group.TopicPartition, Group.Offset> e : offsets.entrySet())
        {
            final Group.Offset o = e.getValue();
            group.offsets.put(e.getKey(), new Group.Offset(o.offset(), o.leaderEpoch(), o.metadata(), o.commitTimestamp(), recordOffset++));
        }
    }

    /** Kafka's checks of an OffsetCommit's member and generation: NONE when the commit may proceed. */
    private static short validate(final Map<String, Group> groups, final String groupId, final int generationId,
        final String memberId, final String groupInstanceId, final short version)
    {
        if (groupId == null)
        {
            return Errors.INVALID_GROUP_ID; // Kafka 4.4 accepts an empty group id here, unlike in the membership APIs
        }
        final Group group = groups.get(groupId);
        if (group == null)
        {
            // a member's commit to a group that does not exist: v9+ say so, older versions knew no such error
            return generationId < 0 ? Errors.NONE : version >= 9 ? Errors.GROUP_ID_NOT_FOUND : Errors.ILLEGAL_GENERATION;
        }
        if (group.is(Group.State.DEAD))
        {
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
        if (generationId < 0 && group.is(Group.State.EMPTY))
        {
            return Errors.NONE; // a commit from outside the group (assign(), Admin), allowed while it has no members
        }
        final short fenced = group.checkStatic(memberId, groupInstanceId);
        if (fenced != Errors.NONE)
        {
            return fenced;
        }
        if (!group.members.containsKey(memberId))
        {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        if (generationId != group.generationId)
        {
            return Errors.ILLEGAL_GENERATION;
        }
        if (group.is(Group.State.COMPLETING_REBALANCE))
        {
            return Errors.REBALANCE_IN_PROGRESS;
        }
        return Errors.NONE;
    }
}
