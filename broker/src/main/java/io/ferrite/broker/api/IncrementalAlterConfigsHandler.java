package io.ferrite.broker.api;

import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.config.DynamicBrokerConfigs;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.IncrementalAlterConfigsRequestDecoder;
import io.ferrite.wire.message.IncrementalAlterConfigsRequestDecoder.AlterConfigsResource;
import io.ferrite.wire.message.IncrementalAlterConfigsRequestDecoder.AlterableConfig;
import io.ferrite.wire.message.IncrementalAlterConfigsResponseEncoder;
import io.ferrite.wire.message.IncrementalAlterConfigsResponseEncoder.AlterConfigsResourceResponse;

/**
 * IncrementalAlterConfigs (v0 and v1): per config SET, DELETE (back to the broker default),
 * APPEND and SUBTRACT (list configs such as cleanup.policy, starting from the default when the
 * topic has no override), persisted in the partition logs and seen by appends and retention at
 * once; for a broker resource, the dynamic broker configs. Checks and errors are {@link ConfigChanges}'s. Answers
 * per resource in request order. An admin request (allocates): checked on the network thread, applied by the
 * {@link AdminAgent}.
 */
public final class IncrementalAlterConfigsHandler
    extends ConfigResourcesHandler<AlterConfigsResource, AlterableConfig, AlterConfigsResourceResponse>
{
    public IncrementalAlterConfigsHandler(final TopicRegistry topics, final AdminAgent admin, final Runnable waker,
        final DynamicBrokerConfigs config)
    {
        super(new ConfigChanges(topics, admin, waker, config), true,
            new Request<>(new IncrementalAlterConfigsRequestDecoder(), IncrementalAlterConfigsRequestDecoder::resources,
                IncrementalAlterConfigsRequestDecoder::validateOnly,
                AlterConfigsResource::resourceType, AlterConfigsResource::resourceName, AlterConfigsResource::configs,
                AlterableConfig::name, AlterableConfig::configOperation, AlterableConfig::value),
            new ArrayResponse<>(new IncrementalAlterConfigsResponseEncoder(),
                (r, out, at, version, n) -> r.wrap(out, at, version).responses(n), IncrementalAlterConfigsResponseEncoder::finish),
            (results, error, message, type, name) ->
                results.next().errorCode(error).errorMessage(message).resourceType(type).resourceName(name));
    }
}
