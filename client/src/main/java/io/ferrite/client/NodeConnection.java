package io.ferrite.client;

import io.ferrite.wire.ProtocolException;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.ApiVersionsRequestEncoder;
import io.ferrite.wire.message.ApiVersionsResponseDecoder;
import io.ferrite.wire.message.RequestHeaderEncoder;
import io.ferrite.wire.message.ResponseHeaderDecoder;
import org.agrona.ExpandableDirectByteBuffer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * One non-blocking connection to one broker, owned by the thread running the client's duty cycle
 * (single-threaded, no selector: each {@link #poll} tries the socket once, which allocates nothing).
 * Frames are Kafka's: a four-byte size, the request header, the body, written by the generated
 * encoders straight into an off-heap buffer; answers are read into another and handed to the
 * {@link ResponseListener} in request order, matched by correlation id. After connecting it sends
 * ApiVersions and keeps each API's highest version the broker takes ({@link #version}).
 * A request unanswered after the request timeout closes the connection (as kafka-clients does),
 * failing what is in flight; a closed connection is made again after a backoff that doubles from
 * {@code reconnect.backoff.ms} to {@code reconnect.backoff.max.ms}.
 */
final class NodeConnection
{
    enum State
    {
        DISCONNECTED, CONNECTING, NEGOTIATING, READY, BACKOFF
    }

    /** Slots beyond {@code max.in.flight.requests.per.connection} for the control requests (ApiVersions, Metadata, InitProducerId). */
    static final int CONTROL_SLOTS = 3;
    /**
     * An answer larger than this is taken for a corrupt frame: no answer to what the producer sends comes near it, nor a
     * consumer's Fetch answer under {@code fetch.max.bytes} (50 MiB by default; a larger setting is not supported).
     */
    private static final int MAX_RESPONSE = 100 * 1024 * 1024;
    private static final short API_VERSIONS_VERSION = 3;

    final int nodeId;
    private final String host;
    private final int port;
    private final String clientId;
    private final ResponseListener listener;
    private final long requestTimeoutNs;
    private final long backoffMinNs;
    private final long backoffMaxNs;

    /** Holds one Produce request of max.request.size at most (one is begun only when the last is in the socket); grows for more. */
    private final ExpandableDirectByteBuffer out;
    private final ExpandableDirectByteBuffer in = new ExpandableDirectByteBuffer(64 * 1024);
    private final RequestHeaderEncoder header = new RequestHeaderEncoder();
    private final ResponseHeaderDecoder responseHeader = new ResponseHeaderDecoder();
    private final ApiVersionsRequestEncoder apiVersionsRequest = new ApiVersionsRequestEncoder();
    private final ApiVersionsResponseDecoder apiVersionsResponse = new ApiVersionsResponseDecoder();
    private final short[] brokerMax = new short[128];

    /** Requests in flight at most: {@code max.in.flight.requests.per.connection} and {@link #CONTROL_SLOTS}. */
    private final int capacity;
    private final int[] correlations;
    private final short[] apiKeys;
    private final short[] versions;
    private final long[] deadlines;
    private final Object[] contexts;
    private int head;
    private int inFlight;
    /** Requests that wait for no answer (acks=0), told to the listener once their bytes are in the socket. */
    private final Object[] unanswered;
    private int unansweredCount;

    private SocketChannel channel;
    private State state = State.DISCONNECTED;
    private long stateDeadlineNs;
    private long backoffNs;
    private int nextCorrelation;
    private int outLimit;
    private int outSent;
    private int inLimit;
    private int frameStart;
    private int pendingSizeAt = -1;

    NodeConnection(final int nodeId, final String host, final int port, final ResponseListener listener,
        final TransportSettings config)
    {
        this.nodeId = nodeId;
        this.host = host;
        this.port = port;
        this.clientId = config.clientId;
        this.listener = listener;
        this.requestTimeoutNs = config.requestTimeoutNs;
        this.backoffMinNs = config.reconnectBackoffNs;
        this.backoffMaxNs = config.reconnectBackoffMaxNs;
        this.backoffNs = backoffMinNs;
        this.out = new ExpandableDirectByteBuffer(config.sendBufferSize);
        this.capacity = config.maxInFlight + CONTROL_SLOTS;
        this.correlations = new int[capacity];
        this.apiKeys = new short[capacity];
        this.versions = new short[capacity];
        this.deadlines = new long[capacity];
        this.contexts = new Object[capacity];
        this.unanswered = new Object[capacity];
    }

    State state()
    {
        return state;
    }

    boolean isReady()
    {
        return state == State.READY;
    }

    boolean canSend()
    {
        return state == State.READY && inFlight < capacity && unansweredCount < capacity;
    }

    /** Bytes queued and not yet taken by the socket. */
    int unsent()
    {
        return outLimit - outSent;
    }

    int inFlight()
    {
        return inFlight;
    }

    boolean sameAddress(final String host, final int port)
    {
        return this.port == port && this.host.equals(host);
    }

    /** The highest version of {@code api} both sides take, or -1 when they share none. */
    short version(final ApiKeys api, final short clientMax)
    {
        final short broker = brokerMax[api.id];
        return broker < api.lowestVersion ? -1 : (short)Math.min(broker, clientMax);
    }

    /** Starts connecting unless connected, connecting or backing off. */
    void connect(final long nowNs)
    {
        if (state != State.DISCONNECTED)
        {
            return;
        }
        try
        {
            channel = SocketChannel.open();
            channel.configureBlocking(false);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            channel.connect(new InetSocketAddress(host, port));
            state = State.CONNECTING;
            stateDeadlineNs = nowNs + requestTimeoutNs;
        }
        catch (final IOException | RuntimeException ex)
        {
            close(nowNs, ClientErrors.NETWORK_EXCEPTION);
        }
    }

    /** One pass over the socket: connect progress, timeouts, answers read, queued bytes written. */
    int poll(final long nowNs)
    {
        try
        {
            switch (state)
            {
                case BACKOFF:
                    if (nowNs - stateDeadlineNs >= 0)
                    {
                        state = State.DISCONNECTED;
                    }
                    return 0;
                case DISCONNECTED:
                    return 0;
                case CONNECTING:
                    if (channel.finishConnect())
                    {
                        sendApiVersions(nowNs);
                        return 1 + write();
                    }
                    if (nowNs - stateDeadlineNs >= 0)
                    {
                        close(nowNs, ClientErrors.NETWORK_EXCEPTION);
                    }
                    return 0;
                default:
                    // answers already received first, as kafka-clients' NetworkClient: only a request still
                    // unanswered after the read times out, even when this thread comes back late
                    final int work = read(nowNs);
                    if (state != State.NEGOTIATING && state != State.READY)
                    {
                        return work;
                    }
                    if (inFlight > 0 && nowNs - deadlines[head] >= 0)
                    {
                        close(nowNs, ClientErrors.REQUEST_TIMED_OUT);
                        return work + 1;
                    }
                    return work + write();
            }
        }
        catch (final IOException | ProtocolException ex)
        {
            close(nowNs, ClientErrors.NETWORK_EXCEPTION);
            return 1;
        }
    }

    /**
     * Starts a request: writes the size's room and the header into the send buffer and returns the
     * body's offset in {@link #buffer()}; the caller encodes the body there and calls {@link #commit}.
     */
    int begin(final ApiKeys api, final short version)
    {
        if (pendingSizeAt >= 0)
        {
            throw new IllegalStateException("commit the request begun before");
        }
        pendingSizeAt = outLimit;
        final int correlation = nextCorrelation;
        final int headerLength = header.wrap(out, outLimit + 4, api.requestHeaderVersion(version))
            .requestApiKey(api.id).requestApiVersion(version).correlationId(correlation).clientId(clientId).finish();
        return outLimit + 4 + headerLength;
    }

    org.agrona.MutableDirectBuffer buffer()
    {
        return out;
    }

    /** Ends the request begun: {@code bodyEnd} is where its body ends; with {@code expectAnswer} false (acks=0) nothing waits. */
    void commit(final ApiKeys api, final short version, final int bodyEnd, final Object context,
        final boolean expectAnswer, final long nowNs)
    {
        out.putInt(pendingSizeAt, bodyEnd - pendingSizeAt - 4, BIG_ENDIAN);
        outLimit = bodyEnd;
        pendingSizeAt = -1;
        final int correlation = nextCorrelation++;
        if (expectAnswer)
        {
            final int slot = (head + inFlight) % capacity;
            correlations[slot] = correlation;
            apiKeys[slot] = api.id;
            versions[slot] = version;
            deadlines[slot] = nowNs + requestTimeoutNs;
            contexts[slot] = context;
            inFlight++;
        }
        else
        {
            unanswered[unansweredCount++] = context;
        }
    }

    /** Drops a request begun but not committed (its body did not fit, say). */
    void abandon()
    {
        pendingSizeAt = -1;
    }

    private void sendApiVersions(final long nowNs)
    {
        state = State.NEGOTIATING;
        final int body = begin(ApiKeys.API_VERSIONS, API_VERSIONS_VERSION);
        final int length = apiVersionsRequest.wrap(out, body, API_VERSIONS_VERSION)
            .clientSoftwareName("ferrite-client").clientSoftwareVersion("0.1.0").finish();
        commit(ApiKeys.API_VERSIONS, API_VERSIONS_VERSION, body + length, null, true, nowNs);
    }

    /** Writes what is queued (a request just committed) now rather than at the next {@link #poll}. */
    int flush(final long nowNs)
    {
        try
        {
            return state == State.READY ? write() : 0;
        }
        catch (final IOException ex)
        {
            close(nowNs, ClientErrors.NETWORK_EXCEPTION);
            return 1;
        }
    }

    private int write() throws IOException
    {
        if (outSent == outLimit || pendingSizeAt >= 0)
        {
            return 0;
        }
        final ByteBuffer bb = out.byteBuffer();
        bb.limit(outLimit).position(outSent);
        final int n = channel.write(bb);
        outSent += n;
        if (outSent == outLimit)
        {
            outSent = 0;
            outLimit = 0;
            listener.onFlushed(this);
            for (int i = 0; i < unansweredCount; i++)
            {
                final Object context = unanswered[i];
                unanswered[i] = null;
                listener.onWritten(this, context);
            }
            unansweredCount = 0;
        }
        return n > 0 ? 1 : 0;
    }

    private int read(final long nowNs) throws IOException
    {
        final ByteBuffer bb = in.byteBuffer();
        bb.limit(bb.capacity()).position(inLimit);
        final int n = channel.read(bb);
        if (n < 0)
        {
            close(nowNs, ClientErrors.NETWORK_EXCEPTION);
            return 1;
        }
        inLimit += n;
        int frames = 0;
        while (inLimit - frameStart >= 4 && state != State.DISCONNECTED && state != State.BACKOFF)
        {
            final int size = in.getInt(frameStart, BIG_ENDIAN);
            if (size < 4 || size > MAX_RESPONSE)
            {
                throw new ProtocolException("size", "response frame of " + size + " bytes");
            }
            if (inLimit - frameStart - 4 < size)
            {
                if (frameStart + 4 + size > in.capacity())
                {
                    // move the partial frame to the start before growing: the buffer grows only for a frame larger
                    // than itself, not for where a frame happened to start (which made a buffer grow, allocating,
                    // long after the largest answer had been seen)
                    compact();
                    in.checkLimit(4 + size);
                }
                break;
            }
            final int start = frameStart + 4;
            frameStart = start + size;
            handleFrame(start, start + size, nowNs);
            frames++;
        }
        if (frameStart == inLimit)
        {
            frameStart = 0;
            inLimit = 0;
        }
        else if (frameStart > in.capacity() / 2)
        {
            compact();
        }
        return frames + (n > 0 ? 1 : 0);
    }

    /** Moves the bytes not yet handled to the start of the receive buffer. */
    private void compact()
    {
        if (frameStart > 0)
        {
            in.putBytes(0, in, frameStart, inLimit - frameStart);
            inLimit -= frameStart;
            frameStart = 0;
        }
    }

    private void handleFrame(final int start, final int end, final long nowNs)
    {
        if (inFlight == 0)
        {
            throw new ProtocolException("correlation_id", "an answer to nothing asked");
        }
        final int slot = head;
        final ApiKeys api = ApiKeys.forId(apiKeys[slot]);
        final short version = versions[slot];
        final Object context = contexts[slot];
        final int bodyAt = responseHeader.wrap(in, start, end, api.responseHeaderVersion(version));
        if (responseHeader.correlationId() != correlations[slot])
        {
            throw new ProtocolException("correlation_id", "answer " + responseHeader.correlationId() +
                " where " + correlations[slot] + " was expected");
        }
        contexts[slot] = null;
        head = (head + 1) % capacity;
        inFlight--;
        if (api == ApiKeys.API_VERSIONS)
        {
            negotiated(bodyAt, end, version, nowNs);
        }
        else
        {
            listener.onResponse(this, api.id, version, context, in, bodyAt, end);
        }
    }

    private void negotiated(final int bodyAt, final int end, final short version, final long nowNs)
    {
        apiVersionsResponse.wrap(in, bodyAt, end, version);
        if (apiVersionsResponse.errorCode() != 0)
        {
            close(nowNs, apiVersionsResponse.errorCode());
            return;
        }
        java.util.Arrays.fill(brokerMax, (short)-1);
        for (var k = apiVersionsResponse.apiKeys(); k.hasNext(); )
        {
            k.next();
            if (k.apiKey() >= 0 && k.apiKey() < brokerMax.length)
            {
                brokerMax[k.apiKey()] = k.maxVersion();
            }
        }
        state = State.READY;
        backoffNs = backoffMinNs;
        listener.onReady(this);
    }

    /** Closes the socket, fails every request in flight with {@code errorCode}, and backs off before the next connect. */
    void close(final long nowNs, final short errorCode)
    {
        if (channel != null)
        {
            try
            {
                channel.close();
            }
            catch (final IOException ignored)
            {
                // closing: nothing more can be done with it
            }
            channel = null;
        }
        outLimit = 0;
        outSent = 0;
        inLimit = 0;
        frameStart = 0;
        pendingSizeAt = -1;
        state = State.BACKOFF;
        stateDeadlineNs = nowNs + backoffNs;
        backoffNs = Math.min(backoffNs * 2, backoffMaxNs);
        for (int i = 0; i < unansweredCount; i++)
        {
            final Object context = unanswered[i];
            unanswered[i] = null;
            listener.onFailure(this, ApiKeys.PRODUCE.id, context, errorCode);
        }
        unansweredCount = 0;
        while (inFlight > 0)
        {
            final int slot = head;
            final Object context = contexts[slot];
            contexts[slot] = null;
            head = (head + 1) % capacity;
            inFlight--;
            if (apiKeys[slot] != ApiKeys.API_VERSIONS.id)
            {
                listener.onFailure(this, apiKeys[slot], context, errorCode);
            }
        }
    }

    /** Closes for good (the client's close): what is in flight fails with {@code errorCode}. */
    void shutdown(final long nowNs, final short errorCode)
    {
        close(nowNs, errorCode);
        state = State.DISCONNECTED;
    }
}
