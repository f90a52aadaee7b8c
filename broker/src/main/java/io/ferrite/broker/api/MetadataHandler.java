package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.admin.AdminAnswer;
import io.ferrite.broker.admin.AdminCommand;
import io.ferrite.broker.metrics.NetworkCounters;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.MetadataRequestDecoder;
import io.ferrite.wire.message.MetadataResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import java.util.Collection;

/**
 * Metadata: this one node as the only broker, the controller and the leader of every partition,
 * with itself as the only replica and in-sync replica. Requested topics that do not exist are
 * UNKNOWN_TOPIC_OR_PARTITION (by name) or UNKNOWN_TOPIC_ID (by id), and an illegal name is
 * INVALID_TOPIC_EXCEPTION, as Kafka answers — unless the request allows auto-creation (always
 * before v4) and {@code auto.create.topics.enable} is on: then a topic named by the request with a
 * legal name is created with {@code num.partitions} partitions and the broker's topic defaults. Kafka answers a topic it is still
 * creating with LEADER_NOT_AVAILABLE and the client asks again; here the answer waits (its
 * connection only) until the {@link AdminAgent} created the topics, so they are described at once.
 */
public final class MetadataHandler implements RequestHandler
{
    /** Kafka's value for "not requested" authorized operations. */
    private static final int AUTHORIZED_OPERATIONS_OMITTED = Integer.MIN_VALUE;

    private final TopicRegistry topics;
    private final int nodeId;
    private final String clusterId;
    private boolean autoCreate;
    private int autoCreatePartitions = 1;
    private AdminAgent admin;
    private Runnable waker;
    private volatile String host;
    private volatile int port;
    private final MetadataRequestDecoder request = new MetadataRequestDecoder();
    private final MetadataResponseEncoder response = new MetadataResponseEncoder();

    private NetworkCounters counters;

    public MetadataHandler(final TopicRegistry topics, final int nodeId, final String clusterId)
    {
        this.topics = topics;
        this.nodeId = nodeId;
        this.clusterId = clusterId;
    }

    /**
     * Kafka's {@code auto.create.topics.enable} and {@code num.partitions}; the topics are created by
     * {@code admin}, which runs {@code waker} (this network thread's wake-up) when they are.
     */
    public MetadataHandler autoCreate(final boolean enabled, final int partitions, final AdminAgent admin, final Runnable waker)
    {
        this.autoCreate = enabled;
        this.autoCreatePartitions = partitions;
        this.admin = admin;
        this.waker = waker;
        return this;
    }

    public String advertisedHost()
    {
        return host;
    }

    public int advertisedPort()
    {
        return port;
    }

    /**
     * The host advertised to {@code connection}: its listener's (as Kafka, a client is told the endpoints of the listener
     * its request came in on), else this handler's ({@link #advertise}).
     */
    public String advertisedHost(final Connection connection)
    {
        final String own = connection == null ? null : connection.listener().advertisedHost();
        return own != null ? own : host;
    }

    /** The port advertised to {@code connection}: its listener's, else this handler's. */
    public int advertisedPort(final Connection connection)
    {
        final int own = connection == null ? -1 : connection.listener().advertisedPort();
        return own >= 0 ? own : port;
    }

    /** The network thread's counters, where a topic answered an error is counted (none: not counted). */
    public MetadataHandler counters(final NetworkCounters counters)
    {
        this.counters = counters;
        return this;
    }

    /** The address clients are told to connect to (known once the listener is bound). */
    public MetadataHandler advertise(final String host, final int port)
    {
        this.host = host;
        this.port = port;
        return this;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        if (autoCreate)
        {
            final List<String> missing = toCreate(in, offset, limit, version, connection);
            if (!missing.isEmpty())
            {
                // the request's bytes stay in the connection's input while it waits: answered from them once created
                return AdminAnswer.submit(admin, new AutoCreate(waker, missing),
                    (o, at, abandoned) -> answer(in, offset, limit, version, o, at, connection), connection);
            }
        }
        return answer(in, offset, limit, version, out, outOffset, connection);
    }

    /** The legal names a request asks for that do not exist, when it allows auto-creation (allocates; only then). */
    private List<String> toCreate(final DirectBuffer in, final int offset, final int limit, final short version,
        final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final MetadataRequestDecoder.MetadataRequestTopic requested = request.topics();
        if (requested.isNullArray() || (version == 0 && requested.elementCount() == 0)
            || !(version < 4 || request.allowAutoTopicCreation()))
        {
            return List.of();
        }
        List<String> missing = List.of();
        while (requested.hasNext())
        {
            requested.next();
            if (!requested.nameIsNull() && PartitionLookup.live(topics.topic(in, requested.nameOffset(), requested.nameLength())) == null)
            {
                final String name = requested.name();
                // a name answered as created (files being made, or failed) is not made again: answered at once as
                // unknown, as Kafka 4.4's broker answers a topic it forwards for creation; __cluster_metadata never made
                // (Kafka's controller refuses it: the client sees it unknown)
                if (TopicNames.illegal(name) == null && topics.creatingId(name) == null && !name.equals(TopicNames.KAFKA_METADATA)
                    && Access.topic(connection, AclCodes.DESCRIBE, name) && mayCreate(connection, name))
                {
                    missing = missing.isEmpty() ? new ArrayList<>() : missing;
                    missing.add(name);
                }
            }
        }
        return missing;
    }

    private int answer(final DirectBuffer in, final int offset, final int limit, final short version, final MutableDirectBuffer out,
        final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final boolean topicOperations = version >= 8 && request.includeTopicAuthorizedOperations();
        final boolean clusterOperations = version >= 8 && version <= 10 && request.includeClusterAuthorizedOperations();
        final MetadataRequestDecoder.MetadataRequestTopic requested = request.topics();
        final boolean all = requested.isNullArray() || (version == 0 && requested.elementCount() == 0);

        response.wrap(out, outOffset, version).throttleTimeMs(0);
        response.brokers(1).next().nodeId(nodeId).host(advertisedHost(connection)).port(advertisedPort(connection)).rack((CharSequence)null);
        response.clusterId(clusterId).controllerId(nodeId);
        if (all)
        {
            // the topics the principal may describe, as Kafka leaves the others out (all of them without an authorizer)
            final Collection<Topic> list = Access.enabled(connection) ? describable(connection, topics.topics()) : topics.topics();
            final MetadataResponseEncoder.MetadataResponseTopic t = response.topics(list.size());
            for (final Topic topic : list)
            {
                describe(t.next(), topic, operations(topicOperations, connection, topic.name));
            }
        }
        else
        {
            final MetadataResponseEncoder.MetadataResponseTopic t = response.topics(requested.elementCount());
            while (requested.hasNext())
            {
                requested.next();
                final boolean byName = !requested.nameIsNull();
                final Topic topic = PartitionLookup.find(topics, !byName, requested.topicIdMostSignificantBits(),
                    requested.topicIdLeastSignificantBits(), in, requested.nameOffset(), requested.nameLength());
                // live first: a deleted topic named by id is UNKNOWN_TOPIC_ID, as in Fetch
                short error = PartitionLookup.notFound(PartitionLookup.live(topic), !byName);
                if (PartitionLookup.live(topic) == null && byName && TopicNames.illegal(requested.name()) != null)
                {
                    // as Kafka, with or without auto-creation (which made the legal ones before this answer)
                    error = Errors.INVALID_TOPIC_EXCEPTION;
                }
                final boolean authorized = Access.topic(connection, AclCodes.DESCRIBE, PartitionLookup.live(topic), in,
                    requested.nameOffset(), byName ? requested.nameLength() : -1);
                if (!authorized || PartitionLookup.live(topic) == null && byName && autoCreateAsked(version)
                    && error == Errors.UNKNOWN_TOPIC_OR_PARTITION && !mayCreate(connection, requested.name()))
                {
                    error = Errors.TOPIC_AUTHORIZATION_FAILED; // as Kafka: not described, or not auto-created for want of CREATE
                }
                t.next();
                if (PartitionLookup.live(topic) == null || !authorized)
                {
                    if (counters != null)
                    {
                        counters.error(ApiKeys.METADATA, error);
                    }
                    // Kafka reports the operations of a topic it answered from those the principal may describe
                    notFound(t, error, in, requested, authorized && byName && error != Errors.TOPIC_AUTHORIZATION_FAILED ?
                        operations(topicOperations, connection, requested.name()) : AUTHORIZED_OPERATIONS_OMITTED);
                }
                else
                {
                    describe(t, topic, operations(topicOperations, connection, topic.name));
                }
            }
        }
        response.clusterAuthorizedOperations(clusterOperations ? Access.clusterOperations(connection) : AUTHORIZED_OPERATIONS_OMITTED);
        return outOffset + response.finish();
    }

    /** A topic's authorized operations when the request asked for them, else Kafka's "omitted". */
    private static int operations(final boolean asked, final Connection connection, final String topic)
    {
        return asked ? Access.authorizedOperations(connection, AclCodes.TOPIC, topic) : AUTHORIZED_OPERATIONS_OMITTED;
    }

    private static List<Topic> describable(final Connection connection, final Collection<Topic> all)
    {
        final List<Topic> list = new ArrayList<>();
        for (final Topic topic : all)
        {
            if (Access.topic(connection, AclCodes.DESCRIBE, topic))
            {
                list.add(topic);
            }
        }
        return list;
    }

    /** Whether this request may auto-create the topics it names: the broker's setting and the request's flag (v4+). */
    private boolean autoCreateAsked(final short version)
    {
        return autoCreate && (version < 4 || request.allowAutoTopicCreation());
    }

    /** Kafka's rule for auto-creating a topic: CREATE on the cluster, or on the topic. */
    private static boolean mayCreate(final Connection connection, final String name)
    {
        return Access.cluster(connection, AclCodes.CREATE) || Access.topic(connection, AclCodes.CREATE, name);
    }

    /** A requested topic that is not there, answered {@code error} with its name or id as asked (cluster mode's too). */
    public static void notFound(final MetadataResponseEncoder.MetadataResponseTopic t, final short error, final DirectBuffer in,
        final MetadataRequestDecoder.MetadataRequestTopic requested)
    {
        notFound(t, error, in, requested, AUTHORIZED_OPERATIONS_OMITTED);
    }

    private static void notFound(final MetadataResponseEncoder.MetadataResponseTopic t, final short error, final DirectBuffer in,
        final MetadataRequestDecoder.MetadataRequestTopic requested, final int operations)
    {
        t.errorCode(error);
        if (!requested.nameIsNull())
        {
            t.name(in, requested.nameOffset(), requested.nameLength());
        }
        else
        {
            t.name((CharSequence)null);
        }
        t.topicId(requested.topicIdMostSignificantBits(), requested.topicIdLeastSignificantBits()).isInternal(false)
            .partitions(0);
        t.topicAuthorizedOperations(operations);
    }

    /** The creations a Metadata request asks for, on the admin agent; another request may have created a name meanwhile. */
    private final class AutoCreate extends AdminCommand
    {
        private final List<String> names;

        AutoCreate(final Runnable waker, final List<String> names)
        {
            super(Long.MAX_VALUE, waker); // Metadata has no timeout: it waits for the agent
            this.names = names;
        }

        @Override
        protected void run()
        {
            for (final String name : names)
            {
                if (PartitionLookup.live(topics.topic(name)) != null || topics.creatingId(name) != null)
                {
                    continue;
                }
                try
                {
                    topics.create(name, autoCreatePartitions, Map.of());
                }
                catch (final IOException | RuntimeException ex)
                {
                    LoggerFactory.getLogger(MetadataHandler.class).error("auto-creating topic {} failed", name, ex);
                }
            }
        }

        @Override
        protected void failed(final Throwable cause)
        {
        }
    }

    private void describe(final MetadataResponseEncoder.MetadataResponseTopic t, final Topic topic, final int operations)
    {
        t.errorCode(Errors.NONE).name(topic.name).topicId(topic.idMostSignificantBits, topic.idLeastSignificantBits)
            .isInternal(topic.isInternal());
        // every partition, those being made too: their leader is this node, which answers them NOT_LEADER_OR_FOLLOWER
        // until their files are made, as Kafka 4.4 lists a committed topic whole before its broker made the logs
        final int count = topic.plannedPartitions();
        final MetadataResponseEncoder.MetadataResponsePartition p = t.partitions(count);
        for (int i = 0; i < count; i++)
        {
            if (topic.isOffline(i))
            {
                offline(p.next(), i);
                continue;
            }
            // a partition being made has no log yet: a new partition's epoch is 0
            final Partition made = topic.partition(i);
            p.next().errorCode(Errors.NONE).partitionIndex(i).leaderId(nodeId).leaderEpoch(made == null ? 0 : made.leaderEpoch());
            p.replicaNodes(1).addInt32(nodeId);
            p.isrNodes(1).addInt32(nodeId);
            p.offlineReplicas(0);
        }
        t.topicAuthorizedOperations(operations);
    }

    /**
     * A partition whose files failed ({@link Topic#isOffline}), as Kafka 4.4 (eligible leader replicas on, its default)
     * lists a single-replica partition whose log directory failed: LEADER_NOT_AVAILABLE, no leader, its replica this
     * node and offline, the ISR empty. The clients send it nothing until a metadata refresh shows a leader.
     */
    private void offline(final MetadataResponseEncoder.MetadataResponsePartition p, final int index)
    {
        p.errorCode(Errors.LEADER_NOT_AVAILABLE).partitionIndex(index).leaderId(-1).leaderEpoch(0);
        p.replicaNodes(1).addInt32(nodeId);
        p.isrNodes(0);
        p.offlineReplicas(1).addInt32(nodeId);
    }
}
