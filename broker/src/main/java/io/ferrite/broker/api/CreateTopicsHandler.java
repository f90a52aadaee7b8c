package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.admin.AdminAnswer;
import io.ferrite.broker.admin.AdminCommand;
import io.ferrite.broker.admin.CreationJournal;
import io.ferrite.broker.admin.PendingCreations;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.config.ConfigEntries;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogConfig;
import io.ferrite.log.config.ConfigException;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.CreateTopicsRequestDecoder;
import io.ferrite.wire.message.CreateTopicsResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * CreateTopics on one node, with Kafka's checks and error codes: a duplicate name in the request
 * (INVALID_REQUEST), an illegal name (INVALID_TOPIC_EXCEPTION), an existing topic
 * (TOPIC_ALREADY_EXISTS), a non-positive partition count (INVALID_PARTITIONS), a replication factor
 * this one node cannot give (INVALID_REPLICATION_FACTOR), a manual assignment naming another broker
 * (INVALID_REPLICA_ASSIGNMENT), an invalid config (INVALID_CONFIG); {@code validateOnly} checks
 * without creating (and without the agent). A control request, which may allocate: the checks run on the
 * network thread against the published topics; the creations (directories, files, fsyncs) run on the
 * {@link AdminAgent}, which wakes this network thread when they are done. Kafka's {@code timeoutMs}: when
 * the agent has not taken the request by then, every topic of it is answered REQUEST_TIMED_OUT (as
 * Kafka's error response for a controller future that failed) and none is created (as Kafka's controller fails an event still queued at its deadline); once taken, a
 * request is answered with what it did.
 */
public final class CreateTopicsHandler implements RequestHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(CreateTopicsHandler.class);

    /** Kafka's answer for a topic whose creation the controller did not get to before the request's timeoutMs. */
    private static final Outcome TIMED_OUT = new Outcome(Errors.REQUEST_TIMED_OUT, AdminItem.TIMED_OUT_MESSAGE);

    private final TopicRegistry topics;
    private final AdminAgent admin;
    private final Runnable waker;
    private final int nodeId;
    private final int defaultPartitions;
    private final ConfigEntries entries;
    private final CreateTopicsRequestDecoder request = new CreateTopicsRequestDecoder();
    private final CreateTopicsResponseEncoder response = new CreateTopicsResponseEncoder();

    /** A handler for this node: its id, {@code num.partitions}, and the broker defaults the created topics report. */
    public CreateTopicsHandler(final TopicRegistry topics, final AdminAgent admin, final Runnable waker, final BrokerConfig config)
    {
        this.topics = topics;
        this.admin = admin;
        this.waker = waker;
        this.nodeId = config.nodeId();
        this.defaultPartitions = config.getInt(BrokerConfig.NUM_PARTITIONS);
        this.entries = new ConfigEntries(config);
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final boolean validateOnly = request.validateOnly();
        final Set<String> seen = new HashSet<>();
        final Set<String> duplicates = new HashSet<>();
        for (final CreateTopicsRequestDecoder.CreatableTopic t = request.topics(); t.hasNext(); )
        {
            final String name = t.next().name();
            if (!seen.add(name))
            {
                duplicates.add(name);
            }
        }
        // checked here against the published topics; the agent creates what passed (and finds out
        // itself if another request created a name meanwhile)
        final Outcome[] outcomes = new Outcome[request.topics().elementCount()];
        final String[] names = new String[outcomes.length];
        boolean work = false;
        int i = 0;
        for (final CreateTopicsRequestDecoder.CreatableTopic t = request.topics(); t.hasNext(); i++)
        {
            t.next();
            names[i] = t.name();
            // Kafka's controller: a duplicate first, then CREATE on the cluster or the topic, then its checks
            outcomes[i] = duplicates.contains(names[i]) ? new Outcome(Errors.INVALID_REQUEST, "Duplicate topic name.")
                : !Access.cluster(connection, AclCodes.CREATE) && !Access.topic(connection, AclCodes.CREATE, names[i])
                ? new Outcome(Errors.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.") : check(t, names[i]);
            work |= outcomes[i].planned;
        }
        if (validateOnly || !work)
        {
            return write(out, outOffset, version, names, outcomes, false);
        }
        final long deadlineMs = System.currentTimeMillis() + Math.max(0, request.timeoutMs());
        return AdminAnswer.submit(admin, new Create(deadlineMs, waker, names, outcomes),
            (o, at, timedOut) -> write(o, at, version, names, outcomes, timedOut), connection);
    }

    /** The response from the outcomes; {@code timedOut}: the agent never took the creations (REQUEST_TIMED_OUT). */
    private int write(final MutableDirectBuffer out, final int outOffset, final short version, final String[] names,
        final Outcome[] outcomes, final boolean timedOut)
    {
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        final CreateTopicsResponseEncoder.CreatableTopicResult result = response.topics(names.length);
        for (int i = 0; i < names.length; i++)
        {
            result.next().name(names[i]);
            final Outcome outcome = timedOut ? TIMED_OUT : outcomes[i]; // every topic, as Kafka's getErrorResponse
            result.topicId(outcome.idMsb, outcome.idLsb)
                .errorCode(outcome.error).errorMessage(outcome.message);
            if (outcome.error == Errors.NONE)
            {
                result.numPartitions(outcome.partitions).replicationFactor((short)1);
                final List<ConfigEntries.Entry> reported = entries.createdTopic(outcome.configs);
                final CreateTopicsResponseEncoder.CreatableTopicConfigs configs = result.configs(reported.size());
                for (final ConfigEntries.Entry entry : reported)
                {
                    configs.next().name(entry.name()).value(entry.value()).readOnly(entry.readOnly())
                        .configSource(entry.source()).isSensitive(entry.sensitive());
                }
            }
            else
            {
                result.numPartitions(-1).replicationFactor((short)-1).configsNull();
            }
        }
        return outOffset + response.finish();
    }

    /** The creations, on the admin agent: each planned outcome becomes the created topic or the error. */
    private final class Create extends AdminCommand
    {
        private final String[] names;
        private final Outcome[] outcomes;

        Create(final long deadlineMs, final Runnable waker, final String[] names, final Outcome[] outcomes)
        {
            super(deadlineMs, waker);
            this.names = names;
            this.outcomes = outcomes;
        }

        @Override
        protected void run()
        {
            final CreationJournal journal = admin.journal();
            if (journal == null)
            {
                for (int i = 0; i < outcomes.length; i++)
                {
                    if (outcomes[i].planned)
                    {
                        outcomes[i] = create(names[i], outcomes[i], null);
                    }
                }
                return;
            }
            long incoming = 0;
            for (final Outcome o : outcomes)
            {
                incoming += o.planned && PendingCreations.publishedWhenMade(o.partitions) ? o.partitions : 0;
            }
            admin.creations().makeDownTo(incoming); // the backlog bounded by time: the oldest unpublished topics' files first
            journal(journal, names, outcomes); // a large topic answered once journaled: its slices made between commands
            if (incoming > 0)
            {
                admin.creations().makeSmallBeforeAnswer(); // small ones made now, with those before them (in the bound)
            }
        }

        @Override
        protected void failed(final Throwable cause)
        {
            for (int i = 0; i < outcomes.length; i++)
            {
                if (outcomes[i].planned)
                {
                    outcomes[i] = new Outcome(Errors.UNKNOWN_SERVER_ERROR, cause.toString());
                }
            }
        }
    }

    /** Creates a topic (files included) now, with {@code id} (null: a new one). */
    private Outcome create(final String name, final Outcome planned, final long[] id)
    {
        try
        {
            return Outcome.created(topics.create(name, planned.partitions, planned.configs, id), planned.partitions, planned.configs);
        }
        catch (final ConfigException ex)
        {
            return new Outcome(Errors.INVALID_CONFIG, ex.getMessage());
        }
        catch (final IllegalArgumentException ex)
        {
            return new Outcome(Errors.TOPIC_ALREADY_EXISTS, ex.getMessage()); // created by another request meanwhile
        }
        catch (final IOException ex)
        {
            LOG.error("creating topic {} failed", name, ex);
            return new Outcome(Errors.KAFKA_STORAGE_ERROR, "The log directory refused the topic: " + ex.getMessage());
        }
    }

    /**
     * On the agent: the planned creations checked against the topics as they are now (published, or answered and
     * pending: TOPIC_ALREADY_EXISTS), given ids and journaled in one fsynced record; each then answers NONE with its
     * id and is handed to the pending creations (its name taken before the answer), or all answer KAFKA_STORAGE_ERROR
     * when the journal refused the record.
     */
    private void journal(final CreationJournal journal, final String[] names, final Outcome[] outcomes)
    {
        final List<CreationJournal.Entry> record = new ArrayList<>();
        final long[][] ids = new long[outcomes.length][];
        for (int i = 0; i < outcomes.length; i++)
        {
            if (!outcomes[i].planned)
            {
                continue;
            }
            if (topics.topic(names[i]) != null || topics.creatingId(names[i]) != null) // the latter: pending, or its files failed
            {
                outcomes[i] = new Outcome(Errors.TOPIC_ALREADY_EXISTS, "Topic '" + names[i] + "' already exists.");
                continue;
            }
            ids[i] = topics.newId();
            record.add(new CreationJournal.Entry(CreationJournal.Kind.CREATE, names[i], ids[i][0], ids[i][1],
                outcomes[i].partitions, Map.copyOf(outcomes[i].configs)));
        }
        if (record.isEmpty())
        {
            return;
        }
        try
        {
            journal.append(record);
        }
        catch (final IOException ex)
        {
            LOG.error("journaling the creation of {} topics failed", record.size(), ex);
            for (int i = 0; i < outcomes.length; i++)
            {
                if (ids[i] != null)
                {
                    outcomes[i] = new Outcome(Errors.KAFKA_STORAGE_ERROR, "The log directory refused the topic: " + ex.getMessage());
                }
            }
            return;
        }
        for (int i = 0; i < outcomes.length; i++)
        {
            if (ids[i] != null)
            {
                admin.creations().add(names[i], ids[i], outcomes[i].partitions, outcomes[i].configs); // made or kept from now on
                outcomes[i] = Outcome.journaled(ids[i], outcomes[i].partitions, outcomes[i].configs);
            }
        }
    }

    /** Kafka's checks of one topic: an error, or the creation planned (partitions and configs). */
    private Outcome check(final CreateTopicsRequestDecoder.CreatableTopic t, final String name)
    {
        final String illegal = TopicNames.illegal(name);
        if (illegal != null)
        {
            return new Outcome(Errors.INVALID_TOPIC_EXCEPTION, illegal);
        }
        if (name.equals(TopicNames.KAFKA_METADATA))
        {
            return new Outcome(Errors.INVALID_REQUEST, "Creation of internal topic " + TopicNames.KAFKA_METADATA + " is prohibited.");
        }
        if (topics.creatingId(name) != null || topics.topic(name) != null) // creating first: it is left once published
        {
            return new Outcome(Errors.TOPIC_ALREADY_EXISTS, "Topic '" + name + "' already exists.");
        }
        int partitions = t.numPartitions();
        final short replicationFactor = t.replicationFactor();
        final CreateTopicsRequestDecoder.CreatableReplicaAssignment assignments = t.assignments();
        if (assignments.elementCount() > 0)
        {
            if (partitions != -1 || replicationFactor != -1)
            {
                return new Outcome(Errors.INVALID_REQUEST, "A manual partition assignment was specified, but numPartitions "
                    + "was not set to -1 or replicationFactor was not set to -1.");
            }
            final boolean[] assigned = new boolean[assignments.elementCount()];
            while (assignments.hasNext())
            {
                assignments.next();
                final int index = assignments.partitionIndex();
                if (index < 0 || index >= assigned.length || assigned[index])
                {
                    return new Outcome(Errors.INVALID_REPLICA_ASSIGNMENT, "Partitions must be assigned once each, from 0 on.");
                }
                assigned[index] = true;
                if (assignments.brokerIdsCount() != 1 || assignments.brokerIds(0) != nodeId)
                {
                    return new Outcome(Errors.INVALID_REPLICA_ASSIGNMENT,
                        "The manual partition assignment includes a broker that is not registered: only broker " + nodeId + " is.");
                }
            }
            partitions = assigned.length;
        }
        else
        {
            if (partitions == -1)
            {
                partitions = defaultPartitions;
            }
            else if (partitions <= 0)
            {
                return new Outcome(Errors.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value.");
            }
            if (replicationFactor != -1 && replicationFactor <= 0)
            {
                return new Outcome(Errors.INVALID_REPLICATION_FACTOR,
                    "Replication factor must be larger than 0, or -1 to use the default value.");
            }
            if (replicationFactor > 1)
            {
                return new Outcome(Errors.INVALID_REPLICATION_FACTOR, "Unable to replicate the partition " + replicationFactor
                    + " time(s): The target replication factor of " + replicationFactor
                    + " cannot be reached because only 1 broker(s) are registered.");
            }
        }
        final Map<String, String> configs = new HashMap<>();
        for (final CreateTopicsRequestDecoder.CreatableTopicConfig c = t.configs(); c.hasNext(); )
        {
            c.next();
            if (c.valueIsNull())
            {
                return new Outcome(Errors.INVALID_CONFIG, "Null value not supported for topic configs: " + c.name());
            }
            configs.put(c.name(), c.value());
        }
        try
        {
            LogConfig.of(configs);
            return Outcome.planned(partitions, configs);
        }
        catch (final ConfigException ex)
        {
            return new Outcome(Errors.INVALID_CONFIG, ex.getMessage());
        }
    }

    private static final class Outcome
    {
        final short error;
        final String message;
        /** The topic's id once it is created or journaled (0, 0 otherwise, as Kafka answers an error or validateOnly). */
        final long idMsb;
        final long idLsb;
        final int partitions;
        final Map<String, String> configs;
        /** Passed the checks, not created yet (what validateOnly answers: NONE, no topic id). */
        final boolean planned;

        Outcome(final short error, final String message)
        {
            this.error = error;
            this.message = message;
            this.idMsb = 0;
            this.idLsb = 0;
            this.partitions = -1;
            this.configs = Map.of();
            this.planned = false;
        }

        private Outcome(final long idMsb, final long idLsb, final int partitions, final Map<String, String> configs,
            final boolean planned)
        {
            this.error = Errors.NONE;
            this.message = null;
            this.idMsb = idMsb;
            this.idLsb = idLsb;
            this.partitions = partitions;
            this.configs = configs;
            this.planned = planned;
        }

        static Outcome created(final Topic topic, final int partitions, final Map<String, String> configs)
        {
            return new Outcome(topic.idMostSignificantBits, topic.idLeastSignificantBits, partitions, configs, false);
        }

        /** Journaled, its files not made yet: answered NONE with its id. */
        static Outcome journaled(final long[] id, final int partitions, final Map<String, String> configs)
        {
            return new Outcome(id[0], id[1], partitions, configs, false);
        }

        static Outcome planned(final int partitions, final Map<String, String> configs)
        {
            return new Outcome(0, 0, partitions, configs, true);
        }
    }
}
