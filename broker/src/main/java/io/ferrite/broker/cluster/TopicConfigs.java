package io.ferrite.broker.cluster;

import io.ferrite.broker.group.GroupCoordinator;
import io.ferrite.broker.txn.TxnCoordinator;
import io.ferrite.log.LogConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;

/** The cluster's topics as the local logs see them: the image's configs a local log takes, the topics kept local. */
final class TopicConfigs
{
    private static final Logger LOG = LoggerFactory.getLogger(TopicConfigs.class);

    private TopicConfigs()
    {
    }

    /**
     * The overrides of {@code configs} (a topic's configs in the image, which Kafka's controller validated) that the
     * local log takes: each one Ferrite's {@link LogConfig} accepts; one it does not know or refuses is left out and
     * logged (the topic is still served, with Ferrite's default for it).
     */
    static Map<String, String> local(final String topic, final Map<String, String> configs)
    {
        try
        {
            LogConfig.of(configs);
            return Map.copyOf(configs);
        }
        catch (final RuntimeException whole)
        {
            final Map<String, String> kept = new HashMap<>();
            configs.forEach((name, value) ->
            {
                try
                {
                    LogConfig.of(Map.of(name, value));
                    kept.put(name, value);
                }
                catch (final RuntimeException ex)
                {
                    LOG.warn("{}: config {}={} of the cluster's metadata not applied here: {}", topic, name, value,
                        ex.getMessage());
                }
            });
            return Map.copyOf(kept);
        }
    }

    /**
     * Whether Metadata's auto-creation leaves {@code topic} alone: {@code __consumer_offsets} and
     * {@code __transaction_state}, which FindCoordinator has the controller create with their own settings
     * ({@link CoordinatorPlacement}).
     */
    static boolean notAutoCreated(final String topic)
    {
        return GroupCoordinator.OFFSETS_TOPIC.equals(topic) || TxnCoordinator.TOPIC.equals(topic);
    }
}
