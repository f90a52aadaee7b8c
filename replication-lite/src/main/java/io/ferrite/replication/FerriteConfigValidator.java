package io.ferrite.replication;

import io.ferrite.log.LogConfig;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.controller.ConfigurationValidator;

import java.util.HashMap;
import java.util.Map;

/**
 * The controller's config validation (CreateTopics' configs and IncrementalAlterConfigs): Kafka's
 * ({@code ControllerConfigurationValidator}) for what Kafka knows, and for a topic also Ferrite's, since every node
 * applies a topic's configs from the image with Ferrite's {@link LogConfig}. Ferrite's own topic configs
 * ({@code ferrite.durability}), which Kafka's refuses as unknown names, are checked by Ferrite's alone; and a topic's
 * configs as a whole after the change must be ones Ferrite takes, so that nothing is answered NONE and then left out
 * on every node. Kafka's controller calls this with the whole resulting configs ({@code newConfigs}).
 */
final class FerriteConfigValidator implements ConfigurationValidator
{
    private static final String FERRITE_PREFIX = "ferrite.";

    private final ConfigurationValidator kafka;

    FerriteConfigValidator(final ConfigurationValidator kafka)
    {
        this.kafka = kafka;
    }

    @Override
    public void validate(final ConfigResource resource)
    {
        kafka.validate(resource);
    }

    @Override
    public void validate(final ConfigResource resource, final Map<String, String> newConfigs,
        final Map<String, String> existingConfigs)
    {
        if (resource.type() != ConfigResource.Type.TOPIC)
        {
            kafka.validate(resource, newConfigs, existingConfigs);
            return;
        }
        kafka.validate(resource, kafkas(newConfigs), kafkas(existingConfigs));
        try
        {
            LogConfig.of(newConfigs);
        }
        catch (final RuntimeException ex)
        {
            throw new InvalidConfigurationException(ex.getMessage());
        }
    }

    /** The configs without Ferrite's own names (a null value, a deletion, kept as it is). */
    private static Map<String, String> kafkas(final Map<String, String> configs)
    {
        final Map<String, String> kept = new HashMap<>();
        configs.forEach((name, value) ->
        {
            if (!name.startsWith(FERRITE_PREFIX))
            {
                kept.put(name, value);
            }
        });
        return kept;
    }
}
