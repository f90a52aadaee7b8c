package io.ferrite.broker.net;

import io.ferrite.broker.metrics.NetworkCounters;
import io.ferrite.broker.metrics.RequestKinds;
import io.ferrite.broker.metrics.RequestTimes;
import io.ferrite.wire.ProtocolException;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.RequestHeaderDecoder;
import io.ferrite.wire.message.ResponseHeaderEncoder;
import org.agrona.ErrorHandler;

import java.io.IOException;
import java.nio.channels.SelectionKey;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * Reads a network thread's connections, hands each complete frame to the API's handler and writes
 * the answer. As in Kafka a connection has one request in progress: the next frame is looked at only
 * once the previous response is written, or, for a request answered later, once its pending response
 * is done ({@link #resume}). A frame that breaks the protocol costs only its connection, as does a
 * handler that throws. Network thread only; the header codecs are reused for every request.
 *
 * <p>Requests are timed ({@link RequestTimes}) when the thread's counters record ({@link NetworkCounters#recording},
 * {@code ferrite.metrics.recording}): then a request takes four {@code System.nanoTime} readings (five when deferred)
 * and its times are recorded when its answer is written; otherwise none is taken ({@link #timing}, a final field read
 * per request) and nothing is recorded.
 */
final class RequestDispatcher
{
    private static final int ANSWERED = 0;
    private static final int CLOSED = 1;
    private static final int DEFERRED = 2;
    private static final int SILENT = 3;

    private final RequestHandler handler;
    private final int maxRequestBytes;
    private final Connections connections;
    private final DeferredResponses deferred;
    private final ThrottledConnections throttled;
    private final ErrorHandler errors;
    private final NetworkCounters counters;
    private final RequestTimes times;
    /** Whether requests are timed: {@code ferrite.metrics.recording}, fixed at the start. */
    private final boolean timing;
    private final RequestHeaderDecoder header = new RequestHeaderDecoder();
    private final ResponseHeaderEncoder responseHeader = new ResponseHeaderEncoder();

    RequestDispatcher(final RequestHandler handler, final int maxRequestBytes, final Connections connections,
        final DeferredResponses deferred, final ThrottledConnections throttled, final ErrorHandler errors, final NetworkCounters counters)
    {
        this.throttled = throttled;
        this.counters = counters;
        this.times = counters.times();
        this.timing = counters.recording();
        this.handler = handler;
        this.maxRequestBytes = maxRequestBytes;
        this.connections = connections;
        this.deferred = deferred;
        this.errors = errors;
    }

    void onReadable(final Connection connection) throws IOException
    {
        if (connection.pending != null)
        {
            // the next request came while one is pending: stop reading until that one is answered
            // (muting here rather than when deferring spares two epoll_ctl calls per deferred
            // request of a client that waits for each answer)
            connection.key.interestOps(0);
            return;
        }
        if (connection.throttledUntilMs != 0 && !connection.isWriting())
        {
            connection.key.interestOps(0); // muted by a quota: read once its throttle time is over (ThrottledConnections)
            return;
        }
        if (connection.read() < 0)
        {
            connections.close(connection, "closed by the client", false);
            return;
        }
        if (connection.transportWantsWrite())
        {
            // a TLS handshake's output the socket did not take yet: written when it has room
            connection.key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
            return;
        }
        processFrames(connection);
    }

    void onWritable(final Connection connection) throws IOException
    {
        if (!connection.isWriting())
        {
            // no response under way: TLS output of its own (a handshake's) had to wait for room
            if (connection.flushTransport())
            {
                connection.key.interestOps(SelectionKey.OP_READ);
                onReadable(connection);
            }
            return;
        }
        if (connection.flush())
        {
            sentNow(connection);
            if (closedAfterResponse(connection) || throttled.muteIfThrottled(connection))
            {
                return;
            }
            connection.key.interestOps(SelectionKey.OP_READ);
            processFrames(connection); // requests that arrived while the response was written
        }
    }

    /** The pending response of {@code connection} ended with {@code end}: writes it and reads on. */
    void resume(final Connection connection, final int end) throws IOException
    {
        connection.pending = null;
        if (connection.closed)
        {
            return;
        }
        if (end == RequestHandler.CLOSE)
        {
            if (connection.closeAfterResponse != null)
            {
                connections.closeFailedAuthentication(connection, connection.closeAfterResponse);
            }
            else
            {
                connections.close(connection, "request refused", true);
            }
            return;
        }
        connection.frames.consumeFrame(connection.pendingFrameSize);
        if (connection.timedKind >= 0)
        {
            connection.readyNs = System.nanoTime();
        }
        if (end != PendingResponse.NO_RESPONSE)
        {
            connection.endResponse(end);
            if (!connection.flush())
            {
                connection.key.interestOps(SelectionKey.OP_WRITE);
                return;
            }
            sentNow(connection);
        }
        else
        {
            sent(connection, connection.readyNs);
        }
        if (closedAfterResponse(connection) || throttled.muteIfThrottled(connection))
        {
            return;
        }
        connection.key.interestOps(SelectionKey.OP_READ);
        processFrames(connection);
    }

    /** A connection muted by a quota whose throttle time is over: it reads again, first what it sent meanwhile. */
    void unmuted(final Connection connection)
    {
        try
        {
            if (timing)
            {
                // Kafka's muted channel reads its next request only now: one read with the throttled request (pipelined)
                // is received now (timed: the later of its read and this), not charged the throttle
                connection.lastSentNs = System.nanoTime();
            }
            connection.key.interestOps(SelectionKey.OP_READ);
            processFrames(connection);
        }
        catch (final IOException ex)
        {
            connections.closeAfter(connection, ex); // as in NetworkThread.onKey
        }
        catch (final RuntimeException ex)
        {
            failed(connection, ex);
        }
        catch (final InternalError ex)
        {
            // a read error of a mapped page (SIGBUS) in the next request's read: as in NetworkThread.onKey
            errors.onError(ex);
            connections.close(connection, "I/O error reading a mapped segment: " + ex.getMessage(), false);
        }
        catch (final Error ex)
        {
            failed(connection, ex);
        }
    }

    /** A response that ends its connection (a failed authentication's) was written: the connection closes, one INFO line. */
    private boolean closedAfterResponse(final Connection connection)
    {
        if (connection.closeAfterResponse != null)
        {
            connections.closeFailedAuthentication(connection, connection.closeAfterResponse);
            return true;
        }
        return false;
    }

    private void processFrames(final Connection connection) throws IOException
    {
        while (!connection.closed && !connection.isWriting())
        {
            final int size;
            try
            {
                // before it authenticated a SASL connection's frames are bounded by Kafka's sasl.server.max.receive.size
                size = connection.frames.completeFrame(connection.gate == null ? maxRequestBytes : connection.listener().saslMaxReceiveSize(),
                    connection.gate != null);
            }
            catch (final FrameException ex)
            {
                if (connection.gate instanceof SaslAuthenticator sasl)
                {
                    // Kafka fails the authentication: the close waits for the failed-authentication delay
                    sasl.oversized();
                    connection.pendingFrameSize = 0;
                    deferred.add(connection);
                    return;
                }
                connections.close(connection, ex.getMessage(), true);
                return;
            }
            if (size < 0)
            {
                if (!connection.inputBuffered())
                {
                    break;
                }
                // TLS holds bytes the input had no room for: read them now, the socket will not tell of them again
                connection.frames.compact();
                final int n = connection.read();
                if (n < 0)
                {
                    connections.close(connection, "closed by the client", false);
                    return;
                }
                if (n == 0)
                {
                    // no progress: a handshake message (a renegotiation) waits for room to be written first
                    if (connection.transportWantsWrite())
                    {
                        connection.key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                    }
                    break;
                }
                continue;
            }
            final int start = connection.frames.frameOffset();
            final int outcome = handleFrame(connection, start, start + size);
            if (outcome == DEFERRED)
            {
                // the frame stays in the input, unread past, until the pending response is done
                connection.pendingFrameSize = size;
                deferred.add(connection);
                return;
            }
            connection.frames.consumeFrame(size);
            if (outcome == CLOSED)
            {
                return;
            }
            if (outcome == SILENT)
            {
                sent(connection, connection.readyNs);
            }
            else if (!connection.flush())
            {
                connection.key.interestOps(SelectionKey.OP_WRITE);
                return;
            }
            sentNow(connection);
            if (throttled.muteIfThrottled(connection))
            {
                break; // the next frames wait for the throttle time's end
            }
        }
        connection.frames.compact();
    }

    /** Answers one request: {@link #ANSWERED}, {@link #CLOSED}, {@link #DEFERRED} or {@link #SILENT} (no response). */
    private int handleFrame(final Connection connection, final int start, final int end)
    {
        final long startNs = timing ? System.nanoTime() : 0;
        connection.followerFetch = false;
        boolean fetchUncounted = false; // a Fetch is counted once its handler read whose it is (or it failed)
        try
        {
            if (connection.gate instanceof SaslAuthenticator sasl && sasl.bareToken())
            {
                return bareToken(connection, sasl, start, end);
            }
            if (end - start < 4)
            {
                throw NetMessages.shortFrame(end - start);
            }
            final short apiKey = connection.in.getShort(start, BIG_ENDIAN);
            final short version = connection.in.getShort(start + 2, BIG_ENDIAN);
            final ApiKeys api = ApiKeys.forId(apiKey);
            if (api == null)
            {
                connections.close(connection, NetMessages.unknownApi(apiKey), true);
                return CLOSED;
            }
            if (api != ApiKeys.FETCH)
            {
                counters.request(api); // a Fetch once its handler read whose it is (Kafka's FetchConsumer, FetchFollower)
            }
            fetchUncounted = api == ApiKeys.FETCH;
            final boolean supported = api.isVersionSupported(version);
            if (!supported && api != ApiKeys.API_VERSIONS)
            {
                connections.close(connection, NetMessages.unsupported(api, version), true);
                return CLOSED;
            }
            // an ApiVersions request of a version this broker does not know is read as v0 and
            // answered with v0 (Kafka's rule, so that any client learns what is supported)
            final short readVersion = supported ? version : 0;
            final int body = header.wrap(connection.in, start, end, api.requestHeaderVersion(readVersion));
            final int correlationId = header.correlationId();
            connection.requestBytes = end - start;
            connection.clientIdOffset = header.clientIdOffset();
            connection.clientIdLength = header.clientIdLength();
            connection.beginResponse();
            responseHeader.wrap(connection.out, 4, api.responseHeaderVersion(readVersion)).correlationId(correlationId);
            final int bodyStart = 4 + responseHeader.finish();
            if (connection.gate == null && (api == ApiKeys.SASL_HANDSHAKE || connection.activeMs > connection.sessionEndMs)
                && SaslAuthenticator.sessionEnded(connection, api))
            {
                connections.close(connection, SaslAuthenticator.SESSION_ENDED, false);
                return CLOSED;
            }
            final RequestHandler gate = connection.gate; // a SASL connection's until it authenticated (and while it re-authenticates)
            final int responseEnd = (gate != null ? gate : handler).handle(api, supported ? version : (short)-1, connection.in, body, end,
                connection.out, bodyStart, connection);
            fetchUncounted = false;
            timed(connection, RequestKinds.of(api, connection.followerFetch), startNs);
            if (responseEnd == RequestHandler.CLOSE)
            {
                connections.close(connection, NetMessages.refused(api, version), true);
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
            countFetch(connection, fetchUncounted);
            connections.close(connection, NetMessages.malformed(ex), true);
            return CLOSED;
        }
        catch (final RuntimeException ex)
        {
            // a defect in a handler costs only this connection, never the thread and its others
            countFetch(connection, fetchUncounted);
            failed(connection, ex);
            return CLOSED;
        }
        catch (final Error ex)
        {
            // here too, whether reached from a read or from resume (a request pipelined behind a deferred one)
            countFetch(connection, fetchUncounted);
            failed(connection, ex);
            return CLOSED;
        }
    }

    /**
     * Kafka's Processor closes the connection whatever its request threw and goes on; so does a network thread, but
     * for a VirtualMachineError other than a stack overflow (the heap out of memory, an internal error: the JVM is not sound, or
     * a mapped page's read error, which the caller closes as an I/O error). A stack overflow is unwound, an assertion
     * or a class that failed to link leaves the JVM as sound as any exception does.
     */
    static void rethrowIfFatal(final Error ex)
    {
        if (ex instanceof VirtualMachineError && !(ex instanceof StackOverflowError))
        {
            throw ex;
        }
    }

    /** A bare SASL token (after a SaslHandshake v0): answered with a bare token, or (failed) closed after the delay. */
    private int bareToken(final Connection connection, final SaslAuthenticator sasl, final int start, final int end)
    {
        connection.beginResponse();
        final int responseEnd = sasl.bareToken(connection.in, start, end, 4);
        if (responseEnd == RequestHandler.DEFERRED)
        {
            connection.pendingBodyStart = 4;
            return DEFERRED;
        }
        connection.endResponse(responseEnd);
        return ANSWERED;
    }

    /**
     * The handler of a request of {@code kind}, started at {@code startNs}, returned now; a Fetch is counted now. Not
     * timing ({@link #timing}): nothing is stamped, and {@link #sent} records nothing.
     */
    private void timed(final Connection connection, final int kind, final long startNs)
    {
        final long localNs = timing ? System.nanoTime() : 0;
        if (kind == ApiKeys.FETCH.id || kind == RequestKinds.FETCH_FOLLOWER)
        {
            counters.request(kind);
        }
        if (!timing)
        {
            return;
        }
        connection.timedKind = kind;
        // Kafka reads one request of a connection at a time, the next once the answer before it is sent: a request
        // read with earlier ones (pipelined) is received, as Kafka's clock has it, when the answer before it was sent
        connection.receivedNs = Math.max(connection.readNs, connection.lastSentNs);
        connection.startNs = startNs;
        connection.localNs = localNs;
        connection.readyNs = localNs; // until a deferred answer is ready (resume)
    }

    /** A Fetch whose handler failed is counted all the same, as Kafka counts every request (a consumer's, unless read). */
    private void countFetch(final Connection connection, final boolean uncounted)
    {
        if (uncounted)
        {
            counters.request(RequestKinds.of(ApiKeys.FETCH, connection.followerFetch));
        }
    }

    /** The timed request's answer was written now, if a request is timed: {@link #sent} (no clock read otherwise). */
    private void sentNow(final Connection connection)
    {
        if (connection.timedKind >= 0)
        {
            sent(connection, System.nanoTime());
        }
    }

    /** The timed request's answer was written (or it has none) at {@code sentNs}: its times are recorded. */
    private void sent(final Connection connection, final long sentNs)
    {
        final int kind = connection.timedKind;
        if (kind >= 0)
        {
            connection.timedKind = -1;
            connection.lastSentNs = sentNs;
            times.record(kind, connection.receivedNs, connection.startNs, connection.localNs, connection.readyNs, sentNs);
        }
    }

    /** A defect met while serving {@code connection}: reported (once per kind), and the connection closes. */
    void failed(final Connection connection, final Throwable ex)
    {
        errors.onError(ex);
        connections.close(connection, NetMessages.failed(ex), true);
    }

    /**
     * A connection's work threw {@code ex}: its buffer refused by the JVM's direct memory costs only it (closed, counted,
     * one WARN line: a response that grew its output, review H1); a VirtualMachineError other than a stack overflow is
     * thrown on ({@link #rethrowIfFatal}); any other Error closes the connection, as Kafka's Processor does.
     */
    void failed(final Connection connection, final Error ex)
    {
        if (DirectMemoryShortage.isRefusal(ex))
        {
            connections.closeAfter(connection, DirectMemoryShortage.of((OutOfMemoryError)ex));
            return;
        }
        rethrowIfFatal(ex);
        failed(connection, (Throwable)ex);
    }
}
