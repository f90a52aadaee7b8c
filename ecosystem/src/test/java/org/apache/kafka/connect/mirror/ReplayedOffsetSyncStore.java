package org.apache.kafka.connect.mirror;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * MirrorMaker's own {@link OffsetSyncStore} fed offset syncs directly, in the order given, as its checkpoint
 * task feeds it from the offset-syncs topic: no broker. In MirrorMaker's package only because the store's
 * test constructor and its feeding method are package-private (connect-mirror 4.3.1); used by
 * {@code io.ferrite.ecosystem.mirror.OffsetSyncStoreReplayTest}.
 */
public final class ReplayedOffsetSyncStore extends OffsetSyncStore
{
    private final TopicPartition partition;
    private long syncOffset;

    public ReplayedOffsetSyncStore(final TopicPartition partition)
    {
        this.partition = partition;
        start(false); // as after its checkpoints loaded: no read-to-end collapse
    }

    @Override
    void backingStoreStart()
    {
        // nothing to read: the syncs come through sync()
    }

    /** One offset sync, as the next record of the offset-syncs topic. */
    public void sync(final long upstreamOffset, final long downstreamOffset)
    {
        final OffsetSync sync = new OffsetSync(partition, upstreamOffset, downstreamOffset);
        handleRecord(new ConsumerRecord<>("mm2-offset-syncs.target.internal", 0, syncOffset++, sync.recordKey(), sync.recordValue()));
    }

    /** What the checkpoint task would translate a group at {@code upstreamOffset} to; -1 when it would not. */
    public long translate(final long upstreamOffset)
    {
        return translateDownstream("group", partition, upstreamOffset).orElse(-1L);
    }
}
