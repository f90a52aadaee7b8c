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
 * <p>Its buffers, the engine's {@code wrap} and {@code unwrap} and the socket's reads and writes are its record layer's,
 * {@link TlsRecords}; here: the handshake, and what the connection reads and writes.
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

    private final SSLEngine engine;
    private final TlsRecords records;
    private boolean handshaking = true;
    /** The first handshake is done: another one (a TLS 1.2 renegotiation) is refused, as Kafka 4.4 refuses it. */
    private boolean established;
    /** {@link #close} gave the buffers back: nothing is read or written any more. */
    private boolean closed;

    TlsChannel(final SSLEngine engine, final SocketChannel channel, final DirectBudget budget) throws SSLException
    {
        this.engine = engine;
        this.records = new TlsRecords(engine, channel, budget);
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
        return records.buffered();
    }

    /** Output of its own waits (handshake messages, a close_notify): the socket must be written when it takes more. */
    boolean wantsWrite()
    {
        return records.outputWaits();
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
            return records.deliver(dst); // early application data the handshake's unwrap met
        }
        int delivered = records.deliver(dst);
        while (dst.hasRemaining())
        {
            if (records.netInUnread())
            {
                final SSLEngineResult result = records.unwrap();
                switch (result.getStatus())
                {
                    case OK:
                        delivered += records.deliver(dst);
                        if (needsHandshake(result) && !handshake())
                        {
                            return delivered;
                        }
                        continue;
                    case BUFFER_OVERFLOW:
                        if (records.appInEmpty())
                        {
                            records.growAppIn();
                        }
                        delivered += records.deliver(dst);
                        continue;
                    case CLOSED:
                        return delivered > 0 ? delivered : -1;
                    default: // BUFFER_UNDERFLOW: a record's rest is still to come
                        records.netInIncomplete();
                        break;
                }
            }
            final int n = records.receive();
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
        while (src.hasRemaining() && records.flushNet())
        {
            final SSLEngineResult result = records.wrap(src);
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
        records.flushNet();
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
        return write(records.fileChunk(file, position, length));
    }

    /** Writes what waits in {@code netOut}, then goes on with a handshake under way: true when nothing of its own waits. */
    boolean flushPending() throws IOException
    {
        checkOpen();
        if (!records.flushNet())
        {
            return false;
        }
        if (handshaking)
        {
            handshake();
        }
        return !records.outputWaits();
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
            if (records.wroteAny() && records.flushNet())
            {
                wrapHandshakeOutput();
                records.flushNet();
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            // the peer may be gone: the close goes on
        }
        finally
        {
            closed = true;
            records.free();
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
                        if (!records.flushNet())
                        {
                            return false;
                        }
                        if (wrapHandshakeOutput().getStatus() == SSLEngineResult.Status.CLOSED && !records.outputWaits())
                        {
                            throw new EOFException("TLS connection closed during the handshake");
                        }
                        if (!records.flushNet())
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
        final SSLEngineResult result = records.unwrap();
        switch (result.getStatus())
        {
            case BUFFER_UNDERFLOW:
                records.netInIncomplete();
                final int n = records.receive();
                if (n < 0)
                {
                    throw new EOFException("closed by the client during the TLS handshake");
                }
                return n > 0;
            case BUFFER_OVERFLOW: // early application data fills appIn: the connection reads it first
                if (records.appInEmpty())
                {
                    records.growAppIn();
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
            if (records.flushNet())
            {
                wrapHandshakeOutput();
                records.flushNet();
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            // best effort: the connection closes in any case
        }
    }

    private SSLEngineResult wrapHandshakeOutput() throws IOException
    {
        return records.wrap(EMPTY);
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
