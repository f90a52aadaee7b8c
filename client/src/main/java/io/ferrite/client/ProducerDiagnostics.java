package io.ferrite.client;

/**
 * The producer's state in words, for a test that timed out waiting for it (control path only, it allocates):
 * the producer id and epoch, each partition's sequences, its unacknowledged and sealed batches with their
 * stamps, attempts and last errors, and each connection's state.
 */
final class ProducerDiagnostics
{
    private ProducerDiagnostics()
    {
    }

    static String describe(final ClusterMetadata metadata, final Idempotence idempotence, final long nowNs)
    {
        final StringBuilder out = new StringBuilder();
        out.append("producer id ").append(idempotence.producerId()).append(" epoch ").append(idempotence.epoch())
            .append(" fatal ").append(idempotence.fatalError()).append('\n');
        for (int i = 0; i < metadata.connections.size(); i++)
        {
            final NodeConnection c = metadata.connections.get(i);
            out.append("  node ").append(c.nodeId).append(' ').append(c.state()).append(" in flight ")
                .append(c.inFlight()).append(" unsent ").append(c.unsent()).append('\n');
        }
        for (int i = 0; i < metadata.topics.size(); i++)
        {
            final TopicState t = metadata.topics.get(i);
            for (final PartitionState ps : t.partitions)
            {
                out.append("  ").append(t.name).append('-').append(ps.partition).append(" leader ").append(ps.leader)
                    .append(" in flight ").append(ps.inFlight).append(" id ").append(ps.producerId).append(" epoch ")
                    .append(ps.producerEpoch).append(" next ").append(ps.nextSequence).append(" last acked ")
                    .append(ps.lastAckedSequence).append(" rewrite ").append(ps.rewriteSequences)
                    .append(" unresolved ").append(ps.unresolved ? Integer.toString(ps.unresolvedSequence) : "no")
                    .append(" open ").append(ps.open == null ? 0 : ps.open.recordCount).append('\n');
                for (ProducerBatch b = ps.firstUnacked; b != null; b = b.nextUnacked)
                {
                    batch(out.append("    unacked "), b, nowNs);
                }
                for (ProducerBatch b = ps.sealed.peekFirst(); b != null; b = b.next)
                {
                    batch(out.append("    sealed "), b, nowNs);
                }
            }
        }
        return out.toString();
    }

    private static void batch(final StringBuilder out, final ProducerBatch b, final long nowNs)
    {
        out.append("epoch ").append(b.producerEpoch).append(" seq ").append(b.baseSequence).append(" records ")
            .append(b.recordCount).append(" attempts ").append(b.attempts).append(" reset ").append(b.sequenceReset)
            .append(" last error ").append(b.lastError).append(" retry in ms ").append((b.retryAtNs - nowNs) / 1_000_000)
            .append(" deadline in ms ").append((b.deliveryDeadlineNs - nowNs) / 1_000_000).append('\n');
    }
}
