package io.ferrite.broker.net;

import java.util.concurrent.atomic.AtomicLong;

/**
 * What one network thread's responses cost in system calls, and how often a connection gave its grown output back:
 * counters written by the network thread only (ordered stores, no lock, nothing allocated) and read from elsewhere
 * (tests, metrics). A response's figures are added once it is fully written, so a reader that saw the response's
 * last byte may see them a moment later; the last response's own figures are published with its size last, so a
 * reader that sees the size it expects ({@link #lastResponseBytes}) sees that response's figures.
 */
public final class NetworkStats
{
    private final AtomicLong responses = new AtomicLong();
    private final AtomicLong writes = new AtomicLong();
    private final AtomicLong transfers = new AtomicLong();
    private final AtomicLong splices = new AtomicLong();
    private final AtomicLong outputsGivenBack = new AtomicLong();
    private final AtomicLong outOfDirectMemory = new AtomicLong();
    private final AtomicLong authentications = new AtomicLong();
    private final AtomicLong reauthentications = new AtomicLong();
    private final AtomicLong sessionsEnded = new AtomicLong();
    private long lastWrites;
    private long lastTransfers;
    private long lastSplices;
    private final AtomicLong lastResponseBytes = new AtomicLong(-1);

    void responded(final long frameBytes, final int writeCalls, final int transferCalls, final int splicedRegions)
    {
        lastWrites = writeCalls;
        lastTransfers = transferCalls;
        lastSplices = splicedRegions;
        lastResponseBytes.lazySet(frameBytes); // after the plain stores above: a reader that gets it sees them
        // one writer: a plain read and an ordered store each
        responses.lazySet(responses.get() + 1);
        writes.lazySet(writes.get() + writeCalls);
        transfers.lazySet(transfers.get() + transferCalls);
        splices.lazySet(splices.get() + splicedRegions);
    }

    void outputGivenBack()
    {
        outputsGivenBack.lazySet(outputsGivenBack.get() + 1);
    }

    /** Counts a connection refused at accept or closed because a buffer of it could not be had; returns the count. */
    long outOfDirectMemory()
    {
        final long n = outOfDirectMemory.get() + 1;
        outOfDirectMemory.lazySet(n);
        return n;
    }

    /** Counts a SASL authentication that succeeded: a connection's first, or ({@code again}) a re-authentication. */
    void authenticated(final boolean again)
    {
        final AtomicLong counter = again ? reauthentications : authentications;
        counter.lazySet(counter.get() + 1);
    }

    /** Counts a connection closed because its SASL session ended before it re-authenticated. */
    void sessionEnded()
    {
        sessionsEnded.lazySet(sessionsEnded.get() + 1);
    }

    /** SASL connections that authenticated (their first authentication; re-authentications: {@link #saslReauthentications}). */
    public long saslAuthentications()
    {
        return authentications.get();
    }

    /** Successful SASL re-authentications (KIP-368) of connections that authenticated before. */
    public long saslReauthentications()
    {
        return reauthentications.get();
    }

    /** Connections closed at a request after their SASL session ended ({@code connections.max.reauth.ms}). */
    public long saslSessionsEnded()
    {
        return sessionsEnded.get();
    }

    /** Connections refused at accept or closed because the JVM's direct memory was used up ({@link DirectMemoryShortage}). */
    public long connectionsOutOfDirectMemory()
    {
        return outOfDirectMemory.get();
    }

    /** Responses fully written. */
    public long responses()
    {
        return responses.get();
    }

    /** {@code write} calls on the sockets (each a system call; a gathered response takes one). */
    public long writes()
    {
        return writes.get();
    }

    /** {@code transferTo} calls (each a {@code sendfile}). */
    public long transfers()
    {
        return transfers.get();
    }

    /** Record regions sent from their files rather than copied into the output. */
    public long splices()
    {
        return splices.get();
    }

    /** The size of the last response written (its size prefix included), or -1 before the first. */
    public long lastResponseBytes()
    {
        return lastResponseBytes.get();
    }

    /** The {@code write} calls of the last response: read after {@link #lastResponseBytes}. */
    public long lastWrites()
    {
        return lastWrites;
    }

    /** The {@code transferTo} calls of the last response: read after {@link #lastResponseBytes}. */
    public long lastTransfers()
    {
        return lastTransfers;
    }

    /** The regions the last response sent from their files: read after {@link #lastResponseBytes}. */
    public long lastSplices()
    {
        return lastSplices;
    }

    /** Outputs grown above {@code Connection.KEEP_OUTPUT} and given back after their response. */
    public long outputsGivenBack()
    {
        return outputsGivenBack.get();
    }
}
