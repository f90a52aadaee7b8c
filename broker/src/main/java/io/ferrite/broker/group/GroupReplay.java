package io.ferrite.broker.group;

import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogTailer;
import io.ferrite.wire.message.GroupRecordTypes;
import io.ferrite.wire.record.ControlRecords;
import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchDescriptor;
import io.ferrite.wire.record.RecordReader;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The groups as {@code __consumer_offsets} holds them, replayed at start (before any write goes to
 * the topic): offsets and their tombstones, group records (a group comes back Empty: its members
 * rejoin) and group tombstones, in log order.
 *
 * <p>A group's records belong in its partition ({@link CoordinatorTopic#partitionFor}, by the count
 * {@link CoordinatorTopic#fixCount} fixes). Records found in another partition ("strays": written by
 * a Ferrite that placed groups by a different hash, or before the topic's partition count grew) are
 * older than every record in the group's own partition, since every write goes there. A stray key
 * is live (to be deleted once its group moved home) when its last record in its partition is not a
 * tombstone, or is in a transaction not ended there. Kafka's files have none, nor do
 * Ferrite's once migrated: the common case is one pass over the topic, which applies the records of
 * the groups' own partitions only (a dead stray changes nothing, and applied in partition order its
 * tombstone could delete what the group's own partition wrote since). When live strays are found the
 * groups are replayed again, strays first, then the groups' own partitions, so that what a group wrote
 * last wins whatever the partitions' order; and {@link StrayMigration} then moves those groups home
 * (their state written to their partition, then tombstones for the strays), so that the next start is
 * one pass again and, once that migration has ended, a tombstone written home cannot be outlived by
 * a stray (the topic is compacted: a tombstone goes after {@code delete.retention.ms}, while a quiet
 * partition's stray, never cleaned again, stays). Until then it can: a group whose move waits (a write
 * home that failed, a transaction with offsets of it pending) and that is deleted or expires keeps its
 * strays until a later start moves it. After that migration, downgrading to a Ferrite that places groups by the old hash (the
 * sign bit masked) is not supported: it would see the groups' records as strays in turn.
 *
 * <p>Offsets committed inside a transaction (TxnOffsetCommit: records in a transactional batch) are
 * pending ({@link TxnOffsets}) until their producer's marker further on in the same partition: a
 * COMMIT makes them committed offsets (unless a later record committed the partition), an ABORT
 * drops them, as Kafka's replay does; those whose marker is not in the log stay pending after the
 * load, for the transaction's end (the transaction coordinator's markers, which go to the partition
 * the transaction holds: the one the records are in). Each committed offset keeps where its record is
 * (that later-record rule). Strays may be transactional too (an exactly-once application's offsets
 * written before the partition count changed): a transactional stray is live once a COMMIT marker of
 * its producer follows it in its partition, and also while still open at the end of its partition:
 * its offsets are pending for its marker, which may be a COMMIT after the load, and its record would
 * then be the key's only one; its group moves home once that marker came ({@link StrayMigration}).
 * A stray's record offset r (its partition's numbering) is kept as r minus 1 plus the log end offsets
 * of its partition and the partitions after it: negative, in its partition's order, below every
 * record offset of the partitions replayed after it and of the groups' own partitions; so the
 * later-record rule decides between strays as their replay order does (by the partition's index
 * between two stray partitions: which was written last is not known; a transaction open across two
 * starts that grew the topic twice may so lose to, or beat, a plain commit it should not), and a
 * record of the group's own partition beats them all.
 */
final class GroupReplay
{
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(GroupReplay.class);
    private enum Pass
    {
        HOME_AND_FIND_STRAYS, STRAYS, HOME
    }

    /**
     * What a load found: the records applied, and the live strays by group, then partition, then
     * their keys (empty when there are none: the common case).
     */
    record Loaded(int records, int strayRecords, Map<String, Map<Integer, List<byte[]>>> strays)
    {
    }

    /** A key of a group's found in a partition other than the group's. */
    private record StrayKey(int partition, String groupId, ByteBuffer key)
    {
    }

    private final Topic topic;
    private final int partitions;
    private final Map<String, Group> groups;
    private final TxnOffsets pending;
    private final long wallMs;
    private final RecordBatch read = new RecordBatch();
    private final RecordReader reader = new RecordReader();
    private final OffsetsTopicRecord parsed = new OffsetsTopicRecord();
    /** The records of the types Kafka writes and this coordinator does not keep, by type name, in the load's first pass. */
    private final Map<String, Integer> unused = new TreeMap<>();
    /** Whether this pass is the load's first: bad and unused records are logged and counted once, in it. */
    private boolean reporting = true;
    private int badRecords;
    /** The strays seen by the first pass, each with whether its last record is live (not a tombstone), in the order seen. */
    private final Map<StrayKey, Boolean> strays = new LinkedHashMap<>();
    /** The first pass's transactional strays of the partition read, by producer, until its marker there. */
    private final Map<Long, Set<StrayKey>> strayTxns = new HashMap<>();
    private int strayRecords;
    /** The one partition replayed ({@link #loadPartition}), or -1: all of them. */
    private int only = -1;

    private GroupReplay(final Topic topic, final int partitions, final Map<String, Group> groups, final TxnOffsets pending,
        final long wallMs)
    {
        this.topic = topic;
        this.partitions = partitions;
        this.groups = groups;
        this.pending = pending;
        this.wallMs = wallMs;
    }

    /**
     * Replays every partition of {@code store}'s topic into {@code groups} (their state timestamp:
     * {@code wallMs}, the load's), fixing the partition count groups are placed by ({@link
     * CoordinatorTopic#fixCount}); returns the records applied and the live strays.
     */
    static Loaded load(final TopicRegistry topics, final CoordinatorTopic store, final Map<String, Group> groups,
        final TxnOffsets pending, final long wallMs)
    {
        final Topic topic = topics.topic(store.name());
        return topic == null ? new Loaded(0, 0, Map.of()) : load(topic, store.fixCount(topic), groups, pending, wallMs);
    }

    /** For tests: {@code __consumer_offsets} replayed as {@link #load(TopicRegistry, CoordinatorTopic, Map, TxnOffsets, long)} does, placed by its partitions now. */
    static Loaded load(final TopicRegistry topics, final Map<String, Group> groups, final long wallMs)
    {
        return load(topics, groups, new TxnOffsets(), wallMs);
    }

    /** For tests: as {@link #load(TopicRegistry, Map, long)}, the offsets pending in transactions into {@code pending}. */
    static Loaded load(final TopicRegistry topics, final Map<String, Group> groups, final TxnOffsets pending, final long wallMs)
    {
        final Topic topic = topics.topic(GroupCoordinator.OFFSETS_TOPIC);
        return topic == null ? new Loaded(0, 0, Map.of()) : load(topic, topic.partitions.length, groups, pending, wallMs);
    }

    private static Loaded load(final Topic topic, final int partitions, final Map<String, Group> groups, final TxnOffsets pending,
        final long wallMs)
    {
        final GroupReplay replay = new GroupReplay(topic, partitions, groups, pending, wallMs);
        final int records = replay.run(Pass.HOME_AND_FIND_STRAYS);
        replay.summarize();
        final Map<String, Map<Integer, List<byte[]>>> live = replay.liveStrays();
        if (live.isEmpty())
        {
            return new Loaded(records, replay.strayRecords, Map.of());
        }
        groups.clear();
        pending.clear();
        replay.reporting = false; // the records again, said once already
        return new Loaded(replay.run(Pass.STRAYS) + replay.run(Pass.HOME), replay.strayRecords, live);
    }

    /**
     * In a cluster ({@link GroupOwnership}): replays partition {@code partition} of {@code topic} alone, up to its log end
     * now, into {@code groups}: the groups it is home to ({@code partitions} places them), as this node becomes its leader.
     * Its strays are skipped (the controller's topic has one partition count for its life: none are written); returns
     * the records applied.
     */
    static int loadPartition(final Topic topic, final int partitions, final int partition, final Map<String, Group> groups,
        final TxnOffsets pending, final long wallMs)
    {
        final GroupReplay replay = new GroupReplay(topic, partitions, groups, pending, wallMs);
        replay.only = partition;
        final int records = replay.run(Pass.HOME);
        replay.summarize();
        return records;
    }

    /** One line for the records of the first pass that are not applied: their kinds this coordinator does not keep, counted, and the bad ones. */
    private void summarize()
    {
        if (!unused.isEmpty())
        {
            LOG.info("{}: skipped {} records of kinds this coordinator does not keep (by record type: {})", topic.name,
                unused.values().stream().mapToInt(Integer::intValue).sum(), unused);
        }
        if (badRecords > 0)
        {
            LOG.warn("{}: skipped {} records that cannot be read (each logged above); the load went on without them", topic.name,
                badRecords);
        }
    }

    private Map<String, Map<Integer, List<byte[]>>> liveStrays()
    {
        final Map<String, Map<Integer, List<byte[]>>> live = new LinkedHashMap<>();
        strays.forEach((stray, isLive) ->
        {
            if (isLive)
            {
                live.computeIfAbsent(stray.groupId(), g -> new TreeMap<>()).computeIfAbsent(stray.partition(), p -> new ArrayList<>())
                    .add(stray.key().array());
            }
        });
        return live;
    }

    /** One pass over every partition, applying the records {@code pass} takes; returns how many it applied. */
    private int run(final Pass pass)
    {
        int records = 0;
        final long[] ends = new long[topic.partitions.length];
        long after = 1; // in the strays pass: 1 + the log end offsets of the partition read and those after it
        for (final Partition p : topic.partitions)
        {
            ends[p.index] = p.log.logEndOffset(); // nothing writes to the topic during the load
            after += ends[p.index];
        }
        for (final Partition p : topic.partitions)
        {
            if (only >= 0 && p.index != only)
            {
                continue;
            }
            final LogTailer tailer = new LogTailer(p.log, p.log.logStartOffset());
            final long end = ends[p.index];
            // a stray's record offset r is placed at r - after: below every record offset of the partitions replayed
            // after this one (and of the groups' own, all >= 0), in this partition's order
            final long shift = pass == Pass.STRAYS ? after : 0;
            after -= end;
            while (tailer.next(end, read))
            {
                try
                {
                    records += batch(pass, p.index, shift);
                }
                catch (final RuntimeException ex) // the batch's records do not decompress, or are malformed: the rest of it is skipped
                {
                    bad(p.index, read.baseOffset(), "its batch's records cannot be read", ex);
                }
            }
            if (pass == Pass.HOME_AND_FIND_STRAYS)
            {
                // a transaction still open here: its keys are deleted too once their group moved home (the move waits
                // for the marker, see StrayMigration), or a COMMIT after the load would leave them the only record
                strayTxns.values().forEach(keys -> keys.forEach(key -> strays.put(key, true)));
                strayTxns.clear();
            }
        }
        return records;
    }

    /**
     * The first pass's record of a stray key: live when it has a value and is not transactional; a
     * transactional one is live once its producer's COMMIT follows it here ({@link #endTxn}), and a
     * tombstone ends the key's open transactional records (Kafka's replay drops them with it).
     */
    private void stray(final StrayKey key, final boolean hasValue, final long producerId)
    {
        if (!hasValue)
        {
            strayTxns.values().forEach(keys -> keys.remove(key));
        }
        if (hasValue && producerId != RecordBatchDescriptor.NO_PRODUCER_ID)
        {
            strays.putIfAbsent(key, false);
            strayTxns.computeIfAbsent(producerId, id -> new HashSet<>()).add(key);
        }
        else
        {
            strays.put(key, hasValue);
        }
    }

    /**
     * A marker in partition {@code partition}: its producer's offsets pending there end, of the groups
     * {@code pass} replays (a stray's in the strays pass, a group's own in the others); in the first
     * pass its transactional strays there are live if it is a COMMIT.
     */
    private void endTxn(final Pass pass, final int partition)
    {
        reader.reset(read);
        if (!reader.hasNext())
        {
            return;
        }
        final short type = ControlRecords.type(reader.next());
        if (type != ControlRecords.COMMIT && type != ControlRecords.ABORT)
        {
            return;
        }
        final boolean commit = type == ControlRecords.COMMIT;
        final long producerId = read.producerId();
        final boolean strayPass = pass == Pass.STRAYS;
        pending.complete(producerId, commit, partition,
            groupId -> (CoordinatorTopic.partitionFor(groupId, partitions) == partition) != strayPass, groups, wallMs);
        if (pass == Pass.HOME_AND_FIND_STRAYS)
        {
            final Set<StrayKey> ended = strayTxns.remove(producerId);
            if (ended != null && commit)
            {
                ended.forEach(key -> strays.put(key, true));
            }
        }
    }

    /** The records of the batch read, in partition {@code partition}; returns how many it applied. */
    private int batch(final Pass pass, final int partition, final long shift)
    {
        if (read.isControl())
        {
            endTxn(pass, partition); // a transaction marker: the producer's pending offsets here end
            return 0;
        }
        int records = 0;
        final long producerId = read.isTransactional() ? read.producerId() : RecordBatchDescriptor.NO_PRODUCER_ID;
        reader.reset(read);
        while (reader.hasNext())
        {
            final Record record = reader.next();
            final OffsetsTopicRecord.Kind kind;
            try
            {
                kind = parsed.read(record);
            }
            catch (final RuntimeException ex)
            {
                bad(partition, record.offset(), "it cannot be read", ex);
                continue;
            }
            if (kind == OffsetsTopicRecord.Kind.UNUSED)
            {
                if (reporting)
                {
                    unused.merge(GroupRecordTypes.name(parsed.type()), 1, Integer::sum);
                }
                continue; // a record kind this coordinator does not keep (KIP-848's, share groups', streams')
            }
            final String groupId = parsed.groupId();
            final boolean home = CoordinatorTopic.partitionFor(groupId, partitions) == partition;
            if (pass == Pass.HOME_AND_FIND_STRAYS && !home)
            {
                strayRecords++;
                stray(new StrayKey(partition, groupId, ByteBuffer.wrap(bytes(record, record.keyOffset(), record.keyLength()))),
                    record.hasValue(), producerId);
            }
            else if ((pass == Pass.STRAYS) != home)
            {
                apply(kind, groupId, producerId, partition, record.offset() - shift);
                records++;
            }
        }
        return records;
    }

    /** A record (or the rest of a batch) at {@code offset} of {@code partition} skipped: one line, in the load's first pass. */
    private void bad(final int partition, final long offset, final String why, final RuntimeException ex)
    {
        if (reporting)
        {
            badRecords++;
            LOG.warn("{}-{} offset {}: a record skipped, {}: {}", topic.name, partition, offset, why, ex.toString());
        }
    }

    /**
     * Applies the record {@link #parsed} read, of {@code groupId}, found in partition {@code partition} at {@code recordOffset}
     * (a stray's placed below the groups' own partitions'); an offset of {@code producerId}'s transaction (not NO_PRODUCER_ID)
     * is pending. A group's tombstone leaves its offsets, as Kafka's does (their keys get their own tombstones; Kafka's
     * move of a classic group to the consumer protocol writes one and keeps them).
     */
    private void apply(final OffsetsTopicRecord.Kind kind, final String groupId, final long producerId, final int partition,
        final long recordOffset)
    {
        if (kind == OffsetsTopicRecord.Kind.OFFSET)
        {
            final Group.TopicPartition tp = parsed.topicPartition();
            if (parsed.isTombstone())
            {
                final Group g = groups.get(groupId);
                if (g != null)
                {
                    g.offsets.remove(tp);
                }
                pending.drop(groupId, tp);
                return;
            }
            final Group.Offset offset = parsed.offset(recordOffset);
            final Group g = groups.computeIfAbsent(groupId, Group::new);
            if (producerId == RecordBatchDescriptor.NO_PRODUCER_ID)
            {
                g.offsets.put(tp, offset);
            }
            else
            {
                pending.add(producerId, groupId, tp, offset, partition);
            }
            return;
        }
        if (parsed.isTombstone())
        {
            final Group g = groups.get(groupId);
            if (g != null && g.offsets.isEmpty())
            {
                groups.remove(groupId);
            }
            else if (g != null)
            {
                g.protocolType = null;
                g.generationId = 0;
            }
            return;
        }
        final Group g = groups.computeIfAbsent(groupId, Group::new);
        g.protocolType = parsed.protocolType();
        g.generationId = parsed.generation();
        g.protocolName = null; // the members rejoin: no protocol until they do
        g.leaderId = null;
        g.state = Group.State.EMPTY;
        g.stateTimestamp = wallMs;
    }

    private static byte[] bytes(final Record record, final int offset, final int length)
    {
        final byte[] b = new byte[length];
        record.buffer().getBytes(offset, b);
        return b;
    }
}
