package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.wire.record.RecordBatchDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Moves the groups found with live strays at the load ({@link GroupReplay}) home, once, on the
 * coordinators' agent: for each such group its state — its offsets, and its group record if it has
 * one — as one batch to its own partition, and only once the log thread answered that batch OK (in
 * fsync durability: once an fsync covers it) tombstones for its stray keys, one batch per partition
 * they are in. A stray is never deleted before its group's state is durable at home; a failed write,
 * or a crash between the two, leaves the strays live, and the next start moves them again (the same
 * state, written again). Memory holds the groups' state already: only where their offsets' records
 * are changes, to the write home's.
 *
 * <p>The first {@value #MOST_UNDER_WAY} groups move as the agent starts, before it runs any request;
 * the others at its ticks, each once no write of a request's for it is on its way, so that the state
 * written is what the log holds, and what a request writes later comes after it; and once no
 * transaction has offsets of it pending (their COMMIT must find no later record of their partition
 * than theirs; and a stray of a transaction open at the load is deleted only once its marker made it
 * committed or dropped, and what it committed went home first, see {@link GroupReplay}). Limitation:
 * the move writes every offset of the group and waits while any is pending, though an offset whose
 * record is in the group's own partition already needs neither; so a group whose transactions overlap
 * without a gap (an exactly-once application with many producers) can wait long, its strays live and
 * replayed at every start meanwhile. Writing only the strays' offsets, and waiting only for theirs,
 * would end that.
 *
 * <p>Why: the topic is compacted, so a tombstone written home (DeleteGroups, OffsetDelete, expiry)
 * goes after {@code delete.retention.ms} while a stray in a quiet partition, not cleaned again, stays, and the
 * deleted group or offsets would come back at the next start; and strays make every start replay the
 * topic three times.
 */
final class StrayMigration
{
    private static final Logger LOG = LoggerFactory.getLogger(StrayMigration.class);
    /**
     * Groups whose move is under way at most: each holds one or two of the coordinator's 4096 commands a
     * log thread takes from it at once (Broker's queue capacity), so that thousands of groups with
     * strays do not fill that queue (the writes past it would fail, and be left to the next start) nor
     * refuse the clients' commits during the migration. At 256 per 50 ms tick, 5000 groups a second.
     */
    static final int MOST_UNDER_WAY = 256;

    private final Map<String, Group> groups;
    private final TxnOffsets pending;
    private final CoordinatorTopic store;
    private final Map<String, Map<Integer, List<byte[]>>> strays;
    /** The groups not started yet, in the order found. */
    private final ArrayDeque<String> waiting;
    private int underWay;
    private int failed;
    private int tombstones;

    private StrayMigration(final Map<String, Group> groups, final TxnOffsets pending, final CoordinatorTopic store,
        final Map<String, Map<Integer, List<byte[]>>> strays)
    {
        this.groups = groups;
        this.pending = pending;
        this.store = store;
        this.strays = strays;
        this.waiting = new ArrayDeque<>(strays.keySet());
    }

    /**
     * Starts the migration of {@code loaded}'s strays (on the agent, before it runs a request): the
     * first {@value #MOST_UNDER_WAY} groups, the others by {@link #step}; null when there are none.
     */
    static StrayMigration start(final Map<String, Group> groups, final TxnOffsets pending, final CoordinatorTopic store,
        final GroupReplay.Loaded loaded)
    {
        if (loaded.strays().isEmpty())
        {
            if (loaded.strayRecords() > 0)
            {
                LOG.info("{} records of {} outside their group's partition, none live (migrated already, tombstoned or aborted)",
                    loaded.strayRecords(),
                    store.name());
            }
            return null;
        }
        int live = 0;
        for (final Map<Integer, List<byte[]>> byPartition : loaded.strays().values())
        {
            for (final List<byte[]> keys : byPartition.values())
            {
                live += keys.size();
            }
        }
        LOG.warn("{} records found outside their group's partition of {} (written by an older Ferrite, or before the topic's "
            + "partitions grew), {} keys of {} groups live: moving those groups to their partition", loaded.strayRecords(), store.name(),
            live, loaded.strays().size());
        final StrayMigration migration = new StrayMigration(groups, pending, store, loaded.strays());
        migration.step();
        return migration;
    }

    /**
     * Starts moving more groups, up to {@value #MOST_UNDER_WAY} under way (on the agent: at its start,
     * then at every tick); false once every group's move has ended.
     */
    boolean step()
    {
        for (int n = waiting.size(); n > 0 && underWay < MOST_UNDER_WAY; n--)
        {
            final String groupId = waiting.poll();
            if (store.writing(groupId))
            {
                // a request's write of the group is on its way: memory does not hold what it changes yet, and
                // the group's state written behind it would undo it. Its answer comes first; then the group moves
                waiting.add(groupId);
                continue;
            }
            if (pending.isPending(groupId))
            {
                // a transaction has offsets of the group pending (open across the restart): its committed offsets
                // written home now would be later in the log than those offsets' records, and their COMMIT would
                // then not take them (the later-record rule), now nor at the next start. The group moves once it ends
                waiting.add(groupId);
                continue;
            }
            underWay++;
            moveHome(groupId);
        }
        return underWay > 0 || !waiting.isEmpty();
    }

    /** Writes the group's replayed state to its partition; its strays are deleted once that is answered OK. */
    private void moveHome(final String groupId)
    {
        final List<byte[]> keys = new ArrayList<>();
        final List<byte[]> values = new ArrayList<>();
        final Map<Group.TopicPartition, Group.Offset> written = new LinkedHashMap<>();
        final Group group = groups.get(groupId);
        if (group != null)
        {
            for (final Map.Entry<Group.TopicPartition, Group.Offset> e : group.offsets.entrySet())
            {
                keys.add(GroupRecords.offsetKey(groupId, e.getKey().topic(), e.getKey().partition()));
                values.add(GroupRecords.offsetValue(e.getValue()));
                written.put(e.getKey(), e.getValue());
            }
            if (group.protocolType != null) // set by a group record only (a group of offsets alone has none)
            {
                keys.add(GroupRecords.groupKey(groupId));
                values.add(GroupRecords.groupValue(group));
            }
        }
        if (keys.isEmpty())
        {
            // nothing of the group is left (its own partition deleted what the strays hold): nothing to move first
            deleteStrays(groupId, Errors.NONE);
            return;
        }
        store.write(groupId, keys, values, RecordBatchDescriptor.NO_PRODUCER_ID, RecordBatchDescriptor.NO_PRODUCER_EPOCH,
            (error, baseOffset) ->
            {
                if (error == Errors.NONE)
                {
                    placeHome(group, written, baseOffset);
                }
                deleteStrays(groupId, error);
            });
    }

    /**
     * The group's offsets written home from {@code baseOffset} on, in order: each still in memory (no
     * request's write changed it since: those are applied after this answer) is where its record is now,
     * so that a transaction's COMMIT later decides against that record, as the next start's replay will.
     */
    private static void placeHome(final Group group, final Map<Group.TopicPartition, Group.Offset> written, final long baseOffset)
    {
        long recordOffset = baseOffset;
        for (final Map.Entry<Group.TopicPartition, Group.Offset> e : written.entrySet())
        {
            final long at = recordOffset++;
            group.offsets.computeIfPresent(e.getKey(), (tp, o) -> o == e.getValue() ? o.at(at) : o);
        }
    }

    /** The answer to the group's home write: its strays' tombstones written if it holds, else left for the next start. */
    private void deleteStrays(final String groupId, final short homeWrite)
    {
        if (homeWrite != Errors.NONE)
        {
            LOG.warn("moving group {} to its partition of {} failed ({}): its strays are kept, the next start moves it again", groupId,
                store.name(), homeWrite);
            groupDone(false);
            return;
        }
        final Map<Integer, List<byte[]>> byPartition = strays.get(groupId);
        final int[] left = {byPartition.size()};
        final boolean[] ok = {true};
        for (final Map.Entry<Integer, List<byte[]>> e : byPartition.entrySet())
        {
            final List<byte[]> keys = e.getValue();
            store.writeTo(e.getKey(), groupId, keys, Collections.<byte[]>nCopies(keys.size(), null), error ->
            {
                if (error == Errors.NONE)
                {
                    tombstones += keys.size();
                }
                else
                {
                    ok[0] = false;
                    LOG.warn("deleting group {}'s strays in {}-{} failed ({}): the next start deletes them again", groupId, store.name(),
                        e.getKey(), error);
                }
                if (--left[0] == 0)
                {
                    groupDone(ok[0]);
                }
            });
        }
    }

    private void groupDone(final boolean migrated)
    {
        if (!migrated)
        {
            failed++;
        }
        if (--underWay == 0 && waiting.isEmpty())
        {
            LOG.info("{} groups moved to their partition of {} ({} strays deleted); {} not, until the next start",
                strays.size() - failed, store.name(), tombstones, failed);
        }
    }
}
