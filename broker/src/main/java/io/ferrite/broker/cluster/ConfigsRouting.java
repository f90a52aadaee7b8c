package io.ferrite.broker.cluster;

import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.replication.ClusterNode;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.IncrementalAlterConfigsRequestDecoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.List;
import java.util.function.Supplier;

/**
 * IncrementalAlterConfigs in cluster mode: a request whose resources are all the cluster's topics or broker resources
 * goes to the active controller ({@link ForwardingHandler}), as Kafka's KRaft broker forwards it; the controller
 * validates it and writes the configs to the metadata log (ConfigRecords), and every node applies them from the image:
 * a topic's to its local logs ({@link ClusterPartitions#topicConfigs}), its own id's and the cluster default's broker
 * configs to its dynamic configs, the logs' defaults and the cleaner ({@link ImageChanges}). A broker resource is
 * forwarded only when this node's checks pass ({@link SplitAlter#brokersChecked}); one they refuse, or a broker logger, is
 * answered by this node's own handler. A
 * request naming both kinds is split ({@link SplitAlter}). (AlterConfigs, the legacy one, is not routed: it still acts
 * on this node's local topic and dynamic configs only.)
 */
final class ConfigsRouting implements RequestHandler
{
    private final RequestHandler forwarding;
    private final RequestHandler local;
    private final Supplier<ClusterNode> node;
    private final Runnable waker;
    private final IncrementalAlterConfigsRequestDecoder incremental = new IncrementalAlterConfigsRequestDecoder();

    ConfigsRouting(final Supplier<ClusterNode> node, final Runnable waker, final RequestHandler local)
    {
        this.forwarding = new ForwardingHandler(node, waker);
        this.local = local;
        this.node = node;
        this.waker = waker;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        incremental.wrap(in, offset, limit, version);
        final List<SplitAlter.Resource> resources = SplitAlter.brokersChecked(SplitAlter.read(incremental), version, local,
            connection);
        final long forwarded = resources.stream().filter(SplitAlter.Resource::forwarded).count();
        if (forwarded == 0 || forwarded == resources.size())
        {
            final RequestHandler to = forwarded == 0 ? local : forwarding;
            return to.handle(api, version, in, offset, limit, out, outOffset, connection);
        }
        return SplitAlter.answer(resources, incremental.validateOnly(), version, local, node.get(), waker, out, outOffset,
            connection);
    }
}
