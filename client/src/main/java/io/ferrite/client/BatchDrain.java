package io.ferrite.client;

import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.ProduceRequestEncoder;

/**
 * Drains batches into Produce requests (kafka-clients' {@code RecordAccumulator.drain}): one request per
 * ready connection with the first batch of each partition it leads that may go now — without idempotence
 * when none of the partition's is in flight, with it as {@link Idempotence#mayDrain} says — within
 * {@code max.request.size}. The first batch is the first sealed one, or, with none sealed, the open batch once
 * {@code linger.ms} has passed: it is sealed here, when it goes, and not before (kafka-clients closes a batch when it
 * drains it), so the records that came while the partition could not send are in it. A batch sent for the first
 * time gets its sequence here. Allocates nothing: the request's context comes from the pool.
 */
final class BatchDrain
{
    /** Client's highest Produce version: 13 names topics by id only. */
    private static final short MAX_PRODUCE_VERSION = 12;

    private final ProducerConfig config;
    private final ClusterMetadata metadata;
    private final ProducerPools pools;
    private final Idempotence idempotence;
    private final ProduceRequestEncoder request = new ProduceRequestEncoder();

    BatchDrain(final ProducerConfig config, final ClusterMetadata metadata, final ProducerPools pools,
        final Idempotence idempotence)
    {
        this.config = config;
        this.metadata = metadata;
        this.pools = pools;
        this.idempotence = idempotence;
    }

    /** One Produce request to {@code c} if any batch may go to it: 1, else 0. */
    int sendTo(final NodeConnection c, final long now)
    {
        final short version = c.version(ApiKeys.PRODUCE, MAX_PRODUCE_VERSION);
        if (version < ProduceRequestEncoder.LOWEST_VERSION)
        {
            return 0;
        }
        ProduceContext ctx = null;
        int bytes = 0;
        int topicCount = 0;
        for (int i = 0; i < metadata.topics.size(); i++)
        {
            final TopicState t = metadata.topics.get(i);
            boolean topicCounted = false;
            for (int p = 0; p < t.partitions.length; p++)
            {
                final PartitionState ps = t.partitions[p];
                final ProducerBatch queued = ps.sealed.peekFirst();
                final ProducerBatch b = queued != null ? queued : ps.lingeredOpen(now, config.lingerNs);
                if (b == null || ps.leader != c.nodeId || now - b.retryAtNs < 0 ||
                    (bytes > 0 && bytes + (b == queued ? b.size : b.estimatedSize) > config.maxRequestSize) ||
                    (idempotence.enabled() ? !idempotence.mayDrain(ps, b) : ps.inFlight > 0))
                {
                    continue;
                }
                if (ctx == null)
                {
                    ctx = pools.takeContext(metadata.partitionCount());
                }
                if (b == queued)
                {
                    ps.sealed.pollFirst();
                }
                else
                {
                    ps.sealOpen(); // lingered and may go now: closed only here, so it took every record until now
                }
                if (idempotence.enabled() && !b.hasSequence())
                {
                    idempotence.assign(ps, b);
                }
                ps.peakInFlight = Math.max(ps.peakInFlight, ++ps.inFlight);
                b.attempts++;
                ctx.add(b);
                if (config.trace != null)
                {
                    config.trace.onDrained(b.tag(0), b.recordCount);
                }
                bytes += b.size;
                if (!topicCounted)
                {
                    topicCounted = true;
                    topicCount++;
                }
            }
        }
        if (ctx == null)
        {
            return 0;
        }
        ctx.encode(request, c, version, topicCount, config.acks, (int)(config.requestTimeoutNs / 1_000_000L), now);
        return 1;
    }
}
