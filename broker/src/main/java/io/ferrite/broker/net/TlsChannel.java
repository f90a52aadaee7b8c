package io.ferrite.broker.net;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLPeerUnverifiedException;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.security.Principal;

/**
 * TLS on one connection's socket, driven by its network thread with the JDK's {@link SSLEngine}, non-blocking: what
 * {@link Connection} reads and writes through instead of the socket on an SSL or SASL_SSL listener (Kafka's
 * {@code SslTransportLayer}). Network thread only.
 *
 * <p>Buffers (direct, owned here), each made when first needed and freed at {@link #close} ({@link DirectBuffers}):
 * {@code netIn} (received, not yet decrypted; write mode) at the first read, {@link #FIRST_READ} bytes, grown to a
 * whole TLS record when one needs it; {@code netOut} (a record wrapped, not yet written; read mode) at the first wrap;
 * {@code appIn} (decrypted, not yet handed to the connection; write mode) at the first application record; from the
 * first spliced file region, {@code fileChunk}: a fetch's records are read from the segment file into it and encrypted
 * from there (no {@code transferTo} on TLS; Kafka reads the file into a buffer too). The last three are a record each
 * (16 KiB and its header). A connection that sent nothing holds none (three, some 50 KB, were made at accept: tls
 * review M4), a cut handshake a KiB or a record's worth, as Kafka's {@code SslTransportLayer} makes its buffers when
 * the handshake starts. A buffer that cannot be had ({@link DirectMemoryShortage}: its network thread's
 * {@link DirectBudget} has no room, or the JDK refused it) closes this connection only.
 *
 * <p>The handshake's delegated tasks (certificate checks, key agreement: about a millisecond of CPU once per connection)
 * run here, on the network thread, as Kafka's {@code SslTransportLayer} runs them: an executor would need a hand-back and
 * a wake-up per task, and a connection cannot go on before its task anyway; the thread's other connections wait that
 * long, once per handshake.
 *
 * <p>A handshake that fails (a certificate not trusted, no common protocol, bytes that are not TLS) sends the engine's
 * alert once, best effort, and throws the engine's {@link SSLException}: the connection closes with one log line; its
 * message is the JDK's and carries no key or password.
 */
final class TlsChannel
{
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
    private static final ByteBuffer NONE = DirectBuffers.NONE;
    /** {@code netIn}'s first size: a ClientHello (kafka-clients' and librdkafka's are a few hundred bytes) fits. */
    static final int FIRST_READ = 1024;
    /** A file region is read into the engine this much at a time: one TLS record's plaintext at most. */
    private static final int FILE_CHUNK = 16 * 1024;

    private final SSLEngine engine;
    private final SocketChannel channel;
    /** Its network thread's: every buffer below is taken from it and given back to it (tls review 1, M1). */
    private final DirectBudget budget;
    private ByteBuffer netIn = NONE;
    private ByteBuffer appIn = NONE;
    private ByteBuffer netOut = NONE;
    private ByteBuffer fileChunk = NONE;
    /** The engine's one-element arrays: its two-buffer {@code wrap}/{@code unwrap} would make one per call. */
    private final ByteBuffer[] source = new ByteBuffer[1];
    private final ByteBuffer[] target = new ByteBuffer[1];
    private boolean handshaking = true;
    /** The first handshake is done: another one (a TLS 1.2 renegotiation) is refused, as Kafka 4.4 refuses it. */
    private boolean established;
    /** {@code netIn} may hold a whole record not yet decrypted (false after the engine asked for more bytes). */
    private boolean netInUnread;
    /** {@link #close} gave the buffers back: nothing is read or written any more. */
    private boolean closed;

    TlsChannel(final SSLEngine engine, final SocketChannel channel, final DirectBudget budget) throws SSLException
    {
        this.engine = engine;
        this.channel = channel;
        this.budget = budget;
        engine.beginHandshake(); // no buffer yet: see the class comment
    }

    /** Whether the first handshake is still under way (or a later one: a key update). */
    boolean handshaking()
    {
        return handshaking;
    }

    /** The first handshake is over (the connection's TLS is established; a SASL listener's authentication may not be). */
    boolean established()
    {
        return established;
    }

    /** The client certificate's subject, or null: none was asked for or given. */
    String peerName()
    {
        try
        {
            final Principal peer = engine.getSession().getPeerPrincipal();
            return peer.getName(); // an X500Principal: RFC 2253, as Kafka's default principal builder takes it
        }
        catch (final SSLPeerUnverifiedException ex)
        {
            return null;
        }
    }

    /** Decrypted or received bytes wait here that the last {@link #read} had no room for. */
    boolean buffered()
    {
        return appIn.position() > 0 || netInUnread;
    }

    /** Output of its own waits (handshake messages, a close_notify): the socket must be written when it takes more. */
    boolean wantsWrite()
    {
        return netOut.hasRemaining();
    }

    /**
     * Reads into {@code dst} what the peer sent, decrypted, as far as {@code dst}'s room and the socket allow; drives the
     * handshake first while it is under way.
     *
     * @return the bytes put into {@code dst}, or -1 at the end of the stream (the peer closed, or sent close_notify)
     */
    int read(final ByteBuffer dst) throws IOException
    {
        checkOpen();
        if (handshaking && !handshake())
        {
            return deliver(dst); // early application data the handshake's unwrap met
        }
        int delivered = deliver(dst);
        while (dst.hasRemaining())
        {
            if (netInUnread)
            {
                final SSLEngineResult result = unwrap();
                switch (result.getStatus())
                {
                    case OK:
                        delivered += deliver(dst);
                        if (needsHandshake(result) && !handshake())
                        {
                            return delivered;
                        }
                        continue;
                    case BUFFER_OVERFLOW:
                        if (appIn.position() == 0)
                        {
                            appIn = DirectBuffers.grow(budget, appIn, engine.getSession().getApplicationBufferSize());
                        }
                        delivered += deliver(dst);
                        continue;
                    case CLOSED:
                        return delivered > 0 ? delivered : -1;
                    default: // BUFFER_UNDERFLOW: a record's rest is still to come
                        netInUnread = false;
                        break;
                }
            }
            final int n = receive();
            if (n < 0)
            {
                return delivered > 0 ? delivered : -1;
            }
            if (n == 0)
            {
                break;
            }
        }
        return delivered;
    }

    /**
     * Encrypts and writes what of {@code src} the socket takes, a TLS record at a time.
     *
     * @return the bytes of {@code src} consumed (encrypted: written, or waiting in {@code netOut}); 0 when the socket is full
     */
    int write(final ByteBuffer src) throws IOException
    {
        checkOpen();
        if (handshaking && !handshake())
        {
            return 0;
        }
        int consumed = 0;
        while (src.hasRemaining() && flushNet())
        {
            final SSLEngineResult result = wrap(src);
            if (result.getStatus() == SSLEngineResult.Status.CLOSED)
            {
                throw new EOFException("TLS connection closed");
            }
            consumed += result.bytesConsumed();
            if (needsHandshake(result) && !handshake())
            {
                break;
            }
        }
        flushNet();
        return consumed;
    }

    /**
     * Encrypts and writes what the socket takes of {@code length} bytes of {@code file} at {@code position} (a fetch's
     * records), through {@code fileChunk}: what was read from the file and not yet encrypted stays there for the next call,
     * which must name the same region from where this one's consumed bytes end.
     *
     * @return the region's bytes consumed; 0 when the socket is full
     */
    long writeFile(final FileChannel file, final long position, final long length) throws IOException
    {
        checkOpen();
        if (fileChunk == NONE)
        {
            fileChunk = DirectBuffers.allocate(budget, FILE_CHUNK);
            fileChunk.flip();
        }
        if (!fileChunk.hasRemaining())
        {
            fileChunk.clear();
            fileChunk.limit((int)Math.min(FILE_CHUNK, length));
            while (fileChunk.hasRemaining())
            {
                if (file.read(fileChunk, position + fileChunk.position()) < 0)
                {
                    throw new EOFException("segment file ended inside a fetched region");
                }
            }
            fileChunk.flip();
        }
        return write(fileChunk);
    }

    /** Writes what waits in {@code netOut}, then goes on with a handshake under way: true when nothing of its own waits. */
    boolean flushPending() throws IOException
    {
        checkOpen();
        if (!flushNet())
        {
            return false;
        }
        if (handshaking)
        {
            handshake();
        }
        return !netOut.hasRemaining();
    }

    /**
     * Sends close_notify, best effort (one write, never waiting), unless the handshake never wrote anything (as Kafka,
     * which sends none before its handshake started), and gives the buffers back: the socket is closed after this.
     */
    void close()
    {
        if (closed)
        {
            return;
        }
        try
        {
            engine.closeOutbound();
            if (netOut != NONE && flushNet())
            {
                wrapHandshakeOutput();
                flushNet();
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            // the peer may be gone: the close goes on
        }
        finally
        {
            closed = true;
            // nothing refers to them after this (the engine keeps none of the buffers it is given; every use is above):
            // freed now, not when a collection finds them
            netIn = DirectBuffers.free(budget, netIn);
            appIn = DirectBuffers.free(budget, appIn);
            netOut = DirectBuffers.free(budget, netOut);
            fileChunk = DirectBuffers.free(budget, fileChunk);
        }
    }

    private void checkOpen() throws EOFException
    {
        if (closed)
        {
            throw new EOFException("TLS connection closed");
        }
    }

    /** Drives the handshake as far as the socket allows: true once it is over. */
    private boolean handshake() throws IOException
    {
        try
        {
            while (true)
            {
                switch (engine.getHandshakeStatus())
                {
                    case NEED_TASK:
                        Runnable task;
                        while ((task = engine.getDelegatedTask()) != null)
                        {
                            task.run(); // on this thread: see the class comment
                        }
                        break;
                    case NEED_WRAP:
                        if (!flushNet())
                        {
                            return false;
                        }
                        if (wrapHandshakeOutput().getStatus() == SSLEngineResult.Status.CLOSED && !netOut.hasRemaining())
                        {
                            throw new EOFException("TLS connection closed during the handshake");
                        }
                        if (!flushNet())
                        {
                            return false;
                        }
                        break;
                    case NEED_UNWRAP:
                    case NEED_UNWRAP_AGAIN:
                        if (!handshakeUnwrap())
                        {
                            return false;
                        }
                        break;
                    default: // NOT_HANDSHAKING (FINISHED is only ever a result's)
                        if (engine.isOutboundDone() || engine.isInboundDone())
                        {
                            throw new EOFException("TLS connection closed during the handshake");
                        }
                        handshaking = false;
                        established = true;
                        return true;
                }
            }
        }
        catch (final SSLException ex)
        {
            sendAlert();
            throw ex;
        }
    }

    /** One unwrap of handshake bytes, reading the socket when a record is incomplete: false when it has nothing more now. */
    private boolean handshakeUnwrap() throws IOException
    {
        final SSLEngineResult result = unwrap();
        switch (result.getStatus())
        {
            case BUFFER_UNDERFLOW:
                netInUnread = false;
                final int n = receive();
                if (n < 0)
                {
                    throw new EOFException("closed by the client during the TLS handshake");
                }
                return n > 0;
            case BUFFER_OVERFLOW: // early application data fills appIn: the connection reads it first
                if (appIn.position() == 0)
                {
                    appIn = DirectBuffers.grow(budget, appIn, engine.getSession().getApplicationBufferSize());
                    return true;
                }
                return false;
            case CLOSED:
                throw new EOFException("closed by the client during the TLS handshake");
            default:
                return true;
        }
    }

    /** The engine's alert after a failed handshake, written once if the socket takes it. */
    private void sendAlert()
    {
        try
        {
            if (flushNet())
            {
                wrapHandshakeOutput();
                flushNet();
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            // best effort: the connection closes in any case
        }
    }

    private SSLEngineResult wrapHandshakeOutput() throws IOException
    {
        return wrap(EMPTY);
    }

    /**
     * Wraps what of {@code src} fits one TLS record into {@code netOut}, which must have nothing left to write (made at the
     * first wrap; grown to the session's packet size if the engine asks for more, which the JDK allows after the
     * handshake: tls review L1, where the wrap was tried again without end).
     */
    private SSLEngineResult wrap(final ByteBuffer src) throws IOException
    {
        if (netOut == NONE)
        {
            netOut = DirectBuffers.allocate(budget, engine.getSession().getPacketBufferSize());
        }
        while (true)
        {
            source[0] = src;
            netOut.clear();
            final SSLEngineResult result;
            try
            {
                result = engine.wrap(source, 0, 1, netOut);
            }
            finally
            {
                netOut.flip();
                source[0] = null;
            }
            if (result.getStatus() != SSLEngineResult.Status.BUFFER_OVERFLOW)
            {
                return result;
            }
            final int packet = engine.getSession().getPacketBufferSize();
            if (netOut.capacity() >= packet)
            {
                throw new SSLException("no room to wrap a TLS record in " + netOut.capacity() + " bytes");
            }
            netOut = DirectBuffers.free(budget, netOut); // NONE until the next is made: a failed allocation leaves nothing freed behind
            netOut = DirectBuffers.allocate(budget, packet);
        }
    }

    private SSLEngineResult unwrap() throws SSLException
    {
        target[0] = appIn;
        netIn.flip();
        try
        {
            final SSLEngineResult result = engine.unwrap(netIn, target, 0, 1);
            netInUnread = netIn.hasRemaining() && result.getStatus() != SSLEngineResult.Status.BUFFER_UNDERFLOW;
            return result;
        }
        finally
        {
            netIn.compact();
            target[0] = null;
        }
    }

    /** Reads the socket into {@code netIn} (grown to the session's packet size if a record needs more room). */
    private int receive() throws IOException
    {
        if (netIn == NONE)
        {
            netIn = DirectBuffers.allocate(budget, FIRST_READ);
        }
        else if (!netIn.hasRemaining())
        {
            netIn = DirectBuffers.grow(budget, netIn, engine.getSession().getPacketBufferSize());
        }
        final int n = channel.read(netIn);
        if (n > 0)
        {
            netInUnread = true;
        }
        return n;
    }

    /** Moves decrypted bytes to {@code dst}, as many as it has room for. */
    private int deliver(final ByteBuffer dst)
    {
        if (appIn.position() == 0)
        {
            return 0;
        }
        appIn.flip();
        final int n = Math.min(appIn.remaining(), dst.remaining());
        final int limit = appIn.limit();
        appIn.limit(appIn.position() + n);
        dst.put(appIn);
        appIn.limit(limit);
        appIn.compact();
        return n;
    }

    /** Writes {@code netOut}: true when all of it is written. */
    private boolean flushNet() throws IOException
    {
        if (netOut.hasRemaining())
        {
            channel.write(netOut);
        }
        return !netOut.hasRemaining();
    }

    private boolean needsHandshake(final SSLEngineResult result) throws SSLHandshakeException
    {
        final SSLEngineResult.HandshakeStatus status = result.getHandshakeStatus();
        if (status != SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING && status != SSLEngineResult.HandshakeStatus.FINISHED)
        {
            if (established && result.getStatus() == SSLEngineResult.Status.OK && !"TLSv1.3".equals(engine.getSession().getProtocol()))
            {
                // Kafka's SslTransportLayer closes the connection here; TLS 1.3's post-handshake messages (a key update,
                // a session ticket) are not a handshake of their own and go on below
                throw new SSLHandshakeException("Renegotiation is not supported");
            }
            handshaking = true;
        }
        return handshaking;
    }
}
