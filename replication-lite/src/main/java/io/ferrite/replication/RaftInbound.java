package io.ferrite.replication;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;

import kafka.raft.KafkaRaftManager;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.BrokerHeartbeatRequestData;
import org.apache.kafka.common.message.DescribeClusterRequestData;
import org.apache.kafka.common.message.DescribeClusterResponseData;
import org.apache.kafka.common.network.ClientInformation;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.network.TransferableChannel;
import org.apache.kafka.common.protocol.SendBuilder;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.RequestContext;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The inbound half of a KRaft voter, which KafkaRaftManager does not have. KafkaRaftManager brings the outbound
 * NetworkClient and the raft I/O thread, but the requests other voters send (Vote, BeginQuorumEpoch,
 * Fetch, ...) must be read off a socket by the embedder and handed to {@code handleRequest}; Kafka does
 * it with its SocketServer and ControllerApis. Here: one blocking thread per connection (a 3-voter quorum
 * has 2 inbound connections) that reads a request, waits for its answer and writes it before it reads the
 * next, so answers go out in request order (NetworkClient matches answers to its in-flight requests in
 * order); ApiVersions and DescribeCluster answered locally.
 */
public final class RaftInbound implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(RaftInbound.class);
    private static final EnumSet<ApiKeys> RAFT_APIS = EnumSet.of(ApiKeys.API_VERSIONS, ApiKeys.VOTE,
        ApiKeys.BEGIN_QUORUM_EPOCH, ApiKeys.END_QUORUM_EPOCH, ApiKeys.FETCH, ApiKeys.FETCH_SNAPSHOT,
        ApiKeys.DESCRIBE_QUORUM, ApiKeys.ADD_RAFT_VOTER, ApiKeys.REMOVE_RAFT_VOTER, ApiKeys.UPDATE_RAFT_VOTER,
        ApiKeys.DESCRIBE_CLUSTER);
    /**
     * ApiVersions' answer: the raft APIs and the controller's, whether or not a controller serves them yet (those
     * answer NOT_CONTROLLER until one does). A client caches the answer per connection and does not send an API
     * missing from it, so a broker that connected before {@link ClusterController#start} would never register on
     * that connection (its lifecycle manager retries on it until its registration timeout).
     */
    private static final ApiVersionsResponseData API_VERSIONS = new ApiVersionsResponseData().setApiKeys(
        ApiVersionsResponse.collectApis(ApiMessageType.ListenerType.CONTROLLER, listed(), false));
    /** DescribeCluster's endpoint type of controllers (KIP-919): what an Admin with bootstrap.controllers asks for. */
    private static final byte CONTROLLER_ENDPOINTS = 2;
    /** How long close waits for a connection's thread, which a closed channel wakes at once. */
    private static final long JOIN_MS = 10_000;

    private final ServerSocketChannel server;
    private volatile KafkaRaftManager<?> raft;
    private volatile String clusterId;
    private volatile Map<Integer, InetSocketAddress> voters;
    /** The controller's APIs, once a {@link ClusterController} serves them on this listener. */
    private volatile ControllerRequests controller;
    private final ListenerName listener;
    private final int maxRequestBytes;
    /** The accepted connections and their threads, closed and joined by {@link #close}. */
    private final Map<SocketChannel, Thread> connections = new ConcurrentHashMap<>();
    private Thread acceptor;
    private volatile boolean closed;

    /**
     * Binds the listener; nothing is accepted before {@link #start}. A request frame over
     * {@code maxRequestBytes} ({@code socket.request.max.bytes}) closes its connection, as in Kafka.
     */
    public RaftInbound(final InetSocketAddress bind, final ListenerName listener, final int maxRequestBytes) throws IOException
    {
        this.maxRequestBytes = maxRequestBytes;
        this.server = ServerSocketChannel.open();
        // the voters' addresses come unresolved from controller.quorum.voters
        server.bind(new InetSocketAddress(bind.getHostString(), bind.getPort()));
        this.listener = listener;
    }

    /**
     * Hands what arrives to {@code raft} from now on; DescribeCluster is answered with {@code voters} as the
     * controllers and the raft leader as the active one, so that Kafka's Admin (and kafka-metadata-quorum)
     * can find the leader through {@code bootstrap.controllers}.
     */
    public void start(final KafkaRaftManager<?> raft, final String clusterId, final Map<Integer, InetSocketAddress> voters)
    {
        this.raft = raft;
        this.clusterId = clusterId;
        this.voters = Map.copyOf(voters);
        acceptor = new Thread(this::acceptLoop, "raft-acceptor");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** Routes the controller APIs to {@code requests} from now on ({@code null}: no more). */
    void serveController(final ControllerRequests requests)
    {
        this.controller = requests;
    }

    private void acceptLoop()
    {
        int n = 0;
        while (!closed)
        {
            try
            {
                final SocketChannel channel = server.accept();
                if (!noDelay(channel))
                {
                    continue;
                }
                final Thread reader = new Thread(() -> serve(channel), "raft-conn-" + n++);
                reader.setDaemon(true);
                connections.put(channel, reader);
                if (closed)
                {
                    connections.remove(channel);
                    closeQuietly(channel);
                    return;
                }
                reader.start();
            }
            catch (final IOException ex)
            {
                return;
            }
        }
    }

    /**
     * One request in flight per connection, as Kafka's SocketServer mutes a channel until its answer is sent
     * (KRaft's NetworkClient sends one at a time anyway): the next request is read only after the previous
     * answer is written, and it is written here, on the connection's own thread. KRaft's I/O thread only
     * completes the answer's future; it never touches a socket, so a peer that stops reading (partitioned,
     * SIGSTOPped, a client that pipelines and never reads) stalls its own connection and nothing else.
     */
    private void serve(final SocketChannel channel)
    {
        final String connectionId = channel.toString();
        final HeartbeatPeer peer = new HeartbeatPeer();
        try (channel)
        {
            final ByteBuffer sizeBuf = ByteBuffer.allocate(4);
            while (!closed)
            {
                sizeBuf.clear();
                readFully(channel, sizeBuf);
                final int size = sizeBuf.getInt(0);
                if (size < 0 || size > maxRequestBytes)
                {
                    // Kafka's InvalidReceiveException: an HTTP probe ("GET " = 1.2 GB) must not allocate
                    throw new IOException("frame of " + size + " bytes (socket.request.max.bytes is " + maxRequestBytes + ")");
                }
                final ByteBuffer frame = ByteBuffer.allocate(size);
                readFully(channel, frame);
                frame.flip();
                final RequestHeader header = RequestHeader.parse(frame);
                write(channel, header, answer(channel, connectionId, header, frame, peer).toCompletableFuture().get());
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt(); // closing
        }
        catch (final IOException | RuntimeException | ExecutionException ex)
        {
            // the peer went away or sent garbage, or the raft client failed the request: the connection ends,
            // the peer reconnects
            LOG.debug("raft connection {} ended", connectionId, ex);
        }
        finally
        {
            connections.remove(channel);
            if (!closed)
            {
                peer.lost(); // not our close: the peer went away (a crashed broker's kernel closes it at once)
            }
        }
    }

    /**
     * As Kafka's SocketServer does on every accepted socket: a Fetch answer goes out in two writes (header
     * and message, then the records by transferTo), and with Nagle the second waits for the follower's
     * delayed ACK (40 ms on Linux): most of the spike's first commit latency.
     */
    private static boolean noDelay(final SocketChannel channel)
    {
        try
        {
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            return true;
        }
        catch (final IOException ex)
        {
            closeQuietly(channel); // gone before it was served
            return false;
        }
    }

    private CompletionStage<ApiMessage> answer(final SocketChannel channel, final String connectionId,
        final RequestHeader header, final ByteBuffer frame, final HeartbeatPeer peer)
    {
        final ControllerRequests controllerApis = controller;
        if (header.apiKey() == ApiKeys.API_VERSIONS)
        {
            return CompletableFuture.completedFuture(API_VERSIONS.duplicate()); // no message object shared by threads
        }
        final AbstractRequest request = AbstractRequest.parseRequest(header.apiKey(), header.apiVersion(),
            new ByteBufferAccessor(frame)).request;
        if (ControllerRequests.APIS.contains(header.apiKey()))
        {
            if (controllerApis != null && header.apiKey() == ApiKeys.BROKER_HEARTBEAT)
            {
                peer.heard(controllerApis, (BrokerHeartbeatRequestData)request.data());
            }
            // answered on the controller's thread, written here; none served (yet, or any more): not the controller
            return controllerApis != null ? controllerApis.handle(header, request) : CompletableFuture.completedFuture(
                request.getErrorResponse(0, Errors.NOT_CONTROLLER.exception("no controller on this node")).data());
        }
        if (header.apiKey() == ApiKeys.DESCRIBE_CLUSTER)
        {
            return CompletableFuture.completedFuture(describeCluster((DescribeClusterRequestData)request.data()));
        }
        final RequestContext context = new RequestContext(header, connectionId, channel.socket().getInetAddress(),
            KafkaPrincipal.ANONYMOUS, listener, SecurityProtocol.PLAINTEXT, ClientInformation.EMPTY, false);
        return raft.handleRequest(context, header, request.data(), System.currentTimeMillis());
    }

    private static EnumSet<ApiKeys> listed()
    {
        final EnumSet<ApiKeys> apis = EnumSet.copyOf(RAFT_APIS);
        apis.addAll(ControllerRequests.APIS);
        return apis;
    }

    private DescribeClusterResponseData describeCluster(final DescribeClusterRequestData request)
    {
        final DescribeClusterResponseData answer = new DescribeClusterResponseData().setEndpointType(CONTROLLER_ENDPOINTS);
        if (request.endpointType() != CONTROLLER_ENDPOINTS)
        {
            return answer.setErrorCode(Errors.UNSUPPORTED_ENDPOINT_TYPE.code())
                .setErrorMessage("this listener serves the metadata quorum: ask for controllers");
        }
        final DescribeClusterResponseData.DescribeClusterBrokerCollection controllers =
            new DescribeClusterResponseData.DescribeClusterBrokerCollection();
        voters.forEach((id, address) -> controllers.add(new DescribeClusterResponseData.DescribeClusterBroker()
            .setBrokerId(id).setHost(address.getHostString()).setPort(address.getPort())));
        return answer.setClusterId(clusterId).setControllerId(raft.client().leaderAndEpoch().leaderId().orElse(-1))
            .setBrokers(controllers);
    }

    /**
     * Kafka's SendBuilder writes the answer; a Fetch answer's records are the leader's FileRecords and go
     * out with FileChannel.transferTo (zero-copy), which a plain ByteBuffer serialisation cannot do.
     */
    private static void write(final SocketChannel channel, final RequestHeader header, final ApiMessage message)
    {
        final ResponseHeader responseHeader = new ResponseHeader(header.correlationId(),
            header.apiKey().responseHeaderVersion(header.apiVersion()));
        final Send send = SendBuilder.buildResponseSend(responseHeader, message, header.apiVersion());
        try
        {
            final BlockingTransfer out = new BlockingTransfer(channel);
            while (!send.completed())
            {
                send.writeTo(out);
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * The broker whose heartbeats a connection carried (Kafka's broker sends them on a channel of their own), so that
     * the connection's end can be told to the controller's crash fencing ({@link CrashSuspects}). The connection's
     * own thread only.
     */
    private static final class HeartbeatPeer
    {
        private ControllerRequests requests;
        private int broker = -1;
        private long epoch;
        private long token = -1;

        void heard(final ControllerRequests requests, final BrokerHeartbeatRequestData heartbeat)
        {
            this.requests = requests;
            this.broker = heartbeat.brokerId();
            this.epoch = heartbeat.brokerEpoch();
            this.token = requests.heartbeatArrived(heartbeat);
        }

        void lost()
        {
            if (token >= 0)
            {
                requests.heartbeatConnectionLost(broker, epoch, token);
            }
        }
    }

    /** A blocking SocketChannel as the TransferableChannel a Send writes to. */
    private record BlockingTransfer(SocketChannel channel) implements TransferableChannel
    {
        @Override
        public boolean hasPendingWrites()
        {
            return false;
        }

        @Override
        public long transferFrom(final FileChannel file, final long position, final long count) throws IOException
        {
            return file.transferTo(position, count, channel);
        }

        @Override
        public long write(final ByteBuffer[] srcs, final int offset, final int length) throws IOException
        {
            return channel.write(srcs, offset, length);
        }

        @Override
        public long write(final ByteBuffer[] srcs) throws IOException
        {
            return channel.write(srcs);
        }

        @Override
        public int write(final ByteBuffer src) throws IOException
        {
            return channel.write(src);
        }

        @Override
        public boolean isOpen()
        {
            return channel.isOpen();
        }

        @Override
        public void close() throws IOException
        {
            channel.close();
        }
    }

    private static void readFully(final SocketChannel channel, final ByteBuffer buffer) throws IOException
    {
        while (buffer.hasRemaining())
        {
            if (channel.read(buffer) < 0)
            {
                throw new IOException("closed by peer");
            }
        }
    }

    /** The address the listener is bound to (its port, when asked for port 0). */
    public InetSocketAddress boundAddress() throws IOException
    {
        return (InetSocketAddress)server.getLocalAddress();
    }

    private static void closeQuietly(final SocketChannel channel)
    {
        try
        {
            channel.close();
        }
        catch (final IOException ex)
        {
            // already gone
        }
    }

    /** The connections open now (the test of the socket options and of close). */
    Set<SocketChannel> connections()
    {
        return Set.copyOf(connections.keySet());
    }

    /**
     * Stops accepting, closes every connection (a peer reads EOF at once instead of waiting out its
     * request timeout) and joins their threads, which wake from a blocked read or write by the close and
     * from a wait for an answer by the interrupt.
     */
    @Override
    public void close() throws IOException
    {
        closed = true;
        server.close();
        final Map<SocketChannel, Thread> open = Map.copyOf(connections);
        open.forEach((channel, thread) ->
        {
            closeQuietly(channel);
            thread.interrupt();
        });
        try
        {
            if (acceptor != null)
            {
                acceptor.join(JOIN_MS);
            }
            for (final Thread thread : open.values())
            {
                thread.join(JOIN_MS);
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
