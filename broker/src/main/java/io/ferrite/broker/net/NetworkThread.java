package io.ferrite.broker.net;

import io.ferrite.broker.logthread.AppendCommand;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.wire.ProtocolException;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.RequestHeaderDecoder;
import io.ferrite.wire.message.ResponseHeaderEncoder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * A network thread: owns its connections and their selector; reads frames, decodes the request
 * header, has the request answered and writes the response. As in Kafka a connection has one
 * request in progress: the next frame is looked at only once the previous response is written.
 * A frame that breaks the protocol costs only its connection, which is closed and logged once.
 *
 * <p>A request whose answer is not ready at once (a produce on its way through the log threads,
 * a fetch waiting for data) leaves a {@link PendingResponse} on its connection, which reads nothing
 * more until it is done (it is muted only if more bytes arrive meanwhile). The loop polls those
 * after each select: when log threads returned commands (they wake the selector only while it is
 * blocked in select), when a partition a parked fetch reads moved its high watermark, and by the
 * nearest deadline.
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
    private final ArrayList<Connection> waiting = new ArrayList<>();
    private final java.util.function.Consumer<SelectionKey> onKey = this::onKey;
    private LogThread[] logThreads = new LogThread[0];
    private volatile boolean running = true;
    /** Set while the loop is in (or about to enter) a blocking select: only then must a log thread wake it. */
    private volatile boolean selecting;
    private volatile long drainDeadline;
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

    /** The log threads whose returned commands this thread drains (set before {@link #start}). */
    public void logThreads(final LogThread[] logThreads)
    {
        this.logThreads = logThreads;
    }

    public int id()
    {
        return id;
    }

    public void start()
    {
        thread.start();
    }

    /** Makes the loop look at its pending responses now (from log threads: data arrived, a group answered). */
    public void wakeup()
    {
        selector.wakeup();
    }

    /**
     * From a log thread, after it put commands on this thread's return queue: wakes the loop only if
     * it blocks (or is about to block) in select. A busy loop drains the return queues before it
     * selects again, so under load most completions cost no system call (Selector.wakeup is an
     * eventfd write under a lock the loop also takes).
     */
    public void commandsReturned()
    {
        VarHandle.fullFence(); // the command's store before the read of selecting (see run())
        if (selecting)
        {
            selector.wakeup();
        }
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
        // after close(): responses already under way are finished (for a few seconds at most)
        while (running || (!waiting.isEmpty() && System.currentTimeMillis() < drainDeadline))
        {
            try
            {
                // keys are handed to onKey as they are found: no selected-key set, no iterator, no garbage
                final long timeout = selectTimeout();
                // publish "selecting" before the last look at the return queues; commandsReturned()
                // reads it only after its command is queued (a full fence on both sides): one of the
                // two always sees the other, so a returned command never waits out a select timeout
                selecting = true;
                VarHandle.fullFence();
                if (timeout <= 0 || commandsWaiting())
                {
                    selector.selectNow(onKey);
                }
                else
                {
                    selector.select(onKey, timeout);
                }
                selecting = false;
                registerIncoming();
                drainCompletions();
                pollWaiting();
            }
            catch (final IOException | RuntimeException ex)
            {
                LOG.error("network thread {} loop failed", id, ex);
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

    private void onKey(final SelectionKey key)
    {
        final Connection connection = (Connection)key.attachment();
        if (!key.isValid())
        {
            return;
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
        catch (final RuntimeException ex)
        {
            LOG.error("closing connection {} from {}: request failed", connection.id, connection.remote(), ex);
            close(connection, "request failed: " + ex, false);
        }
    }

    /** Milliseconds to the nearest deadline of a pending response (at most 100). */
    private long selectTimeout()
    {
        if (waiting.isEmpty())
        {
            return 100;
        }
        long deadline = Long.MAX_VALUE;
        for (int i = 0; i < waiting.size(); i++)
        {
            deadline = Math.min(deadline, waiting.get(i).pending.deadlineMs());
        }
        return Math.min(100, deadline - System.currentTimeMillis());
    }

    private boolean commandsWaiting()
    {
        for (final LogThread logThread : logThreads)
        {
            if (logThread.hasReturned(id))
            {
                return true;
            }
        }
        return false;
    }

    private void drainCompletions()
    {
        for (final LogThread logThread : logThreads)
        {
            AppendCommand command;
            while ((command = logThread.poll(id)) != null)
            {
                command.request.appended(command);
            }
        }
    }

    private void pollWaiting()
    {
        if (waiting.isEmpty())
        {
            return;
        }
        final long now = System.currentTimeMillis();
        for (int i = 0; i < waiting.size(); )
        {
            final Connection connection = waiting.get(i);
            int end;
            try
            {
                if (connection.closed)
                {
                    cancelQuietly(connection);
                    end = RequestHandler.CLOSE;
                }
                else
                {
                    end = connection.pending.poll(connection, connection.pendingBodyStart, now);
                }
            }
            catch (final RuntimeException ex)
            {
                LOG.error("closing connection {} from {}: request failed", connection.id, connection.remote(), ex);
                end = RequestHandler.CLOSE;
                cancelQuietly(connection);
            }
            if (end == PendingResponse.NOT_READY)
            {
                i++;
                continue;
            }
            final int last = waiting.size() - 1;
            waiting.set(i, waiting.get(last));
            waiting.remove(last);
            try
            {
                completeDeferred(connection, end);
            }
            catch (final IOException ex)
            {
                close(connection, "I/O error: " + ex.getMessage(), false);
            }
        }
    }

    private static void cancelQuietly(final Connection connection)
    {
        try
        {
            connection.pending.cancel();
        }
        catch (final RuntimeException ex)
        {
            LOG.error("connection {}: cancelling its waiting request failed", connection.id, ex);
        }
    }

    private void completeDeferred(final Connection connection, final int end) throws IOException
    {
        connection.pending = null;
        if (connection.closed)
        {
            return;
        }
        if (end == RequestHandler.CLOSE)
        {
            close(connection, "request refused", true);
            return;
        }
        connection.consumeFrame(connection.pendingFrameSize);
        if (end != PendingResponse.NO_RESPONSE)
        {
            connection.endResponse(end);
            if (!connection.flush())
            {
                connection.key.interestOps(SelectionKey.OP_WRITE);
                return;
            }
        }
        connection.key.interestOps(SelectionKey.OP_READ);
        processFrames(connection);
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
        if (connection.pending != null)
        {
            // the next request came while one is pending: stop reading until that one is answered
            // (muting here rather than when deferring spares two epoll_ctl calls per deferred
            // request of a client that waits for each answer)
            connection.key.interestOps(0);
            return;
        }
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
            final int outcome = handleFrame(connection, start, start + size);
            if (outcome == DEFERRED)
            {
                // the frame stays in the input, unread past, until the pending response is done
                connection.pendingFrameSize = size;
                waiting.add(connection);
                return;
            }
            connection.consumeFrame(size);
            if (outcome == CLOSED)
            {
                return;
            }
            if (outcome == SILENT)
            {
                continue;
            }
            if (!connection.flush())
            {
                connection.key.interestOps(SelectionKey.OP_WRITE);
                return;
            }
        }
        connection.compact();
    }

    private static final int ANSWERED = 0;
    private static final int CLOSED = 1;
    private static final int DEFERRED = 2;
    private static final int SILENT = 3;

    /** Answers one request: {@link #ANSWERED}, {@link #CLOSED}, {@link #DEFERRED} or {@link #SILENT} (no response). */
    private int handleFrame(final Connection connection, final int start, final int end)
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
                return CLOSED;
            }
            final boolean supported = api.isVersionSupported(version);
            if (!supported && api != ApiKeys.API_VERSIONS)
            {
                close(connection, api.title + " v" + version + " is not supported", true);
                return CLOSED;
            }
            // an ApiVersions request of a version this broker does not know is read as v0 and
            // answered with v0 (Kafka's rule, so that any client learns what is supported)
            final short readVersion = supported ? version : 0;
            final int body = header.wrap(connection.in, start, end, api.requestHeaderVersion(readVersion));
            final int correlationId = header.correlationId();
            connection.clientIdOffset = header.clientIdOffset();
            connection.clientIdLength = header.clientIdLength();
            connection.beginResponse();
            responseHeader.wrap(connection.out, 4, api.responseHeaderVersion(readVersion)).correlationId(correlationId);
            final int bodyStart = 4 + responseHeader.finish();
            final int responseEnd = handler.handle(api, supported ? version : (short)-1, connection.in, body, end,
                connection.out, bodyStart, connection);
            if (responseEnd == RequestHandler.CLOSE)
            {
                close(connection, api.title + " v" + version + " request refused", true);
                return CLOSED;
            }
            if (responseEnd == RequestHandler.DEFERRED)
            {
                connection.pendingBodyStart = bodyStart;
                return DEFERRED;
            }
            if (responseEnd == PendingResponse.NO_RESPONSE)
            {
                return SILENT;
            }
            connection.endResponse(responseEnd);
            return ANSWERED;
        }
        catch (final ProtocolException ex)
        {
            close(connection, "malformed request: " + ex.getMessage(), true);
            return CLOSED;
        }
        catch (final RuntimeException ex)
        {
            // a defect in a handler costs only this connection, never the thread and its others
            LOG.error("closing connection {} from {}: request failed", connection.id, connection.remote(), ex);
            close(connection, "request failed: " + ex, false);
            return CLOSED;
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
            LOG.warn("closing connection {} from {}: {}", connection.id, connection.remote(), reason);
        }
        else
        {
            LOG.debug("connection {} from {} ends: {}", connection.id, connection.remote(), reason);
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
        drainDeadline = System.currentTimeMillis() + 5_000;
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
