package io.ferrite.broker.group;

import io.ferrite.broker.Errors;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * OffsetCommit's check and store, one step under the coordinator's lock (its caller holds it): the
 * member and generation are checked, the offsets appended to {@code __consumer_offsets} as one
 * batch, and only once the append succeeded do they become the group's committed offsets. With the
 * check and the store in separate lock holds a rebalance could come between them and let a stale
 * generation's commit through; with memory changed first, a failed append would be answered as a
 * commit and lost at the next restart.
 */
final class OffsetCommits
{
    /** The outcome: a group error for every partition, or a write error for those written, or where it went. */
    static final class Result
    {
        /** The member or generation check failed: every partition of the request gets this error. */
        final short groupError;
        /** The append failed: every partition that passed its own checks gets this error. */
        final short writeError;
        /** Where the offsets were appended (null if nothing was), for an answer that waits for the fsync. */
        final GroupStore.Appended appended;

        Result(final short groupError, final short writeError, final GroupStore.Appended appended)
        {
            this.groupError = groupError;
            this.writeError = writeError;
            this.appended = appended;
        }
    }

    /**
     * Tests only: {@code afterValidated} runs right after the member and generation are checked,
     * {@code beforeStored} right before the append; both inside the commit's lock hold.
     */
    record Hooks(Runnable afterValidated, Runnable beforeStored)
    {
    }

    private static final Result NOTHING_TO_WRITE = new Result(Errors.NONE, Errors.NONE, null);

    private OffsetCommits()
    {
    }

    /** Checks, appends, then stores {@code offsets} (the partitions that passed their own checks; may be empty). */
    static Result commit(final Map<String, Group> groups, final GroupStore store, final String groupId, final int generationId,
        final String memberId, final String groupInstanceId, final short version, final Map<Group.TopicPartition, Group.Offset> offsets,
        final Hooks hooks)
    {
        final short groupError = validate(groups, groupId, generationId, memberId, groupInstanceId, version);
        if (hooks != null && hooks.afterValidated() != null)
        {
            hooks.afterValidated().run();
        }
        if (groupError != Errors.NONE)
        {
            return new Result(groupError, Errors.NONE, null);
        }
        if (offsets.isEmpty())
        {
            return NOTHING_TO_WRITE;
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
        final short writeError = store.write(groupId, keys, values);
        if (writeError != Errors.NONE)
        {
            return new Result(Errors.NONE, writeError, null);
        }
        final long now = System.currentTimeMillis();
        Group group = groups.get(groupId);
        if (group == null)
        {
            group = new Group(groupId);
            group.stateTimestamp = now;
            groups.put(groupId, group);
        }
        if (group.is(Group.State.EMPTY))
        {
            group.stateTimestamp = now; // retention counts from the last activity
        }
        group.offsets.putAll(offsets);
        return new Result(Errors.NONE, Errors.NONE, store.lastAppended());
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
