package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.AppendResult;
import io.ferrite.log.LogTailer;
import io.ferrite.log.PartitionLog;
import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import io.ferrite.wire.record.RecordReader;
import org.agrona.ExpandableDirectByteBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;

/**
 * The groups' records in {@code __consumer_offsets}: written one batch per change (a group goes to
 * the partition its id hashes to; the topic is created on first use) and replayed at start. Called
 * under the coordinator's lock, which makes the coordinator the topic's single writer (clients
 * cannot produce to it). The topic is not compacted yet: it keeps every commit until retention
 * removes whole segments.
 */
final class GroupStore
{
    private static final Logger LOG = LoggerFactory.getLogger(GroupStore.class);

    private final TopicRegistry topics;
    private final GroupCoordinator.Settings settings;
    private final RecordBatchBuilder builder = new RecordBatchBuilder();
    private final ExpandableDirectByteBuffer batch = new ExpandableDirectByteBuffer(4096);
    private final AppendResult appendResult = new AppendResult();
    private PartitionLog lastLog;
    private long lastOffset = -1;

    GroupStore(final TopicRegistry topics, final GroupCoordinator.Settings settings)
    {
        this.topics = topics;
        this.settings = settings;
    }

    /** Appends one record (a null value deletes the key) to the group's partition; see {@link #write(String, List, List)}. */
    short write(final String groupId, final byte[] key, final byte[] value)
    {
        return write(groupId, List.of(key), java.util.Collections.singletonList(value));
    }

    /**
     * Appends the records (a null value deletes its key) as one batch to the group's partition, so
     * that one request's changes are on disk all or not at all, as Kafka writes one batch per
     * coordinator operation. Returns NONE when appended ({@link #lastAppended()}
     * then says where, for a caller that waits for durability), else the error Kafka 4.4's coordinator
     * answers for the failed write. Nothing is changed on a failure.
     */
    short write(final String groupId, final List<byte[]> keys, final List<byte[]> values)
    {
        lastLog = null;
        lastOffset = -1;
        final Partition partition = partition(groupId);
        if (partition == null)
        {
            return Errors.COORDINATOR_NOT_AVAILABLE; // no offsets topic: Kafka's answer while it has none
        }
        final PartitionLog log = partition.log;
        final long now = System.currentTimeMillis();
        builder.wrap(batch, 0);
        for (int i = 0; i < keys.size(); i++)
        {
            builder.appendRecord(now, keys.get(i), values.get(i));
        }
        final int length = builder.build();
        log.claimWriter(); // the writer is whichever thread holds the coordinator's lock
        log.append(batch, 0, length, appendResult);
        if (!appendResult.succeeded())
        {
            LOG.error("writing group {} to {} failed: {}", groupId, GroupCoordinator.OFFSETS_TOPIC, appendResult);
            return ofFailedWrite(appendResult.status);
        }
        if (!log.config().fsyncDurability)
        {
            // in fsync durability the high watermark is what is on disk: the broker's durability listener moves it
            log.highWatermark(appendResult.lastOffset + 1);
        }
        lastLog = log;
        lastOffset = appendResult.lastOffset;
        return Errors.NONE;
    }

    /** Where an append went: an answer that promises it in fsync durability waits until the log's fsync covers it. */
    record Appended(PartitionLog log, long lastOffset)
    {
        boolean awaitsFsync()
        {
            return log.config().fsyncDurability && log.durableOffset() <= lastOffset;
        }
    }

    /** The last successful {@link #write}, or null after a failed one. */
    Appended lastAppended()
    {
        return lastLog == null ? null : new Appended(lastLog, lastOffset);
    }

    /** The partition of {@code __consumer_offsets} a group's records go to (all of one partition can share a batch). */
    int partitionOf(final String groupId)
    {
        final Topic topic = topics.topic(GroupCoordinator.OFFSETS_TOPIC);
        return (groupId.hashCode() & 0x7fffffff) % (topic == null ? settings.offsetsTopicPartitions() : topic.partitions.length);
    }

    /**
     * Kafka 4.4's coordinator answer for a write to its log that failed with a produce error
     * (CoordinatorOperationExceptionHelper): the partition is offline or gone here, so the client
     * looks for the coordinator again; a batch refused as too large is an UNKNOWN_SERVER_ERROR.
     */
    static short ofFailedWrite(final int appendStatus)
    {
        final short produceError = Errors.ofAppend(appendStatus);
        switch (produceError)
        {
            case Errors.UNKNOWN_TOPIC_OR_PARTITION:
            case Errors.NOT_ENOUGH_REPLICAS:
            case Errors.REQUEST_TIMED_OUT:
                return Errors.COORDINATOR_NOT_AVAILABLE;
            case Errors.NOT_LEADER_OR_FOLLOWER:
            case Errors.KAFKA_STORAGE_ERROR:
                return Errors.NOT_COORDINATOR;
            case Errors.MESSAGE_TOO_LARGE:
            case Errors.RECORD_LIST_TOO_LARGE:
            case Errors.INVALID_FETCH_SIZE:
                return Errors.UNKNOWN_SERVER_ERROR;
            default:
                return produceError;
        }
    }

    private Partition partition(final String groupId)
    {
        Topic topic = topics.topic(GroupCoordinator.OFFSETS_TOPIC);
        if (topic == null)
        {
            try
            {
                topic = topics.create(GroupCoordinator.OFFSETS_TOPIC, settings.offsetsTopicPartitions(), Map.of(
                    "cleanup.policy", "compact", "segment.bytes", Integer.toString(settings.offsetsTopicSegmentBytes())));
            }
            catch (final IOException | RuntimeException ex)
            {
                LOG.error("cannot create {}", GroupCoordinator.OFFSETS_TOPIC, ex);
                return null;
            }
        }
        return topic.partitions[partitionOf(groupId)];
    }

    /** Replays every partition into {@code groups}; returns the records read. */
    int load(final Map<String, Group> groups)
    {
        final Topic topic = topics.topic(GroupCoordinator.OFFSETS_TOPIC);
        if (topic == null)
        {
            return 0;
        }
        final RecordBatch read = new RecordBatch();
        final RecordReader reader = new RecordReader();
        int records = 0;
        for (final Partition p : topic.partitions)
        {
            final LogTailer tailer = new LogTailer(p.log, p.log.logStartOffset());
            final long end = p.log.logEndOffset();
            while (tailer.next(end, read))
            {
                reader.reset(read);
                while (reader.hasNext())
                {
                    apply(groups, reader.next());
                    records++;
                }
            }
        }
        return records;
    }

    private static void apply(final Map<String, Group> groups, final Record record)
    {
        if (!record.hasKey())
        {
            return;
        }
        final ByteBuffer key = ByteBuffer.wrap(bytes(record, record.keyOffset(), record.keyLength()));
        final short keyVersion = key.getShort();
        final String groupId = GroupRecords.string(key);
        final ByteBuffer value = record.hasValue() ? ByteBuffer.wrap(bytes(record, record.valueOffset(), record.valueLength())) : null;
        if (keyVersion == GroupRecords.OFFSET_KEY || keyVersion == 0)
        {
            final Group.TopicPartition tp = new Group.TopicPartition(GroupRecords.string(key), key.getInt());
            if (value == null)
            {
                final Group g = groups.get(groupId);
                if (g != null)
                {
                    g.offsets.remove(tp);
                }
                return;
            }
            value.getShort();
            final long committed = value.getLong();
            final int epoch = value.getInt();
            final String metadata = GroupRecords.string(value);
            final long timestamp = value.getLong();
            groups.computeIfAbsent(groupId, Group::new).offsets.put(tp, new Group.Offset(committed, epoch, metadata, timestamp));
        }
        else if (keyVersion == GroupRecords.GROUP_KEY)
        {
            if (value == null)
            {
                groups.remove(groupId);
                return;
            }
            value.getShort();
            final Group g = groups.computeIfAbsent(groupId, Group::new);
            g.protocolType = GroupRecords.string(value);
            g.generationId = value.getInt();
            g.protocolName = null; // the members rejoin: no protocol until they do
            g.leaderId = null;
            g.state = Group.State.EMPTY;
            g.stateTimestamp = System.currentTimeMillis();
        }
    }

    private static byte[] bytes(final Record record, final int offset, final int length)
    {
        final byte[] b = new byte[length];
        record.buffer().getBytes(offset, b);
        return b;
    }
}
