package io.ferrite.broker.api;

import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.config.DynamicBrokerConfigs;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.AlterConfigsRequestDecoder;
import io.ferrite.wire.message.AlterConfigsRequestDecoder.AlterConfigsResource;
import io.ferrite.wire.message.AlterConfigsRequestDecoder.AlterableConfig;
import io.ferrite.wire.message.AlterConfigsResponseEncoder;
import io.ferrite.wire.message.AlterConfigsResponseEncoder.AlterConfigsResourceResponse;

/**
 * AlterConfigs (v0 to v2), Kafka's deprecated non-incremental form: a topic's configs in the
 * request become its whole override set (any override not named is removed), persisted in the
 * partition logs; for a broker resource, the whole dynamic set. Checks and errors are {@link ConfigChanges}'s.
 * Answers per resource in request order. An admin request (allocates): checked on the network thread, applied by the
 * {@link AdminAgent}.
 */
public final class AlterConfigsHandler
    extends ConfigResourcesHandler<AlterConfigsResource, AlterableConfig, AlterConfigsResourceResponse>
{
    public AlterConfigsHandler(final TopicRegistry topics, final AdminAgent admin, final Runnable waker, final DynamicBrokerConfigs config)
    {
        super(new ConfigChanges(topics, admin, waker, config), false,
            new Request<>(new AlterConfigsRequestDecoder(), AlterConfigsRequestDecoder::resources,
                AlterConfigsRequestDecoder::validateOnly,
                AlterConfigsResource::resourceType, AlterConfigsResource::resourceName, AlterConfigsResource::configs,
                AlterableConfig::name, c -> ConfigChanges.SET, AlterableConfig::value),
            new ArrayResponse<>(new AlterConfigsResponseEncoder(), (r, out, at, version, n) -> r.wrap(out, at, version).responses(n),
                AlterConfigsResponseEncoder::finish),
            (results, error, message, type, name) ->
                results.next().errorCode(error).errorMessage(message).resourceType(type).resourceName(name));
    }
}
