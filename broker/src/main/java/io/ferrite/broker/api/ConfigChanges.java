package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.admin.AdminAnswer;
import io.ferrite.broker.admin.AdminCommand;
import io.ferrite.broker.net.Connection;
import org.agrona.MutableDirectBuffer;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.config.DynamicBrokerConfigs;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogConfig;
import io.ferrite.log.config.ConfigCatalogue;
import io.ferrite.log.config.ConfigException;
import io.ferrite.log.config.ConfigKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What AlterConfigs and IncrementalAlterConfigs share: Kafka 4.4's checks of each resource and the
 * change of a topic's overrides. Kafka splits this between the broker (duplicates, nulls, broker
 * resources) and the controller (topic resources); the outcome a client sees is reproduced here in
 * the same order:
 * <ol>
 * <li>a resource named twice: INVALID_REQUEST for each; a config named twice in one resource,
 * or a null value (other than for DELETE): INVALID_REQUEST;</li>
 * <li>BROKER: the name must be empty (the cluster default) or this node's id (INVALID_REQUEST);
 * a config that cannot change at run time is refused as Kafka refuses it: INVALID_REQUEST,
 * "Cannot update these configs dynamically: [...]"; a bad value INVALID_REQUEST with Kafka's
 * message; the rest become the dynamic configs ({@link DynamicBrokerConfigs}), stored and applied
 * to the logs and the cleaner;</li>
 * <li>TOPIC: the new overrides are worked out (APPEND and SUBTRACT only for list configs, else
 * INVALID_CONFIG), a value over 32767 characters is INVALID_CONFIG, an empty name INVALID_REQUEST,
 * an illegal one INVALID_TOPIC_EXCEPTION, an unknown or invalid config INVALID_CONFIG with
 * Kafka's message, and only then an unknown topic UNKNOWN_TOPIC_OR_PARTITION (so a bad config
 * on a missing topic reports the config, as Kafka's controller does);</li>
 * <li>other resource types (groups, client metrics, broker loggers): INVALID_REQUEST.</li>
 * </ol>
 * {@code validateOnly} runs every check and changes nothing, on the network thread. Otherwise the
 * changes run on the {@link AdminAgent}, the topics' and the dynamic configs' single writer, one request after another, so
 * two clients altering different keys of one topic at once both get their change (the
 * read-modify-write still retries if the topic changed under it, which with one writer it cannot).
 */
final class ConfigChanges
{
    private static final Logger LOG = LoggerFactory.getLogger(ConfigChanges.class);

    static final byte SET = 0;
    static final byte DELETE = 1;
    static final byte APPEND = 2;
    static final byte SUBTRACT = 3;
    /** Kafka's limit on a stored config value. */
    static final int MAX_VALUE_LENGTH = Short.MAX_VALUE;

    /** One requested change: for AlterConfigs every one is a SET (the whole set replaces the overrides). */
    record Op(String name, byte op, String value)
    {
    }

    /** One resource of a request, decoded. */
    record Resource(byte type, String name, List<Op> ops)
    {
    }

    /** The answer for one resource; {@code message} null on success. */
    record Outcome(short error, String message)
    {
        static final Outcome OK = new Outcome(Errors.NONE, null);
    }

    /** Writes a response from the outcomes, in request order. */
    @FunctionalInterface
    interface Answer
    {
        int write(MutableDirectBuffer out, int outOffset, List<Outcome> outcomes);
    }

    private final TopicRegistry topics;
    private final AdminAgent admin;
    private final Runnable waker;
    private final BrokerConfig broker;
    private final DynamicBrokerConfigs dynamic;

    ConfigChanges(final TopicRegistry topics, final AdminAgent admin, final Runnable waker, final DynamicBrokerConfigs dynamic)
    {
        this.topics = topics;
        this.admin = admin;
        this.waker = waker;
        this.broker = dynamic.state().statics();
        this.dynamic = dynamic;
    }

    /**
     * Answers at once when nothing is to be written (validateOnly, or no topic among the resources:
     * only checks run, on the network thread); else the changes run on the {@link AdminAgent}, the
     * topics' single writer, and the answer comes when it is done.
     */
    int answer(final List<Resource> resources, final boolean incremental, final boolean validateOnly, final Connection connection,
        final MutableDirectBuffer out, final int outOffset, final Answer answer)
    {
        boolean writes = false;
        for (final Resource r : resources)
        {
            writes |= r.type() == DescribeConfigsHandler.TOPIC || r.type() == DescribeConfigsHandler.BROKER;
        }
        if (validateOnly || !writes)
        {
            return answer.write(out, outOffset, apply(resources, incremental, validateOnly));
        }
        final List<Outcome> outcomes = new ArrayList<>(resources.size());
        final AdminCommand command = new AdminCommand(Long.MAX_VALUE, waker)
        {
            @Override
            protected void run()
            {
                outcomes.addAll(apply(resources, incremental, false));
            }

            @Override
            protected void failed(final Throwable cause)
            {
                outcomes.clear();
                for (int i = 0; i < resources.size(); i++)
                {
                    outcomes.add(new Outcome(Errors.UNKNOWN_SERVER_ERROR, cause.toString()));
                }
            }
        };
        return AdminAnswer.submit(admin, command, (o, at, abandoned) ->
        {
            if (abandoned) // the broker closing: the agent will not get to it
            {
                outcomes.clear();
                for (int i = 0; i < resources.size(); i++)
                {
                    outcomes.add(new Outcome(Errors.REQUEST_TIMED_OUT, AdminItem.TIMED_OUT_MESSAGE));
                }
            }
            return answer.write(o, at, outcomes);
        }, connection);
    }

    /**
     * Applies (or with {@code validateOnly} only checks) the changes of every resource and returns
     * the outcomes in request order. {@code incremental}: IncrementalAlterConfigs semantics (each
     * op changes one key), else AlterConfigs (the ops are the topic's whole new override set).
     */
    List<Outcome> apply(final List<Resource> resources, final boolean incremental, final boolean validateOnly)
    {
        final Map<String, Integer> seen = new HashMap<>();
        final Set<Integer> repeated = new HashSet<>();
        for (int i = 0; i < resources.size(); i++)
        {
            final Integer first = seen.putIfAbsent(resources.get(i).type() + "/" + resources.get(i).name(), i);
            if (first != null)
            {
                repeated.add(first);
                repeated.add(i);
            }
        }
        final List<Outcome> outcomes = new ArrayList<>(resources.size());
        for (int i = 0; i < resources.size(); i++)
        {
            outcomes.add(repeated.contains(i) ?
                new Outcome(Errors.INVALID_REQUEST, "Each resource must appear at most once.") :
                apply(resources.get(i), incremental, validateOnly));
        }
        return outcomes;
    }

    private Outcome apply(final Resource resource, final boolean incremental, final boolean validateOnly)
    {
        final Set<String> names = new HashSet<>();
        final List<String> nulls = new ArrayList<>();
        for (final Op op : resource.ops())
        {
            if (!names.add(op.name()))
            {
                return new Outcome(Errors.INVALID_REQUEST, "Error due to duplicate config keys");
            }
            if (op.value() == null && (!incremental || op.op() != DELETE))
            {
                nulls.add(op.name());
            }
        }
        if (!nulls.isEmpty())
        {
            return new Outcome(Errors.INVALID_REQUEST, "Null value not supported for : " + String.join(", ", nulls));
        }
        switch (resource.type())
        {
            case DescribeConfigsHandler.BROKER:
                return alterBroker(resource, incremental, validateOnly);
            case DescribeConfigsHandler.TOPIC:
                return alterTopic(resource, incremental, validateOnly);
            default:
                return new Outcome(Errors.INVALID_REQUEST, "Unsupported resource type: " + typeName(resource.type()));
        }
    }

    /**
     * A broker resource, this node's id or "" (the cluster default): Kafka's checks of the name, then the new
     * dynamic set worked out from the ops (APPEND and SUBTRACT only for list configs), the names that cannot change
     * at run time refused, the values checked ({@link DynamicBrokerConfigs#check}), all INVALID_REQUEST as Kafka's
     * broker answers; then stored and applied unless {@code validateOnly}. Deleting a config never set succeeds.
     */
    private Outcome alterBroker(final Resource resource, final boolean incremental, final boolean validateOnly)
    {
        final boolean perBroker = !resource.name().isEmpty();
        if (perBroker)
        {
            final int id;
            try
            {
                id = Integer.parseInt(resource.name());
            }
            catch (final NumberFormatException ex)
            {
                return new Outcome(Errors.INVALID_REQUEST, "Node id must be an integer, but it is: " + resource.name());
            }
            if (id != broker.nodeId())
            {
                return new Outcome(Errors.INVALID_REQUEST,
                    "Unexpected broker id, expected " + broker.nodeId() + ", but received " + resource.name());
            }
        }
        final DynamicBrokerConfigs.State state = dynamic.state();
        final Map<String, String> current = perBroker ? state.perBroker() : state.clusterDefault();
        final Map<String, String> next = incremental ? new LinkedHashMap<>(current) : new LinkedHashMap<>();
        final List<String> set = new ArrayList<>();
        for (final Op op : resource.ops())
        {
            if (op.op() != DELETE)
            {
                set.add(op.name());
            }
            if (op.op() == APPEND || op.op() == SUBTRACT)
            {
                final ConfigKey key = BrokerConfig.CATALOGUE.key(op.name());
                if (key == null)
                {
                    return new Outcome(Errors.INVALID_CONFIG, "Unknown config name: " + op.name());
                }
                if (key.type() != ConfigKey.Type.LIST)
                {
                    return new Outcome(Errors.INVALID_CONFIG, "Config value " + (op.op() == APPEND ? "append" : "subtract")
                        + " is not allowed for config key: " + op.name());
                }
            }
            final String problem = applyTo(next, current, op, BrokerConfig.CATALOGUE);
            if (problem != null)
            {
                return new Outcome(Errors.INVALID_REQUEST, problem);
            }
        }
        final String refused = DynamicBrokerConfigs.notDynamic(set);
        if (refused != null)
        {
            return new Outcome(Errors.INVALID_REQUEST, refused);
        }
        final String invalid = dynamic.check(perBroker, next);
        if (invalid != null)
        {
            return new Outcome(Errors.INVALID_REQUEST, invalid);
        }
        if (validateOnly || next.equals(current))
        {
            return Outcome.OK;
        }
        try
        {
            dynamic.alter(perBroker, next);
            return Outcome.OK;
        }
        catch (final ConfigException | IllegalStateException ex)
        {
            // a log's stored overrides, or a cleaner that cannot start: nothing changed
            LOG.error("changing the dynamic broker configs failed, nothing changed", ex);
            return new Outcome(Errors.INVALID_REQUEST, ex.getMessage());
        }
        catch (final IOException | RuntimeException ex)
        {
            LOG.error("changing the dynamic broker configs failed, nothing changed", ex);
            return new Outcome(Errors.KAFKA_STORAGE_ERROR, "The log directory refused the config change: " + ex.getMessage());
        }
    }

    /** The message of KAFKA_STORAGE_ERROR for a topic answered as created whose files failed (AlterConfigs, CreatePartitions). */
    static String filesFailed(final String topic)
    {
        return "The files of topic " + topic + " could not be made: made at the next start.";
    }

    private Outcome alterTopic(final Resource resource, final boolean incremental, final boolean validateOnly)
    {
        final Topic published = PartitionLookup.live(topics.topic(resource.name()));
        if (!validateOnly && admin != null && admin.creations() != null
            && (published == null || !admin.creations().largeTopics().inSlices(published)))
        {
            admin.creations().makeThrough(resource.name()); // on the agent: a topic answered as created, not published, made first
        }
        while (true)
        {
            final Topic topic = PartitionLookup.live(topics.topic(resource.name()));
            // a topic that does not exist has no overrides: the change is checked against none, as in Kafka
            final Map<String, String> current = topic == null ? Map.of() : topic.overrides;
            final Map<String, String> next;
            if (incremental)
            {
                next = new HashMap<>(current);
                for (final Op op : resource.ops())
                {
                    final String problem = applyTo(next, current, op, LogConfig.CATALOGUE);
                    if (problem != null)
                    {
                        return new Outcome(op.op() < 0 || op.op() > SUBTRACT ? Errors.INVALID_REQUEST : Errors.INVALID_CONFIG, problem);
                    }
                }
            }
            else
            {
                next = new HashMap<>();
                for (final Op op : resource.ops())
                {
                    next.put(op.name(), op.value());
                }
            }
            for (final Map.Entry<String, String> e : next.entrySet())
            {
                if (!Objects.equals(e.getValue(), current.get(e.getKey())) && e.getValue().length() > MAX_VALUE_LENGTH)
                {
                    return new Outcome(Errors.INVALID_CONFIG,
                        "The configuration value cannot be added because it exceeds the maximum value size of 32767 bytes.");
                }
            }
            if (resource.name().isEmpty())
            {
                return new Outcome(Errors.INVALID_REQUEST, "Default topic resources are not allowed.");
            }
            final String illegal = TopicNames.illegal(resource.name());
            if (illegal != null)
            {
                return new Outcome(Errors.INVALID_TOPIC_EXCEPTION, illegal);
            }
            try
            {
                // the overrides on top of the broker's topic defaults: the config the log would run with
                LogConfig.of(dynamic.state().topicDefaults()).with(next);
            }
            catch (final ConfigException ex)
            {
                return new Outcome(Errors.INVALID_CONFIG, ex.getMessage());
            }
            // answered as created and not even published offline (that failed too): as CreatePartitions. A topic published
            // offline is changed as Kafka's controller changes one in a failed directory: journaled, applied at the start
            if (topic == null && admin != null && admin.creations() != null && admin.creations().filesFailed(resource.name()))
            {
                return new Outcome(Errors.KAFKA_STORAGE_ERROR, filesFailed(resource.name()));
            }
            if (topic == null)
            {
                return new Outcome(PartitionLookup.notFound(topic, false), "The topic '" + resource.name() + "' does not exist.");
            }
            if (validateOnly || next.equals(current))
            {
                return Outcome.OK;
            }
            boolean journaled = false;
            try
            {
                if (admin != null && admin.creations() != null && admin.creations().largeTopics().journalsConfigs(topic))
                {
                    admin.creations().largeTopics().configsChanging(topic, next); // journaled: the rest is made with them
                    journaled = true;
                }
                if (topics.updateConfig(topic, next) != null)
                {
                    LOG.info("topic {} config overrides now {}", topic.name, next);
                    return Outcome.OK;
                }
                // another change to the topic came first: read it again and redo this one on top
            }
            catch (final ConfigException ex)
            {
                return new Outcome(Errors.INVALID_CONFIG, ex.getMessage());
            }
            catch (final IOException ex)
            {
                LOG.error("persisting the config of topic {} failed", topic.name, ex);
                if (journaled) // the journal says the new overrides: its slices stop, the next start gives them to all
                {
                    admin.creations().largeTopics().configsFailed(topic);
                }
                return new Outcome(Errors.KAFKA_STORAGE_ERROR, "The log directory refused the config change: " + ex.getMessage());
            }
        }
    }

    /**
     * One incremental op on {@code next}; returns Kafka's message when the op cannot apply. APPEND
     * and SUBTRACT work on the current value (or the config's default) split at commas:
     * APPEND adds the values not already there, SUBTRACT removes every one given.
     */
    private static String applyTo(final Map<String, String> next, final Map<String, String> current, final Op op,
        final ConfigCatalogue catalogue)
    {
        switch (op.op())
        {
            case SET:
                next.put(op.name(), op.value());
                return null;
            case DELETE:
                next.remove(op.name());
                return null;
            case APPEND:
            case SUBTRACT:
                final ConfigKey key = catalogue.key(op.name());
                if (key == null || key.type() != ConfigKey.Type.LIST)
                {
                    return "Can't " + (op.op() == APPEND ? "APPEND" : "SUBTRACT") + " to key " + op.name()
                        + " because its type is not LIST.";
                }
                final String base = current.containsKey(op.name()) ? current.get(op.name()) : key.defaultValue();
                final List<String> parts = new ArrayList<>();
                if (base != null)
                {
                    for (final String part : base.split(","))
                    {
                        if (!part.isEmpty())
                        {
                            parts.add(part);
                        }
                    }
                }
                for (final String value : op.value().split(","))
                {
                    if (op.op() == SUBTRACT)
                    {
                        parts.remove(value);
                    }
                    else if (!parts.contains(value))
                    {
                        parts.add(value);
                    }
                }
                next.put(op.name(), String.join(",", parts));
                return null;
            default:
                return "Unknown operations type " + op.op();
        }
    }

    /** Kafka's name of a config resource type, for messages. */
    static String typeName(final byte type)
    {
        switch (type)
        {
            case 2: return "TOPIC";
            case 4: return "BROKER";
            case 8: return "BROKER_LOGGER";
            case 16: return "CLIENT_METRICS";
            case 32: return "GROUP";
            default: return "UNKNOWN (" + type + ")";
        }
    }
}
