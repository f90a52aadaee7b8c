package io.ferrite.broker.api;

import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.IncrementalAlterConfigsRequestDecoder;
import io.ferrite.wire.message.IncrementalAlterConfigsResponseEncoder;
import io.ferrite.wire.message.ApiKeys;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * IncrementalAlterConfigs (v0 and v1): per config SET, DELETE (back to the broker default),
 * APPEND and SUBTRACT (list configs such as cleanup.policy, starting from the default when the
 * topic has no override), persisted in the partition logs and seen by appends and retention at
 * once. Checks, errors and the refusal of broker configs are {@link ConfigChanges}'s. Answers
 * per resource in request order. An admin request (allocates): checked on the network thread, applied by the
 * {@link AdminAgent}.
 */
public final class IncrementalAlterConfigsHandler implements RequestHandler
{
    private final ConfigChanges changes;
    private final IncrementalAlterConfigsRequestDecoder request = new IncrementalAlterConfigsRequestDecoder();
    private final IncrementalAlterConfigsResponseEncoder response = new IncrementalAlterConfigsResponseEncoder();

    public IncrementalAlterConfigsHandler(final TopicRegistry topics, final AdminAgent admin, final Runnable waker, final BrokerConfig config)
    {
        this.changes = new ConfigChanges(topics, admin, waker, config);
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final List<ConfigChanges.Resource> resources = new ArrayList<>();
        for (final IncrementalAlterConfigsRequestDecoder.AlterConfigsResource r = request.resources(); r.hasNext(); )
        {
            r.next();
            final List<ConfigChanges.Op> ops = new ArrayList<>();
            for (final IncrementalAlterConfigsRequestDecoder.AlterableConfig c = r.configs(); c.hasNext(); )
            {
                c.next();
                ops.add(new ConfigChanges.Op(c.name(), c.configOperation(), c.value()));
            }
            resources.add(new ConfigChanges.Resource(r.resourceType(), r.resourceName(), ops));
        }
        return changes.answer(resources, true, request.validateOnly(), connection, out, outOffset,
            (o, at, outcomes) -> write(o, at, version, resources, outcomes));
    }

    private int write(final MutableDirectBuffer out, final int outOffset, final short version,
        final List<ConfigChanges.Resource> resources, final List<ConfigChanges.Outcome> outcomes)
    {
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        final IncrementalAlterConfigsResponseEncoder.AlterConfigsResourceResponse result = response.responses(resources.size());
        for (int i = 0; i < resources.size(); i++)
        {
            result.next().errorCode(outcomes.get(i).error()).errorMessage(outcomes.get(i).message())
                .resourceType(resources.get(i).type()).resourceName(resources.get(i).name());
        }
        return outOffset + response.finish();
    }
}
