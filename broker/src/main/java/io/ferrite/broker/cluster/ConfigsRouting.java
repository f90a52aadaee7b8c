package io.ferrite.broker.cluster;

import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.IncrementalAlterConfigsRequestDecoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * IncrementalAlterConfigs in cluster mode: a request whose resources are all topics goes to the
 * active controller ({@link ForwardingHandler}), as Kafka's KRaft broker forwards it; the controller validates it and
 * writes the topic's configs to the metadata log, and every node applies them to its local logs from the image
 * ({@link ClusterPartitions#topicConfigs}). A request naming a broker or a broker logger (or none) is answered by this
 * node's own handler, as before: the broker's dynamic configs are not the metadata log's here. (AlterConfigs, the
 * legacy one, is not routed: it still acts on this node's local topic only.)
 */
final class ConfigsRouting implements RequestHandler
{
    /** Kafka's {@code ConfigResource.Type.TOPIC}. */
    private static final byte TOPIC = 2;

    private final RequestHandler forwarding;
    private final RequestHandler local;
    private final IncrementalAlterConfigsRequestDecoder incremental = new IncrementalAlterConfigsRequestDecoder();

    ConfigsRouting(final RequestHandler forwarding, final RequestHandler local)
    {
        this.forwarding = forwarding;
        this.local = local;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final RequestHandler to = topicsOnly(version, in, offset, limit) ? forwarding : local;
        return to.handle(api, version, in, offset, limit, out, outOffset, connection);
    }

    private boolean topicsOnly(final short version, final DirectBuffer in, final int offset,
        final int limit)
    {
        int topics = 0;
        incremental.wrap(in, offset, limit, version);
        for (var r = incremental.resources(); r.hasNext(); )
        {
            if (r.next().resourceType() != TOPIC)
            {
                return false;
            }
            topics++;
        }
        return topics > 0;
    }
}
