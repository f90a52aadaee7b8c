package io.ferrite.broker.net;

import io.ferrite.wire.ProtocolException;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.RequestHeaderDecoder;
import io.ferrite.wire.message.ResponseHeaderEncoder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * A network thread: owns its connections and their selector; reads frames, decodes the request
 * header, has the request answered and writes the response. As in Kafka a connection has one
 * request in progress: the next frame is looked at only once the previous response is written.
 * A frame that breaks the protocol costs only its connection, which is closed and logged once.
 */
public final class NetworkThread implements Runnable, AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(NetworkThread.class);

    private final int id;
    private final Selector selector;
    private final Queue<SocketChannel> incoming = new ConcurrentLinkedQueue<>();
    private final RequestHandler handler;
    private final int maxRequestBytes;
    private final RequestHeaderDecoder header = new RequestHeaderDecoder();
    private final ResponseHeaderEncoder responseHeader = new ResponseHeaderEncoder();
    private final Thread thread;
    private volatile boolean running = true;
    private long nextConnectionId;
    private int connections;

    public NetworkThread(final int id, final RequestHandler handler, final int maxRequestBytes) throws IOException
    {
        this.id = id;
        this.handler = handler;
        this.maxRequestBytes = maxRequestBytes;
        this.selector = Selector.open();
        this.thread = new Thread(this, "ferrite-network-" + id);
        this.thread.setDaemon(true);
    }

    public void start()
    {
        thread.start();
    }

    /** Hands over an accepted connection (from the acceptor thread). */
    public void accept(final SocketChannel channel)
    {
        incoming.add(channel);
        selector.wakeup();
    }

    /** Connections open on this thread (read by tests and metrics; approximate from other threads). */
    public int connections()
    {
        return connections;
    }

    @Override
    public void run()
    {
        while (running)
        {
            try
            {
                selector.select(100);
                registerIncoming();
                for (final SelectionKey key : selector.selectedKeys())
                {
                    final Connection connection = (Connection)key.attachment();
                    if (!key.isValid())
                    {
                        continue;
                    }
                    try
                    {
                        if (key.isWritable())
                        {
                            onWritable(connection);
                        }
                        if (key.isValid() && key.isReadable())
                        {
                            onReadable(connection);
                        }
                    }
                    catch (final IOException ex)
                    {
                        close(connection, "I/O error: " + ex.getMessage(), false);
                    }
                }
                selector.selectedKeys().clear();
            }
            catch (final IOException ex)
            {
                LOG.error("network thread {} selector failed", id, ex);
            }
        }
        for (final SelectionKey key : selector.keys())
        {
            close((Connection)key.attachment(), "shutdown", false);
        }
        try
        {
            selector.close();
        }
        catch (final IOException ex)
        {
            LOG.warn("closing selector", ex);
        }
    }

    private void registerIncoming() throws IOException
    {
        SocketChannel channel;
        while ((channel = incoming.poll()) != null)
        {
            channel.configureBlocking(false);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            final Connection connection = new Connection(((long)id << 48) | nextConnectionId++, channel,
                String.valueOf(channel.getRemoteAddress()));
            connection.key = channel.register(selector, SelectionKey.OP_READ, connection);
            connections++;
        }
    }

    private void onReadable(final Connection connection) throws IOException
    {
        if (connection.read() < 0)
        {
            close(connection, "closed by the client", false);
            return;
        }
        processFrames(connection);
    }

    private void onWritable(final Connection connection) throws IOException
    {
        if (connection.flush())
        {
            connection.key.interestOps(SelectionKey.OP_READ);
            processFrames(connection); // requests that arrived while the response was written
        }
    }

    private void processFrames(final Connection connection) throws IOException
    {
        while (!connection.closed && !connection.isWriting())
        {
            final int size;
            try
            {
                size = connection.completeFrame(maxRequestBytes);
            }
            catch (final Connection.FrameException ex)
            {
                close(connection, ex.getMessage(), true);
                return;
            }
            if (size < 0)
            {
                break;
            }
            final int start = connection.frameOffset();
            final boolean answered = handleFrame(connection, start, start + size);
            connection.consumeFrame(size);
            if (!answered)
            {
                return;
            }
            if (!connection.flush())
            {
                connection.key.interestOps(SelectionKey.OP_WRITE);
                return;
            }
        }
        connection.compact();
    }

    /** Answers one request; false when the connection was closed instead. */
    private boolean handleFrame(final Connection connection, final int start, final int end)
    {
        try
        {
            if (end - start < 4)
            {
                throw new ProtocolException("RequestHeader", "frame of " + (end - start) + " bytes");
            }
            final short apiKey = connection.in.getShort(start, BIG_ENDIAN);
            final short version = connection.in.getShort(start + 2, BIG_ENDIAN);
            final ApiKeys api = ApiKeys.forId(apiKey);
            if (api == null)
            {
                close(connection, "unknown API key " + apiKey, true);
                return false;
            }
            final boolean supported = api.isVersionSupported(version);
            if (!supported && api != ApiKeys.API_VERSIONS)
            {
                close(connection, api.title + " v" + version + " is not supported", true);
                return false;
            }
            // an ApiVersions request of a version this broker does not know is read as v0 and
            // answered with v0 (Kafka's rule, so that any client learns what is supported)
            final short readVersion = supported ? version : 0;
            final int body = header.wrap(connection.in, start, end, api.requestHeaderVersion(readVersion));
            final int correlationId = header.correlationId();
            connection.beginResponse();
            responseHeader.wrap(connection.out, 4, api.responseHeaderVersion(readVersion)).correlationId(correlationId);
            final int bodyStart = 4 + responseHeader.finish();
            final int responseEnd = handler.handle(api, supported ? version : (short)-1, connection.in, body, end,
                connection.out, bodyStart, connection);
            if (responseEnd == RequestHandler.CLOSE)
            {
                close(connection, api.title + " v" + version + " request refused", true);
                return false;
            }
            connection.endResponse(responseEnd);
            return true;
        }
        catch (final ProtocolException ex)
        {
            close(connection, "malformed request: " + ex.getMessage(), true);
            return false;
        }
    }

    private void close(final Connection connection, final String reason, final boolean protocolError)
    {
        if (connection.closed)
        {
            return;
        }
        connection.closed = true;
        connections--;
        if (protocolError)
        {
            LOG.warn("closing connection from {}: {}", connection.remote(), reason);
        }
        else
        {
            LOG.debug("connection from {} ends: {}", connection.remote(), reason);
        }
        connection.key.cancel();
        try
        {
            connection.channel.close();
        }
        catch (final IOException ex)
        {
            LOG.debug("closing {}", connection.remote(), ex);
        }
    }

    @Override
    public void close()
    {
        running = false;
        selector.wakeup();
        try
        {
            thread.join(10_000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
