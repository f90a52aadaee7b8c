package io.ferrite.client;

import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.MetadataRequestEncoder;
import io.ferrite.wire.message.MetadataResponseDecoder;
import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;

/**
 * The brokers, topics and partition leaders the producer knows, and the Metadata requests that keep
 * them: the first from a {@code bootstrap.servers} address, later ones from any connected broker,
 * asked again when a topic is new, after an error that moves leaders
 * ({@link ClientErrors#refreshesMetadata}), and every {@code metadata.max.age.ms}. A refresh is a
 * control-path step and may allocate (a new broker's connection, its host name); sends do not.
 */
final class ClusterMetadata
{
    /** Versions 10-12 name topics and take tagged fields; 13 adds nothing the producer reads. */
    private static final short MAX_VERSION = 12;

    private final TransportSettings config;
    private final ResponseListener listener;
    private final MetadataRequestEncoder request = new MetadataRequestEncoder();
    private final MetadataResponseDecoder response = new MetadataResponseDecoder();
    private final List<NodeConnection> bootstrap = new ArrayList<>();
    final Int2ObjectHashMap<NodeConnection> nodes = new Int2ObjectHashMap<>();
    /** Every connection, bootstrap and brokers, for the duty cycle to poll (an indexed list: no iterator). */
    final ArrayList<NodeConnection> connections = new ArrayList<>();
    final ArrayList<TopicState> topics = new ArrayList<>();
    private final HashMap<String, TopicState> byName = new HashMap<>();

    private boolean needed = true;
    private boolean inFlight;
    private long notBeforeNs;
    private long refreshedNs;
    private int nextCandidate;

    ClusterMetadata(final TransportSettings config, final ResponseListener listener)
    {
        this.config = config;
        this.listener = listener;
        int id = -1;
        for (final InetSocketAddress a : config.bootstrap)
        {
            final NodeConnection c = new NodeConnection(id--, a.getHostString(), a.getPort(), listener, config);
            bootstrap.add(c);
            connections.add(c);
        }
        if (bootstrap.isEmpty())
        {
            throw new IllegalArgumentException("bootstrap.servers is empty");
        }
    }

    /** The topic of this name, asked for on first use. */
    TopicState topic(final String name)
    {
        TopicState t = byName.get(name);
        if (t == null)
        {
            t = new TopicState(name);
            byName.put(name, t);
            topics.add(t);
            needed = true;
        }
        return t;
    }

    /** Partitions of every topic known: a Produce request holds at most one batch of each. */
    int partitionCount()
    {
        int n = 0;
        for (int i = 0; i < topics.size(); i++)
        {
            n += topics.get(i).partitions.length;
        }
        return n;
    }

    void requestUpdate()
    {
        needed = true;
    }

    /** One pass of the duty cycle over the transport: every connection's socket, then {@link #poll}. */
    int pollAll(final long nowNs)
    {
        int work = 0;
        for (int i = 0; i < connections.size(); i++)
        {
            work += connections.get(i).poll(nowNs);
        }
        return work + poll(nowNs);
    }

    /** Closes every connection for good (the client's close): what is in flight fails with {@code errorCode}. */
    void shutdownAll(final long nowNs, final short errorCode)
    {
        for (int i = 0; i < connections.size(); i++)
        {
            connections.get(i).shutdown(nowNs, errorCode);
        }
    }

    /** Sends a Metadata request when one is due and a connection can take it; connects one otherwise. */
    int poll(final long nowNs)
    {
        if (inFlight || nowNs - notBeforeNs < 0 || (!needed && nowNs - refreshedNs < config.metadataMaxAgeNs))
        {
            return 0;
        }
        NodeConnection ready = null;
        boolean connecting = false;
        for (int i = 0; i < connections.size(); i++)
        {
            final NodeConnection c = connections.get(i);
            if (c.canSend() && c.version(ApiKeys.METADATA, MAX_VERSION) >= 0)
            {
                ready = c;
                break;
            }
            connecting |= c.state() == NodeConnection.State.CONNECTING || c.state() == NodeConnection.State.NEGOTIATING;
        }
        if (ready == null)
        {
            if (!connecting)
            {
                final List<NodeConnection> candidates = nodes.isEmpty() ? bootstrap : connections;
                for (int i = 0; i < candidates.size(); i++)
                {
                    final NodeConnection c = candidates.get(nextCandidate++ % candidates.size());
                    if (c.state() == NodeConnection.State.DISCONNECTED)
                    {
                        c.connect(nowNs);
                        return 1;
                    }
                }
            }
            return 0;
        }
        send(ready, nowNs);
        return 1;
    }

    private void send(final NodeConnection c, final long nowNs)
    {
        final short version = c.version(ApiKeys.METADATA, MAX_VERSION);
        final int body = c.begin(ApiKeys.METADATA, version);
        request.wrap(c.buffer(), body, version);
        final MetadataRequestEncoder.MetadataRequestTopic t = request.topics(topics.size());
        for (int i = 0; i < topics.size(); i++)
        {
            final TopicState topic = topics.get(i);
            t.next().name(topic.nameBytes, 0, topic.nameBytes.capacity());
        }
        request.allowAutoTopicCreation(false);
        final int length = request.finish();
        c.commit(ApiKeys.METADATA, version, body + length, this, true, nowNs);
        inFlight = true;
        needed = false;
    }

    /** A Metadata request failed: ask again after {@code retry.backoff.ms}. */
    void onFailure(final long nowNs)
    {
        inFlight = false;
        needed = true;
        notBeforeNs = nowNs + config.retryBackoffNs;
    }

    void onResponse(final short version, final DirectBuffer buffer, final int offset, final int limit, final long nowNs)
    {
        inFlight = false;
        refreshedNs = nowNs;
        notBeforeNs = nowNs + config.retryBackoffNs;
        response.wrap(buffer, offset, limit, version);
        for (var b = response.brokers(); b.hasNext(); )
        {
            b.next();
            final NodeConnection known = nodes.get(b.nodeId());
            final String host = b.host();
            if (known == null || !known.sameAddress(host, b.port()))
            {
                if (known != null)
                {
                    known.shutdown(nowNs, ClientErrors.NETWORK_EXCEPTION);
                    connections.remove(known);
                }
                final NodeConnection c = new NodeConnection(b.nodeId(), host, b.port(), listener, config);
                nodes.put(b.nodeId(), c);
                connections.add(c);
            }
        }
        for (var t = response.topics(); t.hasNext(); )
        {
            t.next();
            final TopicState topic = find(buffer, t.nameOffset(), t.nameLength());
            if (topic == null)
            {
                continue;
            }
            final short error = t.errorCode();
            if (error == ClientErrors.NONE)
            {
                int count = 0;
                for (var p = t.partitions(); p.hasNext(); )
                {
                    p.next();
                    count = Math.max(count, p.partitionIndex() + 1);
                }
                topic.partitionCount(count);
                for (var p = t.partitions(); p.hasNext(); )
                {
                    p.next();
                    final PartitionState ps = topic.partitions[p.partitionIndex()];
                    ps.leader = p.errorCode() == ClientErrors.NONE ? p.leaderId() : -1;
                    ps.leaderEpoch = p.leaderEpoch();
                    if (ps.leader < 0)
                    {
                        needed = true;
                    }
                }
                topic.status = TopicState.Status.KNOWN;
                topic.error = ClientErrors.NONE;
            }
            else if (ClientErrors.retriable(error) && error != ClientErrors.UNKNOWN_TOPIC_OR_PARTITION)
            {
                needed = true; // LEADER_NOT_AVAILABLE while a topic is being made: ask again
            }
            else
            {
                topic.status = TopicState.Status.FAILED;
                topic.error = error;
            }
        }
    }

    private TopicState find(final DirectBuffer buffer, final int offset, final int length)
    {
        for (int i = 0; i < topics.size(); i++)
        {
            final TopicState t = topics.get(i);
            if (t.nameEquals(buffer, offset, length))
            {
                return t;
            }
        }
        return null;
    }

    /** The connection to {@code nodeId}, connecting it if need be; null if the node is not known. */
    NodeConnection leaderConnection(final int nodeId, final long nowNs)
    {
        final NodeConnection c = nodes.get(nodeId);
        if (c != null && c.state() == NodeConnection.State.DISCONNECTED)
        {
            c.connect(nowNs);
        }
        return c;
    }
}
