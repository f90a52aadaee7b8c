package io.ferrite.broker.txn;

import io.ferrite.broker.replica.FetcherChannel;
import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.RequestHeaderEncoder;
import io.ferrite.wire.message.ResponseHeaderDecoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Requests of the transaction coordinator's protocol to other nodes of a cluster (issue 14): the markers to a partition's
 * leader ({@link RemoteMarkers}) and a leader's produce verification to the transactional id's coordinator
 * ({@link RemoteVerifier}). Sent by a thread of its own over the node-to-node connection the follower fetchers use
 * ({@link FetcherChannel}: connect and request bounded by {@code socket.connection.setup.timeout.ms} and
 * {@code replica.socket.timeout.ms}), one connection per node, kept; one request at a time, in the order sent: a node
 * that does not answer holds the others up to the request timeout.
 */
public final class NodeRequests implements AutoCloseable
{
    /** One request and its answer; {@link #answered} or {@link #failed} runs on the sender thread, once. */
    public interface Exchange
    {
        InetSocketAddress to();

        ApiKeys api();

        short version();

        /** Writes the request's body at {@code at} of {@code out}; returns its length. */
        int write(MutableDirectBuffer out, int at);

        /** The answer's body, {@code body} to {@code limit} of {@code in}. */
        void answered(DirectBuffer in, int body, int limit);

        /** No answer: the connection failed, timed out, or the answer could not be read. */
        void failed(Exception cause);
    }

    private final FetcherSettings settings;
    private final String clientId;
    private final int frameBytes;
    private final LinkedBlockingQueue<Exchange> sends = new LinkedBlockingQueue<>();
    /** The connections by node address (sender thread). */
    private final Map<InetSocketAddress, FetcherChannel> channels = new java.util.concurrent.ConcurrentHashMap<>(); // closed by close() too
    private final UnsafeBuffer out;
    private final RequestHeaderEncoder header = new RequestHeaderEncoder();
    private final ResponseHeaderDecoder responseHeader = new ResponseHeaderDecoder();
    private final Thread thread;
    private int correlationId;
    private volatile boolean closed;

    /** Started at once; requests up to {@code frameBytes}. */
    public NodeRequests(final FetcherSettings settings, final String clientId, final int frameBytes)
    {
        this.settings = settings;
        this.clientId = clientId;
        this.frameBytes = frameBytes;
        this.out = new UnsafeBuffer(ByteBuffer.allocateDirect(frameBytes));
        this.thread = new Thread(this::run, clientId);
        thread.setDaemon(true);
        thread.start();
    }

    /** Any thread: sends {@code exchange} after those sent before it. */
    public void send(final Exchange exchange)
    {
        sends.add(exchange);
    }

    /** Any thread: drops the exchanges still queued that {@code which} accepts; they are neither sent nor answered. */
    public void purge(final java.util.function.Predicate<Exchange> which)
    {
        sends.removeIf(which);
    }

    private void run()
    {
        while (!closed)
        {
            final Exchange e;
            try
            {
                e = sends.poll(100, TimeUnit.MILLISECONDS);
            }
            catch (final InterruptedException ex)
            {
                break;
            }
            if (e != null)
            {
                exchange(e);
            }
        }
        for (Exchange e; (e = sends.poll()) != null; )
        {
            e.failed(new IOException("closed")); // those waiting on an answer are not left waiting
        }
        channels.values().forEach(FetcherChannel::close); // also one made after close() closed the others
    }

    private void exchange(final Exchange e)
    {
        FetcherChannel channel = channels.get(e.to());
        final int length;
        final int body;
        try
        {
            if (channel == null)
            {
                channel = new FetcherChannel(e.to(), settings, frameBytes);
                channels.put(e.to(), channel);
            }
            if (!channel.connected())
            {
                channel.connect();
            }
            channel.send(out.byteBuffer().clear().limit(encode(e)));
            length = channel.receive();
            body = responseHeader.wrap(channel.inBuffer, 0, length, e.api().responseHeaderVersion(e.version()));
            if (responseHeader.correlationId() != correlationId)
            {
                throw new IOException("an answer to request " + responseHeader.correlationId() + ", expected " + correlationId);
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            if (channel != null)
            {
                channel.disconnect();
            }
            e.failed(ex);
            return;
        }
        try
        {
            e.answered(channel.inBuffer, body, length);
        }
        catch (final RuntimeException ex)
        {
            channel.disconnect(); // an answer it could not read: the next request starts on a new connection
            e.failed(ex);
        }
    }

    private int encode(final Exchange e)
    {
        int at = FetcherChannel.SIZE_LENGTH;
        final ApiKeys api = e.api();
        at += header.wrap(out, at, api.requestHeaderVersion(e.version())).requestApiKey(api.id).requestApiVersion(e.version())
            .correlationId(++correlationId).clientId(clientId).finish();
        at += e.write(out, at);
        out.putInt(0, at - FetcherChannel.SIZE_LENGTH, ByteOrder.BIG_ENDIAN);
        return at;
    }

    @Override
    public void close() throws InterruptedException
    {
        closed = true;
        thread.interrupt();
        channels.values().forEach(FetcherChannel::close); // ends a connect or a wait in progress
        thread.join(TimeUnit.SECONDS.toMillis(30));
    }
}
