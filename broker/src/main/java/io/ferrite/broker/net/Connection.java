package io.ferrite.broker.net;

import io.ferrite.wire.BufferView;
import org.agrona.BufferUtil;
import org.agrona.ExpandableDirectByteBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * One client connection, owned by one network thread. Requests arrive as size-prefixed frames ({@link RequestFrames});
 * as Kafka does, a connection has one request in progress at a time: reading pauses until its
 * response is written, which also keeps responses in request order. A response is a buffer with
 * file regions spliced in (the records of a fetch, sent with {@code transferTo}; {@link Splices}).
 *
 * <p>The input starts small, as does the output, so an idle connection costs about a KiB of buffers: 5 000 idle
 * connections took 72 KiB each when both started at their working sizes ({@code IdleConnectionsTest}).
 *
 * <p>The output grows to the largest response (a fetch's copied records: up to 128 KiB and its headers) and is given
 * back, after a response is written, unless a large response (above half of {@link #KEEP_OUTPUT}) was written less than
 * {@link #KEEP_OUTPUT_NS} before: a connection that fetched once and went quiet (or whose fetches came back empty for
 * that long) holds a KiB again, while one that keeps fetching keeps its buffer (it grows twice, then never: no
 * reallocation per response).
 */
public final class Connection
{
    /** Room for a frame's size and a small request: what a connection that sent nothing holds. */
    static final int SMALL_READ = RequestFrames.SMALL_READ;
    /** The output's first size: most answers to a quiet client (ApiVersions, Metadata of a few topics) fit. */
    static final int INITIAL_OUTPUT = 1024;
    /**
     * An output above this is given back after a response unless the connection is a steady large responder. A
     * response counts as large above half of it: the output grows by at most twice (Agrona: 1.5 times), so a
     * response that does not count cannot grow a given-back output past this bound again (no give-back per response).
     */
    static final int KEEP_OUTPUT = 16 * 1024;
    /** A connection that wrote a large response this recently keeps its output. */
    static final long KEEP_OUTPUT_NS = TimeUnit.SECONDS.toNanos(5);

    public final long id;
    final SocketChannel channel;
    final String remote;
    SelectionKey key;

    // input
    public final ExpandableDirectByteBuffer in = new ExpandableDirectByteBuffer(SMALL_READ);
    /** The frames in {@link #in}. */
    final RequestFrames frames = new RequestFrames(in);
    boolean closed;

    // output: out[0, outLength) with file regions spliced in before out positions (splices)
    public ExpandableDirectByteBuffer out = new ExpandableDirectByteBuffer(INITIAL_OUTPUT);
    private BufferView outView = new BufferView();
    private int outLength;
    private int sent;
    private final Splices splices = new Splices();
    private boolean writing;
    /** When the last large response was written; valid once {@link #wroteLarge}. */
    private long largeWrittenNs;
    private boolean wroteLarge;
    // the write calls of the response being written (its transfers: splices), added to the thread's stats when it is written
    private int writeCalls;
    private final NetworkStats stats;

    // where the current request's client id is in the input (-1 length: null)
    int clientIdOffset;
    int clientIdLength = -1;

    // the request being answered, timed for RequestTimes: System.nanoTime stamps, its kind (-1: none timed)
    /** The last read that brought bytes: when the frames in the input were received, at the latest. */
    long readNs;
    private final boolean stampReads; // readNs stamped: the thread times requests (ferrite.metrics.recording)
    /** When the connection's last timed answer was written (Kafka reads a connection's next request only then). */
    long lastSentNs;
    long receivedNs;
    long startNs;
    long localNs;
    long readyNs;
    int timedKind = -1;
    /** Set by the Fetch handler: the request is a follower's fetch (Kafka's FetchFollower). */
    boolean followerFetch;

    // a request whose response comes later
    PendingResponse pending;
    int pendingFrameSize;
    int pendingBodyStart;

    /** Per-connection state of the API handlers, by API key (created by them on first use). */
    private final Object[] handlerState = new Object[128];

    // security: the listener it came in on; until a SASL connection authenticates, its gate takes every request
    private final Listener listener;
    /** Not null while the connection must authenticate first ({@link SaslAuthenticator}); null once it did, or for PLAINTEXT. */
    RequestHandler gate;
    /** A SASL connection's authenticator, kept after the authentication for a re-authentication (KIP-368); else null. */
    SaslAuthenticator sasl;
    /** When its SASL session ends ({@code connections.max.reauth.ms}; currentTimeMillis); Long.MAX_VALUE: never. */
    long sessionEndMs = Long.MAX_VALUE;
    /** The authenticated principal ({@code User:alice}), or {@code User:ANONYMOUS} (PLAINTEXT). */
    String principal = "User:ANONYMOUS";
    /** The client's address as Kafka's ACLs name hosts ({@code InetAddress.getHostAddress}); made on first use. */
    private String host;
    /** The authorizer's cache of this connection's decisions ({@code acl.Access}), made on first use. */
    private Object decisions;
    /** Its client quotas as last resolved ({@code quota.ClientQuotas}), made once a quota applies to its requests. */
    private Object quotaState;
    /** Until when (currentTimeMillis) a quota mutes it once its response is written ({@link ThrottledConnections}); 0: never. */
    long throttledUntilMs;
    /** The size of the request being handled (its frame, without the size prefix): Kafka's {@code request.sizeInBytes}. */
    int requestBytes;
    /** Set by a response that ends the connection once written (a failed authentication's): why, for the log; else null. */
    String closeAfterResponse;
    /** TLS on this connection's socket (an SSL or SASL_SSL listener's), else null: the socket is read and written directly. */
    TlsChannel tls;
    /** An SSL connection's principal was taken from its handshake. */
    private boolean tlsPrincipalTaken;
    /** When its socket was last ready (System.currentTimeMillis of that select pass), for {@link IdleConnections}. */
    long activeMs;

    Connection(final long id, final SocketChannel channel, final String remote, final NetworkStats stats, final Listener listener,
        final boolean stampReads)
    {
        this.id = id;
        this.stampReads = stampReads;
        this.channel = channel;
        this.remote = remote;
        this.stats = stats;
        this.listener = listener;
    }

    NetworkStats stats()
    {
        return stats;
    }

    /** The listener this connection came in on. */
    public Listener listener()
    {
        return listener;
    }

    /** Who the client is: {@code User:<name>} once authenticated with SASL, {@code User:ANONYMOUS} on a PLAINTEXT listener. */
    public String principal()
    {
        return principal;
    }

    public String remote()
    {
        return remote;
    }

    /** The client's IP address as ACLs name hosts ({@code 127.0.0.1}); "" when the socket no longer knows it. */
    public String host()
    {
        if (host == null)
        {
            final java.net.InetAddress address = channel.socket().getInetAddress();
            host = address == null ? "" : address.getHostAddress();
        }
        return host;
    }

    /** The authorizer's per-connection state (null until it sets one); network thread only. */
    public Object decisions()
    {
        return decisions;
    }

    public void decisions(final Object decisions)
    {
        this.decisions = decisions;
    }

    /** The client quotas' per-connection state (null until they set one); network thread only. */
    public Object quotaState()
    {
        return quotaState;
    }

    public void quotaState(final Object state)
    {
        this.quotaState = state;
    }

    /** A quota's throttle time for this request (KIP-219): once its response is written, nothing is read for that long. */
    public void throttle(final int throttleMs)
    {
        if (throttleMs > 0)
        {
            throttledUntilMs = System.currentTimeMillis() + throttleMs;
        }
    }

    /** The size of the request being handled, without its frame's size prefix. */
    public int requestBytes()
    {
        return requestBytes;
    }

    /** Where the request's client id is in {@link #in} (valid while the request is handled). */
    public int clientIdOffset()
    {
        return clientIdOffset;
    }

    /** The length of the request's client id in {@link #in}, -1 for a null one. */
    public int clientIdLength()
    {
        return clientIdLength;
    }

    /** The client id of the request being handled (allocates: for admin paths). */
    public String clientId()
    {
        return clientIdLength < 0 ? "" : in.getStringWithoutLengthUtf8(clientIdOffset, clientIdLength);
    }

    /** A handler's state for this connection (null until it sets one). */
    public Object state(final int apiKey)
    {
        return handlerState[apiKey];
    }

    public void state(final int apiKey, final Object state)
    {
        handlerState[apiKey] = state;
    }

    /** The request being handled is a fetch from a replica (Kafka counts and times it as {@code FetchFollower}). */
    public void fetchFromFollower()
    {
        followerFetch = true;
    }

    /** The handler answers later: {@code response} is polled until it writes the response. */
    public void defer(final PendingResponse response)
    {
        pending = response;
    }

    public boolean isClosed()
    {
        return closed;
    }

    // ---- input ----

    /** Reads what the socket has; returns -1 at end of stream. */
    int read() throws IOException
    {
        final int n = frames.read(channel, tls);
        if (n > 0)
        {
            readNs = stampReads ? System.nanoTime() : 0;
        }
        if (tls != null && !tlsPrincipalTaken && !tls.handshaking())
        {
            takeTlsPrincipal();
        }
        return n;
    }

    private void takeTlsPrincipal()
    {
        tlsPrincipalTaken = true;
        if (!listener.sasl())
        {
            // Kafka's default principal builder: User:<the certificate's subject>, or ANONYMOUS without a client certificate
            final String peer = tls.peerName();
            principal = peer == null ? "User:ANONYMOUS" : "User:" + peer;
        }
    }

    /** Its TLS handshake (if any) is over and its SASL authentication (if any) done. */
    boolean authenticated()
    {
        return gate == null && (tls == null || tls.established());
    }

    /** TLS holds input the last read had no room for: it is read without waiting for the socket. */
    boolean inputBuffered()
    {
        return tls != null && tls.buffered();
    }

    /** TLS output of its own waits (a handshake's): the socket must be watched for room. */
    boolean transportWantsWrite()
    {
        return tls != null && tls.wantsWrite();
    }

    /** Writes TLS output of its own (a handshake's) and goes on with the handshake: true when none waits. */
    boolean flushTransport() throws IOException
    {
        return tls == null || tls.flushPending();
    }

    // ---- output ----

    /** Starts a response: clears the output and returns where its size prefix goes (0). */
    public int beginResponse()
    {
        outLength = 0;
        sent = 0;
        splices.clear();
        writeCalls = 0;
        return 0;
    }

    /** The bytes of file regions spliced into the response being written so far. */
    public long splicedBytes()
    {
        return splices.bytes();
    }

    /** Records that {@code length} bytes of {@code file} at {@code position} go at {@code outPosition}. */
    public void splice(final int outPosition, final FileChannel file, final long position, final int length)
    {
        splices.add(outPosition, file, position, length);
    }

    /** Ends the response at {@code length} bytes of output: writes the frame size (spliced bytes included). */
    public void endResponse(final int length)
    {
        outLength = length;
        out.putInt(0, (int)(length - 4 + splices.bytes()), BIG_ENDIAN);
        writing = true;
    }

    boolean isWriting()
    {
        return writing;
    }

    /** Writes as much of the response as the socket takes; true when all of it is written. */
    boolean flush() throws IOException
    {
        while (true)
        {
            final int stop = splices.stop(outLength);
            if (sent < stop)
            {
                final ByteBuffer view = outView.of(out, sent, stop - sent);
                sent += tls == null ? channel.write(view) : tls.write(view);
                writeCalls++;
                if (sent < stop)
                {
                    return false;
                }
            }
            if (splices.pending())
            {
                if (!splices.transfer(channel, tls))
                {
                    return false; // the socket is full
                }
                continue;
            }
            if (tls != null && !tls.flushPending())
            {
                return false; // the last record is still being written
            }
            writing = false;
            stats.responded(outLength + splices.bytes(), writeCalls, splices.transferCalls(), splices.count());
            keepOrGiveBackOutput();
            return true;
        }
    }

    /**
     * After a response is written: an output grown above {@link #KEEP_OUTPUT} goes back to its first size unless a
     * large response was written within {@link #KEEP_OUTPUT_NS} before this one (hysteresis: a connection
     * that keeps fetching keeps its buffer; the first large response of a connection gives it back, the second keeps it).
     * The old buffer's direct memory is freed now: nothing refers to it once its response is written (handlers wrap
     * {@link #out} per response).
     */
    private void keepOrGiveBackOutput()
    {
        if (out.capacity() <= KEEP_OUTPUT)
        {
            return;
        }
        final long now = System.nanoTime();
        final boolean steady = wroteLarge && now - largeWrittenNs < KEEP_OUTPUT_NS;
        if (outLength > KEEP_OUTPUT / 2)
        {
            wroteLarge = true;
            largeWrittenNs = now;
        }
        // direct memory used up (null): the connection keeps the buffer it has (tls review 1, H1)
        final ExpandableDirectByteBuffer smaller = steady ? null : DirectBuffers.expandableOrNull(INITIAL_OUTPUT);
        if (smaller != null)
        {
            BufferUtil.free(out.byteBuffer());
            out = smaller;
            outView = new BufferView();
            stats.outputGivenBack();
        }
    }
}
