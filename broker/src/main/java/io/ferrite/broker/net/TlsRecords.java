package io.ferrite.broker.net;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;

/**
 * The record layer under a {@link TlsChannel}: its direct buffers, the engine's {@code wrap} and {@code unwrap} between
 * them, and the socket's reads and writes. The handshake's state and what the connection asks for stay in
 * {@link TlsChannel}. Network thread only.
 *
 * <p>Buffers (direct, owned here), each made when first needed and freed at {@link #free} ({@link DirectBuffers}):
 * {@code netIn} (received, not yet decrypted; write mode) at the first read, {@link #FIRST_READ} bytes, grown to a
 * whole TLS record when one needs it; {@code netOut} (a record wrapped, not yet written; read mode) at the first wrap;
 * {@code appIn} (decrypted, not yet handed to the connection; write mode) at the first application record; from the
 * first spliced file region, {@code fileChunk}: a fetch's records are read from the segment file into it and encrypted
 * from there (no {@code transferTo} on TLS; Kafka reads the file into a buffer too). The last three are a record each
 * (16 KiB and its header). A connection that sent nothing holds none (three, some 50 KB, were made at accept: tls
 * review M4), a cut handshake a KiB or a record's worth, as Kafka's {@code SslTransportLayer} makes its buffers when
 * the handshake starts. A buffer that cannot be had ({@link DirectMemoryShortage}: its network thread's
 * {@link DirectBudget} has no room, or the JDK refused it) closes this connection only.
 */
final class TlsRecords
{
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
    /** {@code netIn} may hold a whole record not yet decrypted (false after the engine asked for more bytes). */
    private boolean netInUnread;

    TlsRecords(final SSLEngine engine, final SocketChannel channel, final DirectBudget budget)
    {
        this.engine = engine;
        this.channel = channel;
        this.budget = budget;
    }

    /** Decrypted or received bytes wait here that the last read had no room for. */
    boolean buffered()
    {
        return appIn.position() > 0 || netInUnread;
    }

    /** {@code netIn} may hold a whole record not yet decrypted. */
    boolean netInUnread()
    {
        return netInUnread;
    }

    /** The engine asked for more bytes: what {@code netIn} holds is not a whole record. */
    void netInIncomplete()
    {
        netInUnread = false;
    }

    /** Wrapped bytes wait in {@code netOut}. */
    boolean outputWaits()
    {
        return netOut.hasRemaining();
    }

    /** Whether {@code netOut} was ever made (a close_notify is sent only by a connection that wrote something). */
    boolean wroteAny()
    {
        return netOut != NONE;
    }

    /** Whether nothing decrypted waits in {@code appIn}. */
    boolean appInEmpty()
    {
        return appIn.position() == 0;
    }

    /** {@code appIn} grown to the session's application buffer size (the engine had no room to decrypt a record into it). */
    void growAppIn() throws DirectMemoryShortage
    {
        appIn = DirectBuffers.grow(budget, appIn, engine.getSession().getApplicationBufferSize());
    }

    /**
     * Wraps what of {@code src} fits one TLS record into {@code netOut}, which must have nothing left to write (made at the
     * first wrap; grown to the session's packet size if the engine asks for more, which the JDK allows after the
     * handshake: tls review L1, where the wrap was tried again without end).
     */
    SSLEngineResult wrap(final ByteBuffer src) throws IOException
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

    /** Decrypts what {@code netIn} holds into {@code appIn}, a record at most. */
    SSLEngineResult unwrap() throws SSLException
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
    int receive() throws IOException
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
    int deliver(final ByteBuffer dst)
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
    boolean flushNet() throws IOException
    {
        if (netOut.hasRemaining())
        {
            channel.write(netOut);
        }
        return !netOut.hasRemaining();
    }

    /**
     * {@code fileChunk} holding the next bytes, a chunk at most, of the {@code length} bytes of {@code file} at
     * {@code position} still to be encrypted: what the last call read and the engine has not taken yet, else a fresh read.
     */
    ByteBuffer fileChunk(final FileChannel file, final long position, final long length) throws IOException
    {
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
        return fileChunk;
    }

    /**
     * Gives every buffer back: nothing refers to them after this (the engine keeps none of the buffers it is given; every
     * use is above), so they are freed now, not when a collection finds them.
     */
    void free()
    {
        netIn = DirectBuffers.free(budget, netIn);
        appIn = DirectBuffers.free(budget, appIn);
        netOut = DirectBuffers.free(budget, netOut);
        fileChunk = DirectBuffers.free(budget, fileChunk);
    }
}
